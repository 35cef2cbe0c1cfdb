"""Piecewise-linear / exactly rounded ops and scalar-exponent pow: bit-identical to eager."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from .accuracy import EXACT_KINDS
from .harness import Kernels

Fn = Callable[[torch.Tensor], torch.Tensor]


def _inputs() -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    bits = torch.randint(0, 0x7F800000, (20000,), generator=g, dtype=torch.int32).view(torch.float32)
    return torch.cat([
        torch.tensor([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 2.0 ** -149, -(2.0 ** -149),
                      -3.0, 3.0, 6.0, -6.0, -1.5, 2.0, -0.5, 0.25, 0.5, 1.0, -1.0]),
        torch.linspace(-10, 10, 40001), bits, -bits,
    ]).contiguous()


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.view(torch.int32) == b.view(torch.int32)) | (a.isnan() & b.isnan())


EAGER_EXACT: dict[str, Fn] = {
    "relu": torch.relu,
    "relu6": F.relu6,
    "hardtanh": lambda x: F.hardtanh(x, -1.5, 2.0),
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "abs": torch.abs,
    "neg": torch.neg,
    "square": torch.square,
    "clamp_lo_hi": lambda x: torch.clamp(x, -0.5, 0.25),
    "clamp_lo": lambda x: torch.clamp(x, min=-0.5),
    "clamp_hi": lambda x: torch.clamp(x, max=0.25),
    "clamp_inverted": lambda x: torch.clamp(x, 0.5, -0.5),  # min > max: eager returns max
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
}
for _e in (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -0.5):
    EAGER_EXACT[f"pow_s{_e}"] = (lambda e: lambda x: torch.pow(x, e))(_e)


def test_exact_kinds_covered() -> None:
    assert set(EXACT_KINDS) <= set(EAGER_EXACT)


@pytest.mark.parametrize("name", sorted(EAGER_EXACT))
def test_bit_identical_to_eager(kwide: Kernels, name: str) -> None:
    x = _inputs()
    got, want = kwide.unary(name, x), EAGER_EXACT[name](x)
    same = _bitwise_equal(got, want)
    assert bool(same.all()), f"{name}: x={x[~same][:4].tolist()} ours={got[~same][:4].tolist()} eager={want[~same][:4].tolist()}"


@pytest.mark.parametrize("name", sorted(EXACT_KINDS))
def test_bit_identical_to_eager_avx2(k_avx2: Kernels, name: str) -> None:
    x = _inputs()
    assert bool(_bitwise_equal(k_avx2.unary(name, x), EAGER_EXACT[name](x)).all())


@pytest.mark.parametrize("name", ["sqrt", "pow_s0.5"])
def test_sqrt_correctly_rounded(kwide: Kernels, name: str) -> None:
    """llvm.sqrt is correctly rounded (eager's MKL-backed f32 sqrt is not always: it can be 1 ulp off).

    sqrt in float64 rounded to float32 is the correctly rounded f32 square root (53 >= 2*24+2).
    """
    x = _inputs()
    got = kwide.unary(name, x)
    assert bool(_bitwise_equal(got, torch.sqrt(x.double()).float()).all())
    eager = torch.sqrt(x)
    assert float(((got.double() - eager.double()).abs() / eager.double().abs().clamp_min(2.0 ** -126))
                 .nan_to_num(0.0).max()) <= 2.0 ** -23


def test_relu_family_nan_and_signed_zero(kwide: Kernels) -> None:
    x = torch.tensor([math.nan, -0.0, -1.0, 7.0] * 5)
    for name in ("relu", "relu6", "hardtanh", "clamp_lo_hi", "hardswish", "hardsigmoid", "leaky_relu"):
        out = kwide.unary(name, x)
        assert bool(out[::4].isnan().all()), name  # NaN propagates (torch maximum/minimum semantics)
    relu = kwide.unary("relu", x)
    assert math.copysign(1.0, relu[1].item()) == -1.0  # relu(-0.) == -0. as in eager
    assert kwide.unary("relu6", x)[3].item() == 6.0


def test_parametrised_smooth_variants(kwide: Kernels) -> None:
    x = torch.linspace(-30, 30, 6001)
    sp = kwide.unary("softplus_b2", x)
    ref = F.softplus(x.double(), beta=2.0, threshold=10.0)
    assert float(((sp.double() - ref).abs() / ref.abs().clamp_min(2.0 ** -126)).max()) < 3e-7
    el = kwide.unary("elu_a", x)
    ref = torch.ops.aten.elu(x.double(), 0.7, 1.5, 0.5)
    assert float(((el.double() - ref).abs() / ref.abs().clamp_min(2.0 ** -126)).max()) < 2e-7
    # a Python-float exponent is rounded to the lane type, as in eager's float kernel
    p = kwide.unary("pow_s1.7", x.abs())
    ref = torch.pow(x.abs().double(), torch.tensor(1.7, dtype=torch.float32).item())
    assert float(((p.double() - ref).abs() / ref.abs().clamp_min(2.0 ** -126)).max()) < 6e-8
