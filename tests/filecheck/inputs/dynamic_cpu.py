"""Print the loop level of a dynamic-shape compile on the CPU backend: one build for the
batch range, made from lowerings at sampled sizes (an element-wise kernel with a broadcast
operand and a row reduction into a residual)."""

from __future__ import annotations

import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import RANGE_BUILD


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * 2 + y) - x.sum(-1, keepdim=True)


compiled = ziggurat.compile(Model(), (torch.randn(5, 19), torch.randn(19)), "cpu", isa="avx2", threads=2,
                            dynamic_shapes=({0: Dim("batch", min=1, max=40)}, None))
print(f"// {RANGE_BUILD}: {compiled.report.stats[RANGE_BUILD]}")
print(compiled.ir["loop"])
