"""The negative tails where eager returns exactly zero (``vecmath/eager_zero.py``).

A tiny value where eager has 0 flips a later ``== 0`` test (fuzz program 4370 of seed 13), so
the kernels return zero where eager's vector path does.  These tests pin the measured
thresholds against torch itself (they fail if a torch update moves them) and check that every
f32 around each threshold, and every f64 around it, is zero in ours exactly when it is in eager.
"""

from __future__ import annotations

import pytest
import torch

from tests.support.eager_activations import EAGER
from ziggurat.backends.cpu.vecmath.eager_zero import ZERO_BELOW, eager_zero_below

from .harness import Kernels

# eager's own vector path alternates between 0 and tiny values just above the threshold (its
# erf approximation), up to this point; there the kernel keeps the accurate, nonzero value
_ALTERNATES = {("gelu_erf", "f32"): -5.4858346, ("gelu_erf", "f64"): -8.3743889230673}


def _without_band(k: Kernels, kind: str, fmt: str, x: torch.Tensor, t: float) -> torch.Tensor:
    if (kind, fmt) not in _ALTERNATES:
        return x
    band = (x > t) & (x < _ALTERNATES[kind, fmt])
    assert bool((k.unary(kind, x[band]) != 0).all())
    return x[~band]


def _eager_vector_path(kind: str, x: torch.Tensor) -> torch.Tensor:
    """Eager on ``x`` with every element in its vector loop (the scalar remainder loop, for the
    last n mod 32 elements, flushes a little further out)."""
    n = x.numel()
    pad = (-n) % 64
    return EAGER[kind](torch.cat([x, x[:1].expand(pad)]))[:n]


def _f32_around(t: float, k: int = 20_000) -> torch.Tensor:
    c = int(torch.tensor(t, dtype=torch.float32).view(torch.int32).item())
    return torch.arange(c - k, c + k, dtype=torch.int32).view(torch.float32)


@pytest.mark.parametrize("fmt", ["f32", "f64"])
@pytest.mark.parametrize("kind", sorted(ZERO_BELOW))
def test_threshold_is_eagers(kind: str, fmt: str) -> None:
    dtype = torch.float32 if fmt == "f32" else torch.float64
    t = torch.tensor(eager_zero_below(kind, fmt, True)[0], dtype=dtype)
    below = torch.nextafter(t, torch.tensor(-torch.inf, dtype=dtype))
    x = torch.stack([t, below, below * 1.01, below * 2])
    y = _eager_vector_path(kind, x)
    assert y[0].item() != 0, f"eager {kind}({t.item()!r}) is now 0: the threshold moved"
    assert bool((y[1:] == 0).all()), f"eager {kind} below {t.item()!r}: {y[1:].tolist()}"


@pytest.mark.parametrize("kind", sorted(ZERO_BELOW))
def test_zero_exactly_where_eager_is_zero_f32(kwide: Kernels, kind: str) -> None:
    t = eager_zero_below(kind, "f32", True)[0]
    x = _f32_around(t)
    x = _without_band(kwide, kind, "f32", x, t)
    ours, eager = kwide.unary(kind, x), _eager_vector_path(kind, x)
    assert bool(((ours == 0) == (eager == 0)).all())
    assert bool((torch.signbit(ours) == torch.signbit(eager)).all())
    # and through the harness' scalar tail (17 elements: 16 vector lanes, 1 scalar)
    for xi in (t, float(torch.nextafter(torch.tensor(t), torch.tensor(-1e9)))):
        got = kwide.unary(kind, torch.full((17,), xi))
        assert bool(((got == 0) == (xi < t)).all()), (kind, xi, got.tolist())


@pytest.mark.parametrize("kind", sorted(ZERO_BELOW))
def test_zero_exactly_where_eager_is_zero_f64(k64: Kernels, kind: str) -> None:
    t = eager_zero_below(kind, "f64", True)[0]
    bits = int(torch.tensor(t, dtype=torch.float64).view(torch.int64).item())
    x = torch.cat([torch.arange(bits - 2000, bits + 2000, dtype=torch.int64).view(torch.float64),
                   torch.linspace(t * 1.2, t * 0.8, 20001, dtype=torch.float64)])
    x = _without_band(k64, kind, "f64", x, t)
    ours, eager = k64.unary(kind, x), _eager_vector_path(kind, x)
    assert bool(((ours == 0) == (eager == 0)).all())


def test_fuzz_4370_pattern(kwide: Kernels) -> None:
    """``c / where(gelu(v) == 0, 1, gelu(v))`` over the negative tail: same branch as eager."""
    v = torch.linspace(-15.0, -5.6, 4096)
    g = kwide.unary("gelu_erf", v)
    assert bool((g == 0).all()) and torch.equal(torch.signbit(g), torch.signbit(_eager_vector_path("gelu_erf", v)))
