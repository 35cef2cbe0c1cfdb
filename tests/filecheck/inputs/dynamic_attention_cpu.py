"""Print the loop level of a dynamic-shape compile on the CPU backend over a batch and a
sequence: one range build, its sizes polynomials of the two symbols (``batch * seq`` rows of
the linear layers, ``seq * seq`` strides of attention's scores), attention's GEMMs with their
``n``, ``k``, leading dims and batch strides at run time, and the sequence's served floor."""

from __future__ import annotations

import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import RANGE_BUILD


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.out = torch.nn.Linear(32, 96), torch.nn.Linear(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 4, 8).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) * 0.25, -1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, 32))


torch.manual_seed(0)
compiled = ziggurat.compile(Attention().eval(), (torch.randn(3, 20, 32),), "cpu", isa="avx2", threads=2,
                            dynamic_shapes=({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=64)},))
print(f"// {RANGE_BUILD}: {compiled.report.stats[RANGE_BUILD]}")
print(compiled.ir["loop"])
