"""Masked loads and stores of vectors wider than the ISA's registers (int64/float64 at the
kernel's float32 width: ``<8 x i64>`` on AVX2, ``<16 x i64>`` on AVX-512).

LLVM 22 miscompiled such a load once its type legalizer split it on AVX2: with the select of
a guard folded into the masked load, a half whose mask was all false became a plain load, so
``constant_pad_nd`` of int64 wrote memory contents into the padding (seed-9 program 1031;
found on an Intel host).  The code generator now emits them one register at a time."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from ziggurat.backends.cpu.isa import Isa, host_supports

VECTOR_ISAS = [isa.value for isa in (Isa.AVX512, Isa.AVX2) if host_supports(isa)]
PADS = [(0, 3, -3, -8, 2, 0), (1, 2, 0, 0, -1, 1), (0, 5, 2, -2, 0, 0), (3, 0, -1, 4, 1, 1)]


class Pad(torch.nn.Module):
    def __init__(self, pad: tuple[int, ...]) -> None:
        super().__init__()
        self.pad = pad

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.constant_pad_nd(x, self.pad, 0)


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.float64, torch.int32, torch.float32])
@pytest.mark.parametrize("pad", PADS)
def test_constant_pad_of_wide_elements_matches_eager(isa: str, dtype: torch.dtype, pad: tuple[int, ...]) -> None:
    x = torch.randint(-9, 10, (2, 15, 2)).to(dtype)
    model = Pad(pad)
    compiled = ziggurat.compile(model, (x,), "cpu", frontend="torchscript", isa=isa, threads=1)
    for _ in range(3):  # the garbage came from whatever memory lay past the input
        y = torch.randint(-9, 10, (2, 15, 2)).to(dtype)
        assert torch.equal(compiled(y), model(y))
