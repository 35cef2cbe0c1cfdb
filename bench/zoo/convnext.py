"""ConvNeXt blocks: depthwise 7x7 -> channels-last LayerNorm -> pointwise MLP with GELU -> layer scale."""

from __future__ import annotations

import torch
from torch import nn


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int, layer_scale: float = 0.5) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        # ConvNeXt initialises layer scale at 1e-6; a trained net has O(0.1..1) values, and a
        # near-zero scale would hide any error inside the block behind the residual.
        self.gamma = nn.Parameter(layer_scale * (1.0 + 0.2 * torch.randn(dim)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)  # NCHW -> NHWC
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXtStage(nn.Module):
    def __init__(self, dim: int = 96, depth: int = 3) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ConvNeXtBlock(dim) for _ in range(depth)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)
