"""Ties of -0.0 and +0.0 in max pooling, ``max(dim)``/``min(dim)`` and ``clamp`` with number
bounds, bit for bit against eager, on every ISA of the host.

Eager's step is ``val > max || isnan(val)``: NaN sticks and a tie keeps the running value, so
of ``-0.0`` and ``+0.0`` the first one read wins.  The loops took ``llvm.maximum`` (``+0 > -0``)
and returned ``+0.0`` where eager returns ``-0.0`` (1,857 of 3,800 pooled values here);
``1 / y`` after the pool then changed sign.  Eager's own step is also the cheaper one: the
3x3 pool of ResNet's stem (64x112x112, bf16) 0.66 -> 0.30 ms.

``clamp(x, min=lo)`` (and ``clip``) is eager's ``x < lo ? lo : x`` (NaN stays, a tie keeps
``x``): it was ``llvm.maximum`` too, so ``clamp(-0.0, min=0.0)`` gave +0.0.  (``clip`` was
imported through the ``torch.operator`` escape hatch, so the bf16 widening missed it and it ran
in torch; it is a typed op now.)  (With tensor bounds, and in
``torch.maximum``, eager's vector loop returns the second operand of a tie and its scalar tail
the first, so no answer is eager's there.)
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu, host_isas


class Pools(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return F.max_pool2d(x, 3, 2, 1), F.max_pool2d(-x, 2), x.max(dim=1).values, x.min(dim=2).values


def _signed_zeros(dtype: torch.dtype) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    x = torch.zeros(2, 20, 9, 37)
    x = torch.where(torch.rand(x.shape, generator=g) < 0.5, -x, x)  # -0.0 and +0.0 at random
    x[0, 0, 0, 5] = float("nan")
    x[1, 3, 4, 36] = float("nan")
    x[1, 2, :, :3] = float("-inf")
    x[0, 4, 2:5, 6:9] = 1.5
    return x.to(dtype)


def _same_bits_as_eager(model: torch.nn.Module, x: torch.Tensor, isa: str) -> None:
    """Every output of the compiled ``model`` has eager's bits (any NaN for a NaN)."""
    compiled = compile_cpu(model, (x,), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    bits = torch.int16 if x.dtype == torch.bfloat16 else torch.int32
    for i, (got, ref) in enumerate(zip(compiled(x), model(x), strict=True)):
        nan = got.isnan() & ref.isnan()
        assert torch.equal(got.isnan(), ref.isnan()), i
        differ = int(((got.view(bits) != ref.view(bits)) & ~nan).sum())
        assert differ == 0, f"output {i}: {differ} of {got.numel()} values differ from eager in their bits"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("isa", host_isas())
def test_ties_of_signed_zeros_keep_the_first(isa: str, dtype: torch.dtype) -> None:
    x = _signed_zeros(dtype)
    _same_bits_as_eager(Pools(), x, isa)


class Clamps(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.clamp(x, min=0.0), torch.clamp(x, max=-0.0), torch.clamp(x, -0.0, 0.0), x.clamp_min(0.0),
                x.clamp_max(0.0), torch.clamp(x, min=float("nan")), torch.clip(x, max=0.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("isa", host_isas())
def test_clamp_by_a_number_keeps_x_on_a_tie(isa: str, dtype: torch.dtype) -> None:
    x = _signed_zeros(dtype)
    x[0, 1, 1, :4] = torch.tensor([float("inf"), float("-inf"), 2.0, -2.0]).to(dtype)
    _same_bits_as_eager(Clamps(), x, isa)
