"""Saves a small conv/bn/relu/residual/pool/linear model with torch.jit.save (for lit tests)."""
import sys

import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        y = nn.functional.adaptive_avg_pool2d(y + y, 1).flatten(1)
        return self.fc(y)


torch.manual_seed(0)
torch.jit.save(torch.jit.script(SmallCNN().eval()), sys.argv[1])
