"""Conv-BN-SiLU residual stack (a YOLO/CSP-style backbone without the split/concat)."""

from __future__ import annotations

import torch
from torch import nn


class ConvBNSiLU(nn.Sequential):
    def __init__(self, cin: int, cout: int, kernel: int = 3, stride: int = 1) -> None:
        super().__init__(
            nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, bias=False),
            nn.BatchNorm2d(cout),
            nn.SiLU(inplace=True),
        )


class ResidualBlock(nn.Module):
    """1x1 squeeze to c/2, 3x3 back to c, plus identity."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.cv1 = ConvBNSiLU(channels, channels // 2, kernel=1)
        self.cv2 = ConvBNSiLU(channels // 2, channels, kernel=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.cv2(self.cv1(x))


class ConvStack(nn.Module):
    """Stem (stride 2), then per stage a stride-2 ConvBNSiLU followed by residual blocks."""

    def __init__(self, in_channels: int = 3, stem: int = 32, stages: tuple[int, ...] = (64, 128, 256), blocks: int = 2) -> None:
        super().__init__()
        layers: list[nn.Module] = [ConvBNSiLU(in_channels, stem, stride=2)]
        cin = stem
        for cout in stages:
            layers.append(ConvBNSiLU(cin, cout, stride=2))
            layers += [ResidualBlock(cout) for _ in range(blocks)]
            cin = cout
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)
