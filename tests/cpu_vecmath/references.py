"""Reference functions, input sets and error metrics for the vecmath accuracy tests.

* ``TRUTH[kind](x32) -> float64 tensor``: the function evaluated in float64 on the (exactly
  converted) f32 inputs.  Where torch's own float64 formula cancels (GELU tails) a
  cancellation-free float64 formula is used instead.
* ``EAGER[kind](x32) -> float32 tensor``: what torch eager computes in float32.
* ``inputs(kind, scale)``: the f32 sweep for a function (dense ranges, log-spaced magnitudes,
  denormals, boundaries of the kernels' regions, random bit patterns, specials).
* ``MP_TRUTH`` / ``f64_points`` / ``max_rel_f64``: the same for f64 lanes against mpmath.
* ``rel_err`` / ``ulp_err``: error of an f32 result against a float64 truth, with results in
  the denormal range judged against FLT_MIN (fp32 cannot do better there) and f32 overflow
  mapped to 2**128 so that "inf vs FLT_MAX" counts as one ulp.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath as mp
import torch
import torch.nn.functional as F

from ziggurat.backends.cpu.vecmath.eager_zero import POSITIVE, POSITIVE_NAN_AT_INF, ZERO_BELOW, eager_zero_below

from .harness import Kernels

FLT_MIN = 2.0 ** -126
FLT_TRUE_MIN = 2.0 ** -149
TWO128 = 2.0 ** 128

Fn = Callable[[torch.Tensor], torch.Tensor]

SQRT_2_PI = math.sqrt(2.0 / math.pi)


def _gelu_erf64(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * torch.special.erfc(-x / math.sqrt(2.0))


def _gelu_tanh64(x: torch.Tensor) -> torch.Tensor:
    u2 = 2.0 * SQRT_2_PI * (x + 0.044715 * x * x * x)
    return x * torch.sigmoid(u2)  # == 0.5 x (1 + tanh(u)) without cancellation


def _d(f: Fn) -> Fn:
    return lambda x: f(x.double())


def _eager_zero(kind: str, f: Fn) -> Fn:
    """``f`` with eager's exact zero below its threshold on this host (:func:`eager_zero_below`,
    the kernels' documented choice)."""
    t, form = eager_zero_below(kind, "f32", kind not in ("sigmoid", "softplus"))

    def zero(x: torch.Tensor) -> torch.Tensor:
        z = torch.zeros_like(x, dtype=torch.float64) if form == POSITIVE else x.double() * 0.0
        return z.abs() if form == POSITIVE_NAN_AT_INF else z

    return lambda x: torch.where(x < t, zero(x), f(x))


TRUTH: dict[str, Fn] = {
    "exp": _d(torch.exp),
    "exp2": _d(torch.exp2),
    "expm1": _d(torch.expm1),
    "log": _d(torch.log),
    "log2": _d(torch.log2),
    "log10": _d(torch.log10),
    "log1p": _d(torch.log1p),
    "tanh": _d(torch.tanh),
    "sigmoid": _eager_zero("sigmoid", _d(torch.sigmoid)),
    "silu": _eager_zero("silu", _d(F.silu)),
    "erf": _d(torch.erf),
    "erfc": _d(torch.special.erfc),
    "gelu_erf": _eager_zero("gelu_erf", _d(_gelu_erf64)),
    "gelu": _eager_zero("gelu_erf", _d(_gelu_erf64)),
    "gelu_tanh": _eager_zero("gelu_tanh", _d(_gelu_tanh64)),
    "softplus": _eager_zero("softplus", _d(F.softplus)),
    "mish": _eager_zero("mish", _d(F.mish)),
    "elu": _d(F.elu),
    "selu": _d(F.selu),
    "celu": _d(F.celu),
    "sin": _d(torch.sin),
    "cos": _d(torch.cos),
    "sqrt": _d(torch.sqrt),
    "rsqrt": _d(torch.rsqrt),
    "reciprocal": _d(torch.reciprocal),
}

EAGER: dict[str, Fn] = {
    "exp": torch.exp,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "silu": F.silu,
    "erf": torch.erf,
    "erfc": torch.special.erfc,
    "gelu_erf": F.gelu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "softplus": F.softplus,
    "mish": F.mish,
    "elu": F.elu,
    "selu": F.selu,
    "celu": F.celu,
    "sin": torch.sin,
    "cos": torch.cos,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    # piecewise-linear / exact ops: compared bit for bit
    "relu": torch.relu,
    "relu6": F.relu6,
    "hardtanh": F.hardtanh,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "leaky_relu": F.leaky_relu,
    "abs": torch.abs,
    "neg": torch.neg,
    "square": torch.square,
}

