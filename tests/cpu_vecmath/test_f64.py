"""f64 lanes: accuracy against an mpmath truth (30 digits) and special values against torch float64."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
import torch

from .accuracy import F64_KINDS
from .bounds import MAX_REL_F64
from .harness import Kernels
from .references import EAGER, MP_TRUTH, POSITIVE_DOMAIN, f64_points, max_rel_f64


@pytest.mark.parametrize("kind", sorted(MAX_REL_F64))
def test_accuracy_vs_mpmath(k64: Kernels, kind: str) -> None:
    err, at = max_rel_f64(k64, kind, f64_points(kind))
    assert err <= MAX_REL_F64[kind], f"{kind}: {err:.3e} at x={at!r}"


def test_gelu_tanh_f64(k64: Kernels) -> None:
    """f64 gelu_tanh forms 2u in f64: relative error ~|2u| * 2^-53 in the negative tail (documented)."""
    x = f64_points("gelu_tanh")
    core = x[(x > -3)].contiguous()
    err, at = max_rel_f64(k64, "gelu_tanh", core)
    assert err <= 1.5e-15, (err, at)
    tail = x[(x <= -3) & (x > -30)].contiguous()
    err, at = max_rel_f64(k64, "gelu_tanh", tail)
    assert err <= 2.5e-13, (err, at)


@pytest.mark.parametrize("kind", [k for k in F64_KINDS])
@mp.workdps(30)
def test_specials_vs_torch_f64(k64: Kernels, kind: str) -> None:
    x = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1.0, -1.0, 800.0, -800.0,
                      1e300, -1e300], dtype=torch.float64)
    got, eager = k64.unary(kind, x), EAGER[kind](x)
    for xi, o, e in zip(x.tolist(), got.tolist(), eager.tolist()):
        if math.isnan(e) or math.isinf(e) or e == 0.0:
            ok = (math.isnan(o) and math.isnan(e)) or (o == e and math.copysign(1, o) == math.copysign(1, e))
            if not ok and math.isfinite(xi) and not (kind in POSITIVE_DOMAIN and xi < 0):
                t = float(MP_TRUTH[kind](mp.mpf(xi)))  # eager itself can be off (e.g. log1p(5e-324) == 0)
                ok = o == t
            assert ok, f"{kind}({xi!r}) = {o!r}, eager {e!r}"
