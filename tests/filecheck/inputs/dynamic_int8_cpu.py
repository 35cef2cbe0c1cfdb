"""Print the loop level of a dynamic-shape compile of PT2E-quantized linears on the CPU
backend: one range build whose int8 GEMMs take their rows (batch * seq) at run time."""

from __future__ import annotations

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import RANGE_BUILD

qd = torch.ops.quantized_decomposed


def pair(x: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    q = qd.quantize_per_tensor(x, scale, zero_point, 0, 255, torch.uint8)
    return qd.dequantize_per_tensor(q, scale, zero_point, 0, 255, torch.uint8)


class Model(torch.nn.Module):
    w1: torch.Tensor
    w2: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.register_buffer("w1", torch.randint(-128, 128, (48, 40), dtype=torch.int8, generator=g))
        self.register_buffer("w2", torch.randint(-128, 128, (24, 48), dtype=torch.int8, generator=g))

    def weight(self, w: torch.Tensor) -> torch.Tensor:
        n = w.shape[0]
        return qd.dequantize_per_channel(w, torch.full((n,), 0.002), torch.zeros(n, dtype=torch.int64), 0, -128, 127,
                                         torch.int8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = pair(torch.relu(torch.nn.functional.linear(pair(x, 0.03, 128), self.weight(self.w1))), 0.02, 0)
        return torch.nn.functional.linear(y, self.weight(self.w2))


compiled = ziggurat.compile(Model(), (torch.randn(3, 7, 40),), "cpu", isa="avx512", threads=2,
                            dynamic_shapes=({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=64)},))
print(f"// {RANGE_BUILD}: {compiled.report.stats[RANGE_BUILD]}")
print(compiled.ir["loop"])
