"""Small models shared by the importer, pass and backend tests."""

from __future__ import annotations

import torch
from torch import nn


def seeded(seed: int = 0) -> None:
    torch.manual_seed(seed)


def randomize_bn(module: nn.Module) -> nn.Module:
    """Give every batch norm non-trivial statistics and affine parameters."""
    gen = torch.Generator().manual_seed(1)
    for m in module.modules():
        if isinstance(m, nn.BatchNorm1d | nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)  # pyright: ignore
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)  # pyright: ignore
            m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
    return module.eval()


class MLP(nn.Module):
    def __init__(self, sizes: tuple[int, ...] = (32, 64, 48, 10)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class ConvBNNet(nn.Module):
    """conv-bn-relu, a residual block (conv-bn-relu-conv-bn + add, relu), pooling, linear head."""

    def __init__(self, channels: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn0(self.stem(x)))
        r = torch.relu(self.bn1(self.conv1(y)))
        y = torch.relu(self.bn2(self.conv2(r)) + y)
        y = self.pool(y)
        y = nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(y)


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1x1 expand + bn + relu6, depthwise 3x3 + bn + relu6, 1x1 project + bn, residual."""

    def __init__(self, channels: int = 8, expand: int = 4) -> None:
        super().__init__()
        hidden = channels * expand
        self.block = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x)


class ConvBNSiLUStack(nn.Module):
    def __init__(self, channels: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                          nn.BatchNorm2d(channels), nn.SiLU())
            for _ in range(depth)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem(x)
        for block in self.blocks:
            y = y + block(y)
        return y


class TwoHeads(nn.Module):
    """Tuple outputs, one of them a constant."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(6, 4)
        self.b = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = torch.tanh(self.a(x))
        return h, torch.sigmoid(self.b(y)) * 2.0, h.sum(dim=-1, keepdim=True)


def transformer_layer() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.1,
                                      batch_first=True).eval()