#: torch OpInfo names of the kinds (for the OpInfo sample-input sweeps)
OPINFO_NAME: dict[str, str] = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "tanh": "tanh", "sigmoid": "sigmoid", "silu": "nn.functional.silu", "erf": "erf",
    "erfc": "erfc", "gelu_erf": "nn.functional.gelu", "gelu_tanh": "nn.functional.gelu",
    "softplus": "nn.functional.softplus", "mish": "nn.functional.mish", "elu": "nn.functional.elu",
    "selu": "nn.functional.selu", "celu": "nn.functional.celu", "sin": "sin", "cos": "cos", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "reciprocal": "reciprocal", "relu": "nn.functional.relu", "relu6": "nn.functional.relu6",
    "hardtanh": "nn.functional.hardtanh", "hardswish": "nn.functional.hardswish",
    "hardsigmoid": "nn.functional.hardsigmoid", "leaky_relu": "nn.functional.leaky_relu", "abs": "abs",
    "neg": "neg", "square": "square",
}

SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN,
            3.4028234663852886e38, -3.4028234663852886e38, 1.0, -1.0]

# interesting points per kind (region splits of the kernels, overflow/underflow edges)
_EDGES: dict[str, list[float]] = {
    "exp": [88.72283, 88.72284, -87.33655, -103.97208, -103.278929, 89.0, -104.0],
    "exp2": [127.99999, 128.0, -126.0, -149.0, -150.0, 129.0],
    "expm1": [88.72283, 88.72284, -17.0, -30.0, 0.3465736, -0.3465736, 88.37626],
    "log1p": [-0.99999994, -1.0, -1.0000001, 2.0 ** 100, 2.0 ** 100 * 1.0000001, 0.41421357, -0.29289323],
    "tanh": [9.5, -9.5, 9.0, 0.55],
    "erf": [0.5, -0.5, 0.49999997, 3.92, 10.5, 10.6],
    "erfc": [0.5, -0.5, 0.49999997, 9.0, 10.05, 10.5, 10.6, -4.0],
    "gelu_erf": [0.70710677, -0.70710677, 0.7071068, 6.0, 6.0000005, -14.7, -14.9, -13.2,
                 ZERO_BELOW["gelu_erf"]["f32"], eager_zero_below("gelu_erf", "f32", True)[0], -5.4858346],
    "gelu_tanh": [-10.0, -12.0, -9.5, ZERO_BELOW["gelu_tanh"]["f32"]],
    "sigmoid": [ZERO_BELOW["sigmoid"]["f32"]],
    "silu": [ZERO_BELOW["silu"]["f32"]],
    "softplus": [20.0, 20.000002, -20.0, -87.0, -104.0, ZERO_BELOW["softplus"]["f32"]],
    "mish": [20.0, 20.000002, -20.0, -87.0, ZERO_BELOW["mish"]["f32"]],
    "sin": [math.pi, -math.pi, math.pi / 2, 2.0 ** -12, 2.0 ** -12 * 1.0000001],
    "cos": [math.pi, -math.pi, math.pi / 2],
}
_EDGES["gelu"] = _EDGES["gelu_erf"]


def _ulp_neighbours(vals: list[float], k: int = 3) -> torch.Tensor:
    base = torch.tensor(vals, dtype=torch.float32)
    bits = base.view(torch.int32)
    return torch.cat([(bits + d).view(torch.float32) for d in range(-k, k + 1)])


def _random_bits(n: int, gen: torch.Generator, positive: bool = False) -> torch.Tensor:
    bits = torch.randint(0, 0x7F800000, (n,), generator=gen, dtype=torch.int32)
    x = bits.view(torch.float32)
    if not positive:
        sign = torch.randint(0, 2, (n,), generator=gen, dtype=torch.int32) * 2 - 1
        x = x * sign.float()
    return x


