"""Print the torch level of a dynamic-shape compile (a linear, a reshape by the batch size,
an add) and, with ``--at N``, the level of its specialization at batch N (the per-size build the
CPU backend makes)."""

from __future__ import annotations

import sys

import torch
from torch.export import Dim

import ziggurat


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.linear(x))
        return y.reshape(y.shape[0], -1) + 1.0


torch.manual_seed(0)
compiled = ziggurat.compile(Model().eval(), (torch.randn(2, 5, 4),), "reference",
                            dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
if "--at" in sys.argv:
    n = int(sys.argv[sys.argv.index("--at") + 1])
    compiled.range_build = None  # the reference backend's one build for the range: build per size instead
    print(compiled.specialization([[n, 5, 4]]).ir["torch"])
else:
    print(compiled.ir["torch"])
