"""Casts between float32 and float16 run natively (``codegen/f16.py``), bit for bit as eager.

float16 is stored as its bits. f16 -> f32 is exact: every one of the 65,536 halves, a NaN quieted
with its payload kept as eager's vectorized conversion (``vcvtph2ps``) does (eager's scalar
loop tail gives ``0x7FFFFFFF`` for a signaling NaN instead, so the expected values here come
from a conversion padded to whole vectors). f32 -> f16 rounds to nearest even: every half's rounding boundaries (the midpoints
between neighbours, one float32 ulp either side of them), overflow to infinity, subnormal
results, NaNs (eager's ``sign | 0x7E00 | payload >> 13``), and random bit patterns. Sizes with
vector tails on each ISA; the casts must be native (no torch fallback).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.cpu_backend.conftest import compile_cpu, host_isas

_SPECIAL_BITS = [
    0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000,  # largest half, just below/at the tie to infinity
    0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0x7FA00000, 0x7FFFFFFF, 0xFFFFFFFF,  # inf, NaN
    0x33000000, 0x33000001, 0x33800000, 0x337FFFFF, 0x387FC000, 0x38800000,  # subnormal halves, ties, smallest normal
    0x00000001, 0x807FFFFF, 0x80000000, 0x00000000,  # float32 subnormals, zeros
]


def _f32(bits: torch.Tensor) -> torch.Tensor:
    return bits.to(torch.int64).to(torch.int32).view(torch.float32)


def _boundaries() -> torch.Tensor:
    """Every positive finite half's midpoint to its successor, and one float32 ulp either side,
    with both signs."""
    halves = torch.arange(0, 0x7C00, dtype=torch.int32).to(torch.int16).view(torch.float16).float()
    upper = torch.arange(1, 0x7C01, dtype=torch.int32).to(torch.int16).view(torch.float16).float()
    mid = (halves.double() + upper.double()) / 2  # exact in float32 for every half but the last
    mid = mid.float()
    around = torch.cat([mid, torch.nextafter(mid, torch.tensor(0.0)), torch.nextafter(mid, torch.tensor(float("inf")))])
    return torch.cat([around, -around])


class Casts(nn.Module):
    def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.to(torch.float16), h.to(torch.float32)


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int16) if t.dtype == torch.float16 else t.view(torch.int32)


def _check(isa: str, x: torch.Tensor, h: torch.Tensor) -> None:
    model = Casts()
    compiled = compile_cpu(model, (x, h), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    pad = 64 - x.numel() % 64  # eager converts every element in its vector loop, none in its tail
    padded = model(torch.cat([x, x.new_zeros(pad)]), torch.cat([h, h.new_zeros(pad)]))
    for got, expected in zip(compiled(x, h), (t[: x.numel()] for t in padded), strict=True):
        assert got.dtype == expected.dtype
        mismatch = (_bits(got) != _bits(expected)).nonzero().flatten()
        assert mismatch.numel() == 0, [(hex(int(_bits(x)[i]) & 0xFFFFFFFF)) for i in mismatch[:5]] \
            if got.dtype == torch.float16 else [hex(int(_bits(h)[i]) & 0xFFFF) for i in mismatch[:5]]


@pytest.mark.parametrize("isa", host_isas())
def test_every_half_and_every_rounding_boundary(isa: str) -> None:
    x = torch.cat([_f32(torch.tensor(_SPECIAL_BITS)), _boundaries()])
    every_half = torch.arange(-0x8000, 0x8000, dtype=torch.int32).to(torch.int16).view(torch.float16)
    h = every_half.repeat(x.numel() // every_half.numel() + 1)[: x.numel()]
    _check(isa, x, h)


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 100])
@pytest.mark.parametrize("isa", host_isas())
def test_random_bits_and_tails(isa: str, n: int) -> None:
    g = torch.Generator().manual_seed(n)
    random_bits = torch.randint(-(2**31), 2**31, (n,), generator=g, dtype=torch.int64)
    x = torch.cat([_f32(random_bits), torch.randn(n, generator=g) * 1e4, torch.randn(n, generator=g) * 1e-6])
    h = torch.randint(-(2**15), 2**15, (x.numel(),), generator=g, dtype=torch.int32).to(torch.int16).view(torch.float16)
    _check(isa, x, h)
