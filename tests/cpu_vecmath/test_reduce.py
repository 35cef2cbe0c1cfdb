"""Horizontal reductions of one register: sums, NaN-propagating max/min (torch.max semantics)."""

from __future__ import annotations

import math

import pytest
import torch

from .accuracy import reduction_kernels
from .harness import Kernels

TARGETS = ["avx512", "avx2", "scalar"]


@pytest.fixture(scope="module", params=TARGETS)
def kr(request: pytest.FixtureRequest) -> Kernels:
    return reduction_kernels(request.param)


def _vectors(w: int, n: int = 200) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    return [torch.randn(w, generator=g) * 10 ** torch.randint(-3, 4, (1,), generator=g).item() for _ in range(n)]


def test_reduce_add_close_to_exact_sum(kr: Kernels) -> None:
    for v in _vectors(kr.target.width):
        got = kr.reduce("reduce_add", v)
        exact = float(v.double().sum())
        bound = 2.0 ** -23 * kr.target.width * float(v.double().abs().sum())
        assert abs(got - exact) <= bound


def test_reduce_add_without_reassoc_is_sequential(kr: Kernels) -> None:
    for v in _vectors(kr.target.width, 50):
        acc = torch.tensor(-0.0)
        for e in v:
            acc = acc + e  # float32 additions in lane order
        assert kr.reduce("reduce_add_seq", v) == acc.item()


def test_reduce_add_of_negative_zeros_is_negative_zero(kr: Kernels) -> None:
    got = kr.reduce("reduce_add", torch.full((kr.target.width,), -0.0))
    assert got == 0.0 and math.copysign(1.0, got) == -1.0


@pytest.mark.parametrize("op", ["max", "min"])
def test_minmax_match_torch_and_propagate_nan(kr: Kernels, op: str) -> None:
    w = kr.target.width
    for v in _vectors(w, 50):
        assert kr.reduce(f"reduce_{op}", v) == getattr(v, op)().item()
        assert kr.reduce(f"reduce_{op}_nonan", v) == getattr(v, op)().item()
    for lane in range(w):
        v = torch.arange(w, dtype=torch.float32)
        v[lane] = math.nan
        assert math.isnan(kr.reduce(f"reduce_{op}", v))  # torch.max/min propagate NaN
        assert math.isnan(getattr(v, op)().item())
        if w > 1:  # maxNum flavour ignores the NaN
            assert kr.reduce(f"reduce_{op}_nonan", v) == getattr(v[~v.isnan()], op)().item()


def test_max_orders_signed_zeros(kr: Kernels) -> None:
    w = kr.target.width
    v = torch.full((w,), -1.0)
    v[0] = -0.0
    v[-1] = 0.0
    got = kr.reduce("reduce_max", v)
    assert got == 0.0 and math.copysign(1.0, got) == 1.0
    got = kr.reduce("reduce_min", -v)
    assert got == 0.0 and (w == 1 or math.copysign(1.0, got) == -1.0)
