"""The built-in example model of ``make demo``: conv/bn/relu, a residual add, pooling, a linear head."""

from __future__ import annotations

import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, channels: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn0(self.stem(x)))
        r = torch.relu(self.bn1(self.conv1(y)))
        y = torch.relu(self.bn2(self.conv2(r)) + y)  # residual add, then relu
        y = self.pool(y)
        y = nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(y)


def build(seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The model (eval mode, non-trivial batch-norm statistics) and an example input."""
    torch.manual_seed(seed)
    model = SmallCNN()
    gen = torch.Generator().manual_seed(seed + 1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)  # pyright: ignore
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)  # pyright: ignore
    return model.eval(), (torch.randn(1, 3, 32, 32),)
