"""Vector math for the CPU backend: transcendental and activation functions as LLVM IR.

Every function takes an ``llvmlite.ir.IRBuilder`` and an ``ir.Value`` of type ``float``,
``double``, ``<W x float>`` or ``<W x double>`` (W in 1, 2, 4, 8, 16) and returns a value of
the same type, built from straight-line IR (no new basic blocks).  Constants are splatted to
the operand type.  Transcendentals are polynomial approximations emitted as instructions:
the only calls are LLVM intrinsics (``llvm.fma``, ``llvm.fabs``, ``llvm.rint``,
``llvm.copysign``, ``llvm.sqrt``, ``llvm.maximum``/``minimum``,
``llvm.vector.reduce.*``) -- never libm.  ``llvm.fma`` assumes an FMA-capable target
(every AVX2 and AVX-512 CPU is).

Polynomial coefficients are our own minimax fits (``vecmath_fit.py`` -> ``vecmath_coeffs.py``);
the algorithms are described in ``vecmath_explog``, ``vecmath_smooth``, ``vecmath_erf``,
``vecmath_trig`` and ``vecmath_simple``.

f64 lanes are supported by everything except ``erf``, ``erfc``, ``gelu_erf``, ``sin`` and
``cos`` (TypeError).  f32 ``pow`` computes internally in f64 lanes.

Measured accuracy (f32, AVX-512 W=16; W=8 under an AVX2-only target and W=1 give the same
numbers).  Truth is the float64 evaluation of the same function on the same f32 inputs
(torch float64, or a cancellation-free float64 formula where torch's float64 itself cancels:
gelu tails, sigmoid/silu tails, softplus, mish).  "rel" is
``|ours - truth| / max(|truth|, FLT_MIN)`` (so results in the denormal range are judged in
absolute terms, as fp32 cannot do better there), "ulp" is ``|ours - truth| / ulp_f32(truth)``;
"vs torch" is the same relative error against torch's own float32 result on the same inputs.
Inputs: every f32 in a dense sweep of [-100, 100] (2e6 points), 2e5 log-spaced magnitudes
per sign from 1e-38 to 1e2 (plus the wider domain listed), denormals, +-0, +-inf, NaN, and the
float32 sample inputs of the op's torch OpInfo.

=============  ======================  =========  =====  ===========  =====================
function       domain swept            max rel    ulp    vs torch     torch f32 vs truth
=============  ======================  =========  =====  ===========  =====================
(table filled in by tests/cpu_vecmath/measure_accuracy.py -- see below)
=============  ======================  =========  =====  ===========  =====================

Reproduce with ``/work/main/.venv/bin/python tests/cpu_vecmath/measure_accuracy.py``
(prints this table; add ``--wide`` for 4x denser sweeps).  The pytest suite
``tests/cpu_vecmath`` asserts the bounds in ``tests/cpu_vecmath/bounds.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from llvmlite import ir

from ziggurat.backends.cpu.vecmath_erf import erf, erfc, gelu_erf
from ziggurat.backends.cpu.vecmath_explog import exp, exp2, expm1, log, log1p, log2, log10, pow
from ziggurat.backends.cpu.vecmath_reduce import reduce_add, reduce_max, reduce_min
from ziggurat.backends.cpu.vecmath_simple import (
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
from ziggurat.backends.cpu.vecmath_smooth import celu, elu, gelu_tanh, mish, selu, sigmoid, silu, softplus, tanh
from ziggurat.backends.cpu.vecmath_trig import cos, sin

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
