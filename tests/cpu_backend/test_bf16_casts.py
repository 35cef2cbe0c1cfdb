"""Casts between float32 and bfloat16 run natively (``codegen/bf16.py``), bit for bit as eager.

bf16 is stored as its bits; f32 -> bf16 rounds to nearest even (ties, the largest finite
values rounding to infinity, subnormals), a NaN becomes eager's ``0xFFFF``; bf16 -> f32 is
exact. Sizes with vector tails on each ISA; the casts must be native (no torch fallback).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.cpu_backend.conftest import compile_cpu, host_isas

_SPECIAL_BITS = [
    0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F807FFF,  # ties to even (down, up), just above/below a tie
    0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF,  # to infinity, tie to infinity, largest bf16
    0xFF800000, 0x7F800000, 0x7FC00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F800001,  # infinities, NaNs
    0x00000001, 0x00008000, 0x00018000, 0x807FFFFF, 0x80000000, 0x00000000,  # subnormals, zeros
]


def _specials() -> torch.Tensor:
    return torch.tensor(_SPECIAL_BITS, dtype=torch.int64).to(torch.int32).view(torch.float32)


class Casts(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        down = x.to(torch.bfloat16)
        return down, down.to(torch.float32) * 2, y.float() + 1


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int16) if t.dtype == torch.bfloat16 else t.view(torch.int32)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100])
@pytest.mark.parametrize("isa", host_isas())
def test_f32_bf16_casts_bit_exact(isa: str, n: int) -> None:
    g = torch.Generator().manual_seed(n)
    x = torch.cat([_specials(), torch.randn(n, generator=g) * 1e3, torch.randn(n, generator=g) * 1e-39])
    y = (torch.randn(x.numel(), generator=g) * 50).to(torch.bfloat16)
    model = Casts()
    compiled = compile_cpu(model, (x, y), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    for got, expected in zip(compiled(x, y), model(x, y), strict=True):
        assert got.dtype == expected.dtype
        assert torch.equal(_bits(got), _bits(expected))
