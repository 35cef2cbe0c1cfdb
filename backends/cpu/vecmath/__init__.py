"""Vector math for the CPU backend: transcendental and activation functions as LLVM IR.

Every function takes an ``llvmlite.ir.IRBuilder`` and an ``ir.Value`` of type ``float``,
``double``, ``<W x float>`` or ``<W x double>`` (W in 1, 2, 4, 8, 16) and returns a value of
the same type, built from straight-line IR (no new basic blocks).  Constants are splatted to
the operand type.  Transcendentals are polynomial approximations emitted as instructions:
the only calls are LLVM intrinsics (``llvm.fma``, ``llvm.fabs``, ``llvm.rint``,
``llvm.copysign``, ``llvm.sqrt``, ``llvm.maximum``/``minimum``,
``llvm.vector.reduce.*``) -- never libm.  ``llvm.fma`` assumes an FMA-capable target
(every AVX2 and AVX-512 CPU is).

Polynomial coefficients are our own minimax fits (``tools/vecmath_fit.py`` -> ``coeffs.py``);
the algorithms are described in the modules of this package: ``explog``, ``smooth``, ``erf``,
``trig`` and ``simple`` (``reduce``: horizontal reductions; ``builder``: the typed IR builder).

f64 lanes are supported by everything except ``sin`` and ``cos`` (TypeError).  f32 ``pow``
and the exponent of f32 ``gelu_tanh`` are computed in f64 lanes.

One deliberate departure from the exact function: GELU (both forms), sigmoid, silu, softplus
and mish return zero below the point where eager's vector kernels do (``eager_zero.py``: 1 +
erf cancels, exp overflows or underflows there; f32 GELU below x = -5.5426), instead of their
tiny true tail, because a later ``== 0`` or division would otherwise take another branch than
eager (fuzz seed 13, program 4370).  The truths below include that choice.

Measured accuracy
-----------------
f32, AVX-512 (W=16).  The AVX2 (W=8, Haswell target) and scalar (W=1) code paths produce
bit-identical results (asserted by the tests), so the numbers hold for every width.  Truth is
the float64 evaluation of the same function on the same f32 inputs (torch float64, or a
cancellation-free float64 formula where torch's float64 itself cancels: the GELU tails).
``max rel`` is ``|ours - truth| / max(|truth|, FLT_MIN)`` (results in the denormal range are
judged in absolute terms, fp32 cannot do better there); ``ulp`` is ``|ours - truth|`` in units of
the f32 ulp of the truth (0.5 = correctly rounded); ``vs torch`` is the relative difference to
torch eager f32 on the inputs where eager is itself within 2 ulp of the truth; ``torch f32`` is
eager's own max error on the sweep (large where eager cancels: sigmoid/silu tails in the
denormals, the GELU negative tails, mish; inf for gelu because eager's AVX path overflows to
inf for x > 1.7e38 and returns NaN for +inf).  Each sweep has 5e5-9e5 inputs: a uniform grid
of 2e5 points on [-100, 100], 1e5 log-spaced magnitudes per sign from 1e-38 to 1e2, 5e4 points
on [-1, 1], 5e4 random bit patterns (every magnitude up to 3.4e38, both signs), 1e4 denormals,
+-0, +-inf, NaN, FLT_MAX, ulp-neighbourhoods of the kernels' region boundaries and
overflow/underflow thresholds, the float32 sample inputs of the op's torch OpInfo, plus the
extra domain listed (2e5 more points).

=============  =============  =========  =====  =========  =========  ==============
function       domain         max rel    ulp    vs torch   torch f32  worst at x
=============  =============  =========  =====  =========  =========  ==============
exp            + [-104, 89]    8.86e-08   0.99   1.19e-07   6.10e-08  -87.372
exp2           + [-150, 128]   8.91e-08   1.00   1.19e-07   1.01e-07  -126.7314
expm1          + [-104, 89]    1.15e-07   1.38   1.19e-07   8.91e-08  16.997
log            + (0, 3e38]     7.84e-08   0.90   1.19e-07   5.96e-08  0.60485
log2           + (0, 3e38]     1.23e-07   1.43   1.19e-07   5.95e-08  1.414265
log10          + (0, 3e38]     1.13e-07   1.58   1.26e-07   5.95e-08  1.334195
log1p          + (-1, 3e38]    1.20e-07   1.40   1.19e-07   1.19e-07  0.41522
tanh                           1.59e-07   2.11   1.74e-07   6.15e-08  0.0004888177
sigmoid                        1.71e-07   1.96   2.38e-07   2.50e-01  -9.703
silu                           1.95e-07   2.35   2.38e-07   1.00e+00  -8.275
erf            + [-15, 15]     2.29e-07   2.04   2.29e-07   6.24e-08  -0.5142
erfc           + [-15, 15]     2.69e-07   3.69   2.85e-07   9.35e-08  7.3485
gelu_erf       + [-15, 15]     3.79e-07   5.70   5.06e-07        inf  -1.408799
gelu_tanh      + [-15, 15]     2.01e-07   2.50   3.80e-07   1.00e+00  -2.148299
softplus                       1.35e-07   1.58   2.38e-07   1.79e-07  -0.87432
mish                           2.50e-07   3.18   3.48e-07   1.78e-05  -1.961
elu                            8.47e-08   0.86   1.19e-07   6.28e-08  -0.34808
selu                           1.44e-07   1.67   1.35e-07   1.24e-07  -0.35296
celu                           8.47e-08   0.86   1.19e-07   6.28e-08  -0.34808
sin            all finite      1.19e-07   1.47   1.21e-07   6.46e-08  -80.882
cos            all finite      1.24e-07   1.48   1.68e-07   6.42e-08  -98.171
sqrt           + (0, 3e38]     5.96e-08   0.50   1.19e-07   6.33e-08  0.25
rsqrt          + (0, 3e38]     8.94e-08   1.47   0.00e+00   8.94e-08  3.402823e+38
reciprocal                     5.96e-08   0.50   0.00e+00   5.96e-08  0.5
=============  =============  =========  =====  =========  =========  ==============

``pow(x, y)`` f32: max rel 5.96e-08, 0.50 ulp (correctly rounded on this set) over 3e5 pairs
with ``|y ln x|`` up to ~3e3 (denormal to overflowing results), negative bases with integer
exponents and ``x = 1 +- 1e-3`` with ``|y| <= 1e5``.  The piecewise-linear ops (relu, relu6,
hardtanh, clamp, leaky_relu, hardswish, hardsigmoid, abs, neg, square) and reciprocal/rsqrt are
bit-identical to eager; sqrt is correctly rounded (eager's f32 sqrt is occasionally 1 ulp off).
The worst case of every f32 function is <= 5.1e-7 relative to eager where eager is accurate,
and no input violates ``|ours - eager| <= 1e-6 |truth| + |eager - truth|``.

f64 (``<8 x double>``), max relative error vs a 30-digit mpmath truth (DBL_MIN floor) on
~1.6e4 points per function (dense [-100, 100], magnitudes 1e-300..3e2, random bit patterns,
overflow/underflow ranges, (0, 1e308] for the logs and roots):

==============  =========  ==========
function        max rel    worst at x
==============  =========  ==========
exp              1.43e-16  0.36749
exp2             1.36e-16  0.542351
expm1            2.34e-16  0.407913
log              1.53e-16  0.366746
log2             1.81e-16  0.683216
log10            1.97e-16  0.92891
log1p            1.66e-16  0.419274
tanh             3.22e-16  0.178455
sigmoid          2.75e-16  -23.5
silu             3.14e-16  -14.2917
erf              6.37e-16  0.530962
erfc             6.87e-16  0.536845
gelu_erf         7.77e-16  -0.8525
gelu_tanh x>-3   7.95e-16  -2.79167
softplus         2.39e-16  -0.715327
mish             3.58e-16  -27.555
elu              2.02e-16  -0.356805
selu             3.39e-16  -0.867628
celu             2.02e-16  -0.356805
sqrt             1.11e-16  16
rsqrt            1.63e-16  0.964409
reciprocal       1.09e-16  4.11909e+180
==============  =========  ==========

The f64 erf family is the weakest f64 kernel (~3.5 ulp): the rounding of ``t = 2/(2+|x|)`` is
amplified by the erfcx polynomial, most visibly in ``1 - erfc`` near ``|x| = 0.5``.  f64
``gelu_tanh`` forms ``2u`` in plain f64, so in the negative tail its relative error grows like
``|2u| * 2^-53`` (asserted <= 2.5e-13 on [-30, -3]); f64 ``pow`` is ``exp(y*log|x|)`` in f64,
error ~ ``(1 + |y ln x|) * 2^-52`` (1.1e-13 measured at ``|y ln x|`` ~ 700).

Reproduce: ``/work/main/.venv/bin/python tests/cpu_vecmath/measure_accuracy.py`` prints these
tables (``--target avx2`` / ``--target scalar`` for the other code paths).  The pytest suite
``tests/cpu_vecmath`` asserts the bounds in ``tests/cpu_vecmath/bounds.py`` (f32: a 5x thinner
sweep by default, a 4x denser one under ``-m slow``; f64: an 8x thinner point set).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from llvmlite import ir

from ziggurat.backends.cpu.vecmath.erf import erf, erfc, gelu_erf
from ziggurat.backends.cpu.vecmath.explog import exp, exp2, expm1, log, log1p, log2, log10, pow
from ziggurat.backends.cpu.vecmath.reduce import reduce_add, reduce_max, reduce_min
from ziggurat.backends.cpu.vecmath.simple import (
    abs,
    clamp,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    maximum,
    minimum,
    neg,
    reciprocal,
    relu,
    relu6,
    rsqrt,
    sqrt,
    square,
)
from ziggurat.backends.cpu.vecmath.smooth import celu, elu, gelu_tanh, mish, selu, sigmoid, silu, softplus, tanh
from ziggurat.backends.cpu.vecmath.trig import cos, sin

__all__ = [
    "UNARY_KINDS", "UNARY_PARAMS", "apply_unary",
    "abs", "celu", "clamp", "cos", "elu", "erf", "erfc", "exp", "exp2", "expm1", "gelu_erf", "gelu_tanh",
    "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "log", "log1p", "log2", "log10", "maximum",
    "minimum", "mish", "neg", "pow", "reciprocal", "reduce_add", "reduce_max", "reduce_min", "relu",
    "relu6", "rsqrt", "selu", "sigmoid", "silu", "sin", "softplus", "sqrt", "square", "tanh",
]

_REQUIRED = object()

Unary = Callable[..., ir.Value]

# kind -> (function, {param name: default}); the function gets (builder, x, **params)
_UNARY: dict[str, tuple[Unary, dict[str, object]]] = {
    "relu": (relu, {}),
    "relu6": (relu6, {}),
    "gelu": (gelu_erf, {}),
    "gelu_erf": (gelu_erf, {}),
    "gelu_tanh": (gelu_tanh, {}),
    "silu": (silu, {}),
    "sigmoid": (sigmoid, {}),
    "tanh": (tanh, {}),
    "hardtanh": (hardtanh, {"min_val": -1.0, "max_val": 1.0}),
    "hardswish": (hardswish, {}),
    "hardsigmoid": (hardsigmoid, {}),
    "leaky_relu": (leaky_relu, {"negative_slope": 0.01}),
    "clamp": (clamp, {"min": None, "max": None}),
    "exp": (exp, {}),
    "exp2": (exp2, {}),
    "expm1": (expm1, {}),
    "log": (log, {}),
    "log2": (log2, {}),
    "log10": (log10, {}),
    "log1p": (log1p, {}),
    "erf": (erf, {}),
    "erfc": (erfc, {}),
    "sqrt": (sqrt, {}),
    "rsqrt": (rsqrt, {}),
    "reciprocal": (reciprocal, {}),
    "square": (square, {}),
    "abs": (abs, {}),
    "neg": (neg, {}),
    "softplus": (softplus, {"beta": 1.0, "threshold": 20.0}),
    "elu": (elu, {"alpha": 1.0, "scale": 1.0, "input_scale": 1.0}),
    "selu": (selu, {}),
    "celu": (celu, {"alpha": 1.0}),
    "mish": (mish, {}),
    "sin": (sin, {}),
    "cos": (cos, {}),
    "pow": (pow, {"exponent": _REQUIRED}),
}

#: Every kind name :func:`apply_unary` accepts.
UNARY_KINDS: frozenset[str] = frozenset(_UNARY)

#: Accepted parameter names per kind.
UNARY_PARAMS: Mapping[str, frozenset[str]] = {k: frozenset(p) for k, (_, p) in _UNARY.items()}


def apply_unary(b: ir.IRBuilder, kind: str, x: ir.Value, params: Mapping[str, float | None] | None = None) -> ir.Value:
    """Emit the element-wise op ``kind`` on ``x``; ``params`` are the op's scalar arguments.

    ``clamp`` takes ``min``/``max`` (missing or None = unbounded), ``hardtanh`` ``min_val``/
    ``max_val``, ``leaky_relu`` ``negative_slope``, ``softplus`` ``beta``/``threshold``,
    ``elu`` ``alpha``/``scale``/``input_scale``, ``celu`` ``alpha``, ``pow`` ``exponent``;
    missing parameters take torch's defaults.  Unknown kinds or parameters raise ValueError.
    """
    entry = _UNARY.get(kind)
    if entry is None:
        raise ValueError(f"apply_unary: unknown kind {kind!r}; known kinds: {', '.join(sorted(UNARY_KINDS))}")
    fn, spec = entry
    given = dict(params or {})
    unknown = sorted(set(given) - set(spec))
    if unknown:
        raise ValueError(f"apply_unary: kind {kind!r} takes parameters {sorted(spec) or 'none'}, got unknown {unknown}")
    kwargs: dict[str, object] = {}
    for name, default in spec.items():
        value = given.get(name, default)
        if value is _REQUIRED:
            raise ValueError(f"apply_unary: kind {kind!r} requires parameter {name!r}")
        kwargs[name] = value
    if kind == "pow":
        return pow(b, x, kwargs["exponent"])  # type: ignore[arg-type]
    return fn(b, x, **kwargs)