def inputs(kind: str, scale: float = 1.0, seed: int = 0) -> torch.Tensor:
    """The f32 sweep for ``kind``; ``scale`` multiplies the number of dense points."""
    gen = torch.Generator().manual_seed(seed)
    n = max(1000, int(200_000 * scale))
    mag = torch.logspace(-38, 2, n // 2, dtype=torch.float64).float()
    parts = [
        torch.linspace(-100, 100, n + 1, dtype=torch.float64).float(),
        mag, -mag,
        torch.linspace(-1, 1, n // 4 + 1),
        torch.randint(1, 1 << 23, (n // 20,), generator=gen, dtype=torch.int32).view(torch.float32),  # denormals
        _random_bits(n // 4, gen),
        torch.tensor(SPECIALS, dtype=torch.float32),
        _ulp_neighbours(_EDGES.get(kind, [0.5, 1.0])),
    ]
    if kind in ("log", "log2", "log10", "sqrt", "rsqrt"):
        parts += [torch.logspace(-45, 38.5, n, dtype=torch.float64).float(),
                  torch.linspace(0.5, 2.0, n // 2 + 1), _random_bits(n // 4, gen, positive=True)]
    if kind == "log1p":
        parts += [torch.linspace(-1, 1, n + 1, dtype=torch.float64).float(),
                  -1 + torch.logspace(-7.3, 0, n // 4, dtype=torch.float64).float(),
                  torch.logspace(-3, 38.5, n // 4, dtype=torch.float64).float()]
    if kind in ("exp", "expm1", "exp2"):
        parts += [torch.linspace(-150 if kind == "exp2" else -104, 128 if kind == "exp2" else 89, n + 1)]
    if kind in ("gelu_erf", "gelu", "gelu_tanh", "erf", "erfc"):
        parts += [torch.linspace(-15, 15, n + 1)]
    return torch.cat(parts).contiguous()


def wide_trig_inputs(limit: float, n: int = 200_000) -> torch.Tensor:
    return torch.linspace(-limit, limit, n + 1, dtype=torch.float64).float()


def _as_f32_grid(t: torch.Tensor) -> torch.Tensor:
    """float64 truth with values that overflow f32 mapped to +-2**128."""
    big = t.abs() >= 2.0 ** 128 * (1 - 2.0 ** -25)
    return torch.where(big, torch.copysign(torch.full_like(t, TWO128), t), t)


def _err(ours: torch.Tensor, truth: torch.Tensor, denom: torch.Tensor) -> torch.Tensor:
    o = ours.double()
    o = torch.where(o.isinf(), torch.copysign(torch.full_like(o, TWO128), o), o)
    t = _as_f32_grid(truth)
    e = (o - t).abs() / denom
    both_nan = o.isnan() & t.isnan()
    e = torch.where(both_nan, torch.zeros_like(e), e)
    one_nan = o.isnan() ^ t.isnan()
    return torch.where(one_nan, torch.full_like(e, math.inf), e)


def rel_err(ours: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """|ours - truth| / max(|truth|, FLT_MIN); NaN vs NaN is 0, NaN vs number is inf."""
    return _err(ours, truth, _as_f32_grid(truth).abs().clamp_min(FLT_MIN).nan_to_num(1.0))


def ulp_f32(truth: torch.Tensor) -> torch.Tensor:
    t = _as_f32_grid(truth).abs().nan_to_num(1.0)
    _, e = torch.frexp(t)
    return torch.ldexp(torch.ones_like(t), (e - 24).clamp_min(-149))


def ulp_err(ours: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    return _err(ours, truth, ulp_f32(truth))


def rel_err_vs(ours: torch.Tensor, other32: torch.Tensor) -> torch.Tensor:
    """Relative error of an f32 result against another f32 result (e.g. torch eager)."""
    return rel_err(ours, other32.double())


def pow_grid() -> tuple[torch.Tensor, torch.Tensor]:
    """(x, y) f32 pairs for pow: |y log x| up to ~3e3, negative bases with integer y, x ~ 1 with huge y."""
    g = torch.Generator().manual_seed(2)
    n = 200_000
    x = torch.exp(torch.empty(n, dtype=torch.float64).uniform_(-80, 80, generator=g)).float()
    y = torch.empty(n, dtype=torch.float64).uniform_(-40, 40, generator=g).float()
    # y*log(x) spans the whole f32 range: results from denormal to overflow
    xn = -torch.exp(torch.empty(n // 4, dtype=torch.float64).uniform_(-20, 20, generator=g)).float()
    yn = torch.randint(-40, 41, (n // 4,), generator=g).float()  # integer exponents of negative bases
    x1 = 1 + torch.empty(n // 4).uniform_(-1e-3, 1e-3, generator=g)
    y1 = torch.empty(n // 4).uniform_(-1e5, 1e5, generator=g)  # pow(1+eps, big): the f64 path matters
    return torch.cat([x, xn, x1]).contiguous(), torch.cat([y, yn, y1]).contiguous()


# --------------------------------------------------------------------------- f64: mpmath truth
with mp.workdps(40):
    SELU_A, SELU_S = mp.mpf("1.6732632423543772848170429916717"), mp.mpf("1.0507009873554804934193349852946")


def _mp_sigmoid(x: mp.mpf) -> mp.mpf:
    return 1 / (1 + mp.exp(-x))


def _mp_softplus(x: mp.mpf) -> mp.mpf:
    return x if x > 20 else mp.log1p(mp.exp(x))


def _mp_gelu_tanh(x: mp.mpf) -> mp.mpf:
    u = mp.sqrt(2 / mp.pi) * (x + mp.mpf("0.044715") * x ** 3)
    return x * _mp_sigmoid(2 * u)


def _mp_erfc(x: mp.mpf) -> mp.mpf:
    # mpmath overflows internally for |x| ~ 1e300; erfc is exactly 0 / 2 in f64 far earlier
    if abs(x) > 1e4:
        return mp.mpf(0) if x > 0 else mp.mpf(2)
    return mp.erfc(x)


def _mp_eager_zero(kind: str, f: Callable[[mp.mpf], mp.mpf]) -> Callable[[mp.mpf], mp.mpf]:
    t = ZERO_BELOW[kind]["f64"]
    return lambda x: mp.mpf(0) if x < t else f(x)


MP_TRUTH: dict[str, Callable[[mp.mpf], mp.mpf]] = {
    "exp": mp.exp, "exp2": lambda x: mp.power(2, x), "expm1": mp.expm1, "log": mp.log,
    "log2": lambda x: mp.log(x, 2), "log10": mp.log10, "log1p": mp.log1p, "tanh": mp.tanh, "sigmoid": _mp_sigmoid,
    "silu": lambda x: x * _mp_sigmoid(x), "softplus": _mp_softplus,
    "mish": lambda x: x if x > 20 else x * mp.tanh(_mp_softplus(x)),
    "elu": lambda x: x if x > 0 else mp.expm1(x), "selu": lambda x: SELU_S * (x if x > 0 else SELU_A * mp.expm1(x)),
    "celu": lambda x: x if x > 0 else mp.expm1(x), "sqrt": mp.sqrt, "rsqrt": lambda x: 1 / mp.sqrt(x),
    "reciprocal": lambda x: 1 / x, "gelu_tanh": _mp_gelu_tanh, "erf": lambda x: mp.erf(x) if abs(x) <= 1e4 else mp.sign(x),
    "erfc": lambda x: _mp_erfc(x), "gelu_erf": lambda x: x * _mp_erfc(-x / mp.sqrt(2)) / 2,
}
for _kind in ("sigmoid", "silu", "softplus", "mish", "gelu_tanh", "gelu_erf"):
    MP_TRUTH[_kind] = _mp_eager_zero(_kind, MP_TRUTH[_kind])
POSITIVE_DOMAIN = {"log", "log2", "log10", "sqrt", "rsqrt"}
DBL_MIN = 2.0 ** -1022


def f64_points(kind: str, scale: float = 1.0) -> torch.Tensor:
    """f64 inputs: dense [-100, 100], log-spaced magnitudes to 1e-300, random bit patterns, kernel edges."""
    g = torch.Generator().manual_seed(4)
    mag = torch.logspace(-300, 2.5, int(250 * scale), dtype=torch.float64)
    bits = torch.randint(0, 0x7FF0000000000000, (int(150 * scale),), generator=g, dtype=torch.int64).view(torch.float64)
    x = torch.cat([torch.linspace(-100, 100, int(600 * scale) + 1, dtype=torch.float64), mag, -mag, bits, -bits,
                   torch.empty(int(300 * scale), dtype=torch.float64).uniform_(-1, 1, generator=g)])
    if kind in POSITIVE_DOMAIN:
        x = torch.cat([x.abs(), torch.logspace(-320, 308, int(300 * scale), dtype=torch.float64)])
    if kind == "log1p":
        x = torch.cat([x, -1 + torch.logspace(-16, 0, int(200 * scale), dtype=torch.float64)])
        x = x[x > -1]
    if kind in ("erf", "erfc", "gelu_erf"):
        x = torch.cat([x, torch.linspace(-40, 40, int(800 * scale) + 1, dtype=torch.float64),
                       torch.linspace(-1, 1, int(200 * scale) + 1, dtype=torch.float64)])
    if kind in ("exp", "expm1", "exp2", "sigmoid", "silu", "softplus", "mish"):
        x = torch.cat([x, torch.linspace(-1100 if kind == "exp2" else -746, 1025 if kind == "exp2" else 710, int(400 * scale) + 1,
                                         dtype=torch.float64)])
    return x[torch.isfinite(x)].contiguous()


@mp.workdps(30)
def max_rel_f64(k: Kernels, kind: str, x: torch.Tensor) -> tuple[float, float]:
    """(max relative error vs the 30-digit mpmath truth, input where it occurs); DBL_MIN floor."""
    got = k.unary(kind, x)
    worst, at = 0.0, math.nan
    for xi, oi in zip(x.tolist(), got.tolist()):
        t = MP_TRUTH[kind](mp.mpf(xi))
        if abs(t) > 1.7976931348623157e308:
            err = 0.0 if math.isinf(oi) and (oi > 0) == (t > 0) else math.inf
        else:
            err = float(abs(mp.mpf(oi) - t) / max(abs(t), mp.mpf(DBL_MIN)))
        if err > worst:
            worst, at = err, xi
    return worst, at
