"""Single-instruction and piecewise-linear element-wise ops with torch's edge semantics.

NaN handling follows ATen's vectorized kernels: ``relu``, ``relu6``, ``hardtanh``, ``clamp``,
``hardswish`` and ``hardsigmoid`` all propagate NaN (their min/max are NaN-propagating), and
``-0`` passes through unchanged (``relu(-0.) == -0.``) because the clamps are written as
``x < lo ? lo : x`` / ``x > hi ? hi : x`` -- each one a single ``maxps``/``minps`` on x86.
``hardswish`` and ``hardsigmoid`` divide by 6 exactly like eager (bit-identical results).
"""

from __future__ import annotations

import math

from llvmlite import ir

from ziggurat.backends.cpu.vecmath.builder import VB

Bound = float | ir.Value | None


def _bound(v: VB, c: float | ir.Value) -> ir.Value:
    return c if isinstance(c, ir.Value) else v.c(float(c))


def clamp(b: ir.IRBuilder, x: ir.Value, min: Bound = None, max: Bound = None) -> ir.Value:  # noqa: A002
    """torch.clamp: min(max(x, min), max); None means unbounded; NaN propagates (a NaN bound
    given as a number makes every element NaN, as in torch)."""
    v = VB(b, x)
    if any(isinstance(c, float) and math.isnan(c) for c in (min, max)):
        return v.c(math.nan)
    res = x
    if min is not None:
        res = v.max_prop(res, _bound(v, min))
    if max is not None:
        res = v.min_prop(res, _bound(v, max))
    return res


def hardtanh(b: ir.IRBuilder, x: ir.Value, min_val: float = -1.0, max_val: float = 1.0) -> ir.Value:
    """torch.nn.functional.hardtanh."""
    return clamp(b, x, min_val, max_val)


def relu(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """max(x, 0) with NaN propagation and relu(-0) = -0 (torch)."""
    return clamp(b, x, 0.0, None)


def relu6(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """hardtanh(x, 0, 6)."""
    return clamp(b, x, 0.0, 6.0)


def leaky_relu(b: ir.IRBuilder, x: ir.Value, negative_slope: float = 0.01) -> ir.Value:
    """x > 0 ? x : x * negative_slope."""
    v = VB(b, x)
    return v.sel(v.gt(x, v.c(0.0)), x, v.mul(x, v.c(negative_slope)))


def hardsigmoid(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """relu6(x + 3) / 6."""
    v = VB(b, x)
    return v.div(relu6(b, v.add(x, v.c(3.0))), v.c(6.0))


def hardswish(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """x * relu6(x + 3) / 6."""
    v = VB(b, x)
    return v.div(v.mul(x, relu6(b, v.add(x, v.c(3.0)))), v.c(6.0))


def abs(b: ir.IRBuilder, x: ir.Value) -> ir.Value:  # noqa: A001
    """|x| (llvm.fabs)."""
    return VB(b, x).abs(x)


def neg(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """-x (fneg: flips the sign of zeros and NaNs too)."""
    return VB(b, x).neg(x)


def square(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """x * x."""
    return VB(b, x).mul(x, x)


def sqrt(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Correctly rounded square root (llvm.sqrt -> vsqrtps/vsqrtpd)."""
    return VB(b, x).sqrt(x)


def rsqrt(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """1 / sqrt(x) as two correctly rounded operations (what eager computes; <= 1 ulp)."""
    v = VB(b, x)
    return v.div(v.c(1.0), v.sqrt(x))


def reciprocal(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """1 / x (correctly rounded division)."""
    v = VB(b, x)
    return v.div(v.c(1.0), x)


def maximum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """torch.maximum: NaN if either operand is NaN (llvm.maximum semantics)."""
    v = VB(b, x)
    return v.intrinsic("maximum", v.ty, [x, y])


def minimum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """torch.minimum: NaN if either operand is NaN."""
    v = VB(b, x)
    return v.intrinsic("minimum", v.ty, [x, y])
