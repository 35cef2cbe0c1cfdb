"""bf16 and float16 ops that only move or select elements run natively and copy the 16 bits
exactly (NaN payloads included); a float32 op with a bf16 or float16 operand widens only that
operand; a 16-bit constant is rounded as torch rounds a Scalar."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import ziggurat


class Moves(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = x.view(3, 5, 7).transpose(0, 2).permute(1, 0, 2)
        b = a.select(1, 2).unsqueeze(0).squeeze(0)
        c = torch.cat([b, b], 1)
        d = c.t().contiguous().reshape(-1)[2:40:3]
        return d, y + x, torch.where(m, y, x), y * x, y - x, y / (x + 3)


class MoreMoves(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        t = x[:104].view(8, 13)
        a, b = t.unbind(1)[2], t.split([5, 8], 1)[1]
        c, d = t.chunk(3, 0)[2], torch.stack([t, t.flip(1)], 2)
        e = torch.roll(t, 3, 1).repeat(2, 1)
        f = nn.functional.pad(t, (1, 2), value=0.3)
        return a, b, c, d, e, f


#: a constant near the type's largest finite value that rounds to it (eager refuses a float16
#: fill past 65504)
_LARGEST_ROUNDING_DOWN = {torch.bfloat16: 3e38, torch.float16: 65503.0}


class Selects(nn.Module):
    def forward(self, x: torch.Tensor, z: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.where(m, x, z), x.masked_fill(m, float("nan")), x.masked_fill(m, 0.1),
                x.masked_fill(m, _LARGEST_ROUNDING_DOWN[x.dtype]), x.masked_fill(m, float("-inf")))


HALF_FLOATS = [torch.bfloat16, torch.float16]


def _inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(105, generator=g).to(dtype)
    x[3], x[7] = float("nan"), float("inf")
    x[11] = torch.tensor(-0.0)
    z = torch.randn(105, generator=g).to(dtype)
    z[5] = float("nan")
    y = torch.randn(105, generator=g)
    m = torch.rand(105, generator=g) > 0.5
    return x, y, z, m


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int16) if t.dtype in HALF_FLOATS else t.view(torch.int32)


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_moves_and_promotions_are_bit_exact(frontend: str, dtype: torch.dtype) -> None:
    x, y, _, m = _inputs(dtype)
    compiled = ziggurat.compile(Moves(), (x, y, m), backend="cpu", frontend=frontend)
    if frontend == "export":
        assert compiled.report.unsupported == [], compiled.report.unsupported
    for got, ref in zip(compiled(x, y, m), Moves()(x, y, m), strict=True):
        assert got.dtype == ref.dtype
        assert torch.equal(_bits(got), _bits(ref))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_more_moves_are_bit_exact(frontend: str, dtype: torch.dtype) -> None:
    x = _inputs(dtype)[0]
    compiled = ziggurat.compile(MoreMoves(), (x,), backend="cpu", frontend=frontend)
    assert compiled.report.unsupported == [], compiled.report.unsupported
    for got, ref in zip(compiled(x), MoreMoves()(x), strict=True):
        assert got.dtype == dtype and got.shape == ref.shape
        assert torch.equal(_bits(got), _bits(ref))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_selects_copy_bits_and_round_constants_as_torch(frontend: str, dtype: torch.dtype) -> None:
    x, _, z, m = _inputs(dtype)
    compiled = ziggurat.compile(Selects(), (x, z, m), backend="cpu", frontend=frontend)
    assert compiled.report.unsupported == [], compiled.report.unsupported
    for got, ref in zip(compiled(x, z, m), Selects()(x, z, m), strict=True):
        assert got.dtype == dtype
        assert torch.equal(_bits(got), _bits(ref))


class TensorBounds(nn.Module):
    def forward(self, x: torch.Tensor, z: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.clamp(x, z, z + 1), torch.clamp_min(x, z), torch.clamp_max(x, z),
                x.masked_fill(m, z[0]))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_tensor_bounds_and_tensor_fill(frontend: str, dtype: torch.dtype) -> None:
    """clamp with tensor bounds (widened: it selects among bf16 values, so exact) and
    masked_fill with a 0-d tensor value (a select of bits), found by the bf16 OpInfo sweep."""
    x, _, z, m = _inputs(dtype)
    compiled = ziggurat.compile(TensorBounds(), (x, z, m), backend="cpu", frontend=frontend)
    assert compiled.report.unsupported == [], compiled.report.unsupported
    for got, ref in zip(compiled(x, z, m), TensorBounds()(x, z, m), strict=True):
        assert got.dtype == dtype
        # NaN payloads may differ where clamp computes in float32 (as eager's vector path does)
        same = (got.view(torch.int16) == ref.view(torch.int16)) | (got.isnan() & ref.isnan())
        assert bool(same.all())
