"""f64 lanes: accuracy against an mpmath truth (30 digits) and special values against torch float64."""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath as mp
import pytest
import torch

from .accuracy import F64_KINDS
from .bounds import MAX_REL_F64
from .harness import Kernels
from .references import EAGER

SELU_A, SELU_S = mp.mpf("1.6732632423543772848170429916717"), mp.mpf("1.0507009873554804934193349852946")


def _sig(x: mp.mpf) -> mp.mpf:
    return 1 / (1 + mp.exp(-x))


def _softplus(x: mp.mpf) -> mp.mpf:
    return x if x > 20 else mp.log1p(mp.exp(x))


def _gelu_tanh(x: mp.mpf) -> mp.mpf:
    u = mp.sqrt(2 / mp.pi) * (x + mp.mpf("0.044715") * x ** 3)
    return x * _sig(2 * u)


MP: dict[str, Callable[[mp.mpf], mp.mpf]] = {
    "exp": mp.exp, "exp2": lambda x: mp.power(2, x), "expm1": mp.expm1, "log": mp.log,
    "log2": lambda x: mp.log(x, 2), "log10": mp.log10, "log1p": mp.log1p, "tanh": mp.tanh, "sigmoid": _sig,
    "silu": lambda x: x * _sig(x), "softplus": _softplus,
    "mish": lambda x: x if x > 20 else x * mp.tanh(_softplus(x)),
    "elu": lambda x: x if x > 0 else mp.expm1(x), "selu": lambda x: SELU_S * (x if x > 0 else SELU_A * mp.expm1(x)),
    "celu": lambda x: x if x > 0 else mp.expm1(x), "sqrt": mp.sqrt, "rsqrt": lambda x: 1 / mp.sqrt(x),
    "reciprocal": lambda x: 1 / x, "gelu_tanh": _gelu_tanh,
}
POSITIVE = {"log", "log2", "log10", "sqrt", "rsqrt"}
DBL_MIN = 2.0 ** -1022


def _points(kind: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(4)
    mag = torch.logspace(-300, 2.5, 400, dtype=torch.float64)
    bits = torch.randint(0, 0x7FF0000000000000, (300,), generator=g, dtype=torch.int64).view(torch.float64)
    x = torch.cat([torch.linspace(-100, 100, 1201, dtype=torch.float64), mag, -mag, bits, -bits,
                   torch.empty(400, dtype=torch.float64).uniform_(-1, 1, generator=g)])
    if kind in POSITIVE:
        x = torch.cat([x.abs(), torch.logspace(-320, 308, 400, dtype=torch.float64)])
    if kind == "log1p":
        x = torch.cat([x, -1 + torch.logspace(-16, 0, 300, dtype=torch.float64)])
        x = x[x > -1]
    if kind in ("exp", "expm1", "exp2", "sigmoid", "silu", "softplus", "mish"):
        x = torch.cat([x, torch.linspace(-1100 if kind == "exp2" else -746, 1025 if kind == "exp2" else 710, 801,
                                         dtype=torch.float64)])
    return x[torch.isfinite(x)].contiguous()


@mp.workdps(30)
def _max_rel(k: Kernels, kind: str, x: torch.Tensor) -> tuple[float, float]:
    got = k.unary(kind, x)
    worst, at = 0.0, math.nan
    for xi, oi in zip(x.tolist(), got.tolist()):
        t = MP[kind](mp.mpf(xi))
        if abs(t) > 1.7976931348623157e308:
            err = 0.0 if math.isinf(oi) and (oi > 0) == (t > 0) else math.inf
        else:
            err = float(abs(mp.mpf(oi) - t) / max(abs(t), mp.mpf(DBL_MIN)))
        if err > worst:
            worst, at = err, xi
    return worst, at


@pytest.mark.parametrize("kind", sorted(MAX_REL_F64))
def test_accuracy_vs_mpmath(k64: Kernels, kind: str) -> None:
    err, at = _max_rel(k64, kind, _points(kind))
    assert err <= MAX_REL_F64[kind], f"{kind}: {err:.3e} at x={at!r}"


def test_gelu_tanh_f64(k64: Kernels) -> None:
    """f64 gelu_tanh forms 2u in f64: relative error ~|2u| * 2^-53 in the negative tail (documented)."""
    x = _points("gelu_tanh")
    core = x[(x > -3)].contiguous()
    err, at = _max_rel(k64, "gelu_tanh", core)
    assert err <= 1.5e-15, (err, at)
    tail = x[(x <= -3) & (x > -30)].contiguous()
    err, at = _max_rel(k64, "gelu_tanh", tail)
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
            if not ok and math.isfinite(xi) and not (kind in POSITIVE and xi < 0):
                t = float(MP[kind](mp.mpf(xi)))  # eager itself can be off (e.g. log1p(5e-324) == 0)
                ok = o == t
            assert ok, f"{kind}({xi!r}) = {o!r}, eager {e!r}"
