"""MLP 784-1024-1024-10 with ReLU."""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, sizes: tuple[int, ...] = (784, 1024, 1024, 10)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(fan_in, fan_out))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)
