"""Element functions built from the code generator's primitives (vecmath exp/log/sqrt...,
rounding, arithmetic): trigonometric and hyperbolic inverses, pow with tensor exponents,
floor division.  Each is a small DAG, so it fuses and vectorizes like any other op.

``atan`` reduces ``|x|`` to ``[0, tan(pi/12)]`` (``atan x = pi/2 - atan(1/x)`` above 1,
``atan x = pi/6 + atan((x*sqrt3 - 1)/(x + sqrt3))`` above ``tan(pi/12)``) and sums the Taylor
series ``u - u^3/3 + u^5/5 - ...`` to ``u^15`` (truncation error below 2e-10 there).
"""

from __future__ import annotations

import math

import torch

from ziggurat.backends.cpu.lowering.ops import Number, cast, compare, const, unary, where
from ziggurat.backends.cpu.lowering.values import Binary, Const, Value

F = torch.float32


def _c(v: Number, dtype: torch.dtype) -> Value:
    return const(v, dtype)


def b(op: str, x: Value, y: Value | Number) -> Value:
    yv = y if isinstance(y, Value) else const(y, x.dtype)
    return Binary(op, x, cast(yv, x.dtype))


def sign(x: Value) -> Value:
    """-1, 0 or 1 (0 for NaN and -0, as torch)."""
    dt = x.dtype
    if dt == torch.bool:
        return x
    pos = cast(compare("gt", x, 0, dt), dt)
    neg = cast(compare("lt", x, 0, dt), dt)
    return b("sub", pos, neg)


def unary_pred(kind: str, x: Value) -> Value:
    from ziggurat.backends.cpu.lowering.ops import predicate

    return predicate(kind, x)


def tan(x: Value) -> Value:
    return b("div", unary("sin", x), unary("cos", x))


def sinh(x: Value) -> Value:
    return b("mul", b("sub", unary("expm1", x), unary("expm1", unary("neg", x))), 0.5)


def cosh(x: Value) -> Value:
    return b("mul", b("add", unary("exp", x), unary("exp", unary("neg", x))), 0.5)


def asinh(x: Value) -> Value:
    ax = unary("abs", x)
    x2 = b("mul", ax, ax)
    small = unary("log1p", b("add", ax, b("div", x2, b("add", unary("sqrt", b("add", x2, 1.0)), 1.0))))
    large = b("add", unary("log", ax), math.log(2.0))
    mag = where(compare("gt", ax, 1e18), large, small, x.dtype)
    return b("copysign", mag, x)


def acosh(x: Value) -> Value:
    """NaN below 1: for ``x <= -1`` the product ``(x - 1)(x + 1)`` is positive and the formula
    gave a number (-inf at -4128, 0 at -5.6e14, +inf at -1e30)."""
    xm1 = b("sub", x, 1.0)
    small = unary("log1p", b("add", xm1, unary("sqrt", b("mul", xm1, b("add", x, 1.0)))))
    large = b("add", unary("log", x), math.log(2.0))
    value = where(compare("gt", x, 1e18), large, small, x.dtype)
    return where(compare("lt", x, 1.0), const(float("nan"), x.dtype), value, x.dtype)


def atanh(x: Value) -> Value:
    return b("mul", unary("log1p", b("div", b("mul", x, 2.0), b("sub", const(1.0, x.dtype), x))), 0.5)


def atan(x: Value) -> Value:
    dt = x.dtype
    ax = unary("abs", x)
    big = compare("gt", ax, 1.0)
    t = where(big, b("div", const(1.0, dt), ax), ax, dt)
    tan15 = 2.0 - math.sqrt(3.0)
    mid = compare("gt", t, tan15)
    sqrt3 = math.sqrt(3.0)
    u = where(mid, b("div", b("sub", b("mul", t, sqrt3), 1.0), b("add", t, sqrt3)), t, dt)
    u2 = b("mul", u, u)
    coeffs = [1.0 / (2 * k + 1) * (-1) ** k for k in range(8)]
    poly: Value = const(coeffs[-1], dt)
    for c in reversed(coeffs[:-1]):
        poly = b("add", b("mul", poly, u2), c)
    r = b("mul", poly, u)
    r = where(mid, b("add", r, math.pi / 6), r, dt)
    r = where(big, b("sub", const(math.pi / 2, dt), r), r, dt)
    r = where(unary_pred("isnan", x), x, r, dt)
    return b("copysign", r, x)


def asin(x: Value) -> Value:
    one = const(1.0, x.dtype)
    den = unary("sqrt", b("mul", b("sub", one, x), b("add", one, x)))
    return atan(b("div", x, den))


def acos(x: Value) -> Value:
    one = const(1.0, x.dtype)
    ratio = unary("sqrt", b("div", b("sub", one, x), b("add", one, x)))
    return b("mul", atan(ratio), 2.0)


def atan2(y: Value, x: Value) -> Value:
    dt = y.dtype
    ay, ax = unary("abs", y), unary("abs", x)
    num = b("min", ay, ax)
    den = b("max", ay, ax)
    both_inf = compare("eq", num, math.inf)
    r = where(compare("eq", den, 0.0), const(0.0, dt), b("div", num, den), dt)
    r = where(both_inf, const(1.0, dt), r, dt)
    a = atan(r)
    a = where(compare("gt", ay, ax), b("sub", const(math.pi / 2, dt), a), a, dt)
    x_neg = unary_pred("signbit", x)
    a = where(x_neg, b("sub", const(math.pi, dt), a), a, dt)
    a = b("copysign", a, y)
    return where(unary_pred("isnan", x), x, where(unary_pred("isnan", y), y, a, dt), dt)


def is_integer(x: Value) -> Value:
    return compare("eq", unary("floor", x), x)


def pow_tensor(a: Value, e: Value) -> Value:
    """``a ** e`` elementwise for float tensors (computed in float64 lanes), with C's ``pow``
    special values as eager: ``|a| ** e`` is ``exp(e log|a|)`` (0 and inf for a zero or
    infinite ``a`` or ``e`` through the arithmetic); a negative ``a`` (-0 and -inf included)
    with an odd integer ``e`` negates it; a finite negative ``a`` with a finite non-integer
    ``e`` is NaN; ``pow(-1, +-inf)``, ``pow(1, e)`` and ``pow(a, 0)`` are 1, even for NaN."""
    dt = a.dtype
    d = torch.float64
    a64, e64 = cast(a, d), cast(e, d)
    mag = unary("exp", b("mul", e64, unary("log", unary("abs", a64))), d)
    finite_e = unary_pred("isfinite", e64)
    integer = b("and", is_integer(e64), finite_e)
    half = b("mul", e64, 0.5)
    odd = b("and", integer, compare("ne", unary("floor", half), half))
    signed = where(b("and", unary_pred("signbit", a64), odd), unary("neg", mag), mag, d)
    bad = b("and", b("and", compare("lt", a64, 0.0), unary_pred("isfinite", a64)),
            b("and", finite_e, compare("eq", integer, False, torch.bool)))
    res = where(bad, const(math.nan, d), signed, d)
    one = b("or", b("or", compare("eq", e64, 0.0), compare("eq", a64, 1.0)),
            b("and", compare("eq", a64, -1.0), unary_pred("isinf", e64)))
    res = where(one, const(1.0, d), res, d)
    return cast(res, dt)


def hypot(x: Value, y: Value) -> Value:
    """``sqrt(x^2 + y^2)`` without overflow or underflow, and +inf when either is infinite,
    even with a NaN (C's ``hypot``, which eager calls).  float32 squares and sums exactly
    enough in float64; float64 is scaled by the larger magnitude."""
    dt = x.dtype
    ax, ay = unary("abs", x), unary("abs", y)
    if dt == torch.float32:
        d = torch.float64
        x64, y64 = cast(ax, d), cast(ay, d)
        r = cast(unary("sqrt", b("add", b("mul", x64, x64), b("mul", y64, y64)), d), dt)
    else:
        big, small = b("max", ax, ay), b("min", ax, ay)
        ratio = b("div", small, big)
        r = b("mul", big, unary("sqrt", b("add", b("mul", ratio, ratio), 1.0)))
        r = where(compare("eq", big, 0.0), const(0.0, dt), r, dt)
    inf = b("or", compare("eq", ax, math.inf), compare("eq", ay, math.inf))
    return where(inf, const(math.inf, dt), r, dt)


def lerp(start: Value, end: Value, weight: Value) -> Value:
    """torch.lerp in eager's two forms, each one fused multiply-add: ``start + w (end - start)``
    where ``|w| < 0.5``, else ``end + (w - 1) (end - start)`` (they differ on infinite ends:
    lerp(0, inf, 1) is NaN; and the single rounding keeps lerp(0, 3e38, -1) finite).  float32
    forms the product and sum in float64 (the product is exact there); a constant weight picks
    its form at compile time."""
    dt = start.dtype
    diff = b("sub", end, start)

    def fused(coeff: Value, base: Value) -> Value:
        if dt != torch.float32:
            return b("add", b("mul", coeff, diff), base)
        d = torch.float64
        return cast(b("add", b("mul", cast(coeff, d), cast(diff, d)), cast(base, d)), dt)

    if isinstance(weight, Const):
        w = float(weight.value)
        return fused(weight, start) if abs(w) < 0.5 else fused(b("sub", weight, 1.0), end)
    small = compare("lt", unary("abs", weight), 0.5)
    return fused(where(small, weight, b("sub", weight, 1.0), dt), where(small, start, end, dt))


def pow_scalar(x: Value, exponent: float) -> Value:
    """``x ** exponent`` with the common exponents as plain arithmetic."""
    dt = x.dtype
    if exponent == 1:
        return x
    if exponent == 2:
        return b("mul", x, x)
    if exponent == 3:
        return b("mul", b("mul", x, x), x)
    if exponent == 0:
        return const(1.0, dt)
    if exponent == 0.5:
        return unary("sqrt", x)
    if exponent == -0.5:
        return unary("rsqrt", x)
    if exponent == -1:
        return unary("reciprocal", x)
    if exponent == -2:
        return unary("reciprocal", b("mul", x, x))
    return unary("pow", x, exponent=float(exponent))


def int_pow(x: Value, exponent: int) -> Value:
    if exponent < 0:
        raise ValueError("negative integer exponent")
    result: Value = const(1, x.dtype)
    base = x
    e = exponent
    while e:
        if e & 1:
            result = b("mul", result, base)
        e >>= 1
        if e:
            base = b("mul", base, base)
    return result


#: Exponents of the float64 stages of :func:`float_fmod`: a float32 quotient ``|x / y|`` is
#: below ``2**277`` (``2**128 / 2**-149``); each stage removes at most ``2**29`` multiples of
#: ``|y| * 2**m``, so every product ``k * |y| * 2**m`` (29 + 24 bits) is exact in float64.
_FMOD_STAGES = tuple(range(261, -1, -29))


def _fmod_stages(x: Value, y: Value) -> tuple[int, ...]:
    """The stages ``float_fmod`` needs: for a constant ``y``, those whose ``|y| * 2**m`` can be
    at most a float32 ``|x|`` (below ``2**128``); the others leave ``r`` unchanged. Fewer stages
    is less code, and LLVM's optimizer ran for minutes on the full chain of ten in a scalar
    kernel (fuzz seed 3 program 1644: ``remainder(x, -0.75)`` inside ``logsumexp``). The first
    stage kept has ``2**29 * |y| * 2**m >= 2**129``, above any finite ``|x|``, as the algorithm needs;
    each stage left out has ``|y| * 2**m >= 2**129``, where ``k = 0``."""
    from ziggurat.backends.cpu.lowering.values import Const

    if (x.dtype != torch.float32 or not isinstance(y, Const) or not isinstance(y.value, float)
            or not math.isfinite(y.value) or y.value == 0):
        return _FMOD_STAGES
    limit = 128 - math.floor(math.log2(abs(y.value)))  # |y| * 2**m >= 2**128 beyond this
    return tuple(m for m in _FMOD_STAGES if m <= limit)


def float_fmod(x: Value, y: Value) -> Value:
    """C ``fmod`` of float32 values, exact (as torch's): ``x - trunc(x / y) * y`` computed in
    float32 (or float64) loses the low bits whenever the quotient is large (``fmod(1e6, 0.1)``).

    The remainder is reduced modulo ``|y| * 2**m`` for ``m`` = 261, 232, ..., 0 in float64: at
    each stage the quotient is below ``2**29`` so ``k = trunc(r / Y)`` is exact or one too
    large, ``k * Y`` is exact, ``r - k * Y`` is exact (Sterbenz), and one too large leaves a
    small negative remainder that ``+ Y`` makes exact again.  NaN and a zero ``y`` give NaN
    through the arithmetic; an infinite ``y`` returns ``x``."""
    dt = x.dtype
    d = torch.float64
    x64, y64 = cast(x, d), cast(y, d)
    ax, ay = unary("abs", x64), unary("abs", y64)
    r = ax
    for m in _fmod_stages(x, y):
        big = b("mul", ay, 2.0 ** m) if m else ay
        k = unary("trunc", b("div", r, big))
        r = b("sub", r, b("mul", k, big))
        r = where(compare("lt", r, 0.0), b("add", r, big), r, d)
    inf_y = b("and", compare("eq", ay, math.inf), compare("ne", ax, math.inf))
    r = where(inf_y, ax, r, d)
    return cast(b("copysign", r, x64), dt)


def _signs_differ(r: Value, y: Value) -> Value:
    """``r != 0`` and ``r`` and ``y`` on different sides of zero (a remainder to move by ``y``)."""
    return b("and", compare("ne", r, 0), compare("ne", compare("lt", r, 0), compare("lt", y, 0)))


def floor_divide(x: Value, y: Value) -> Value:
    """Python's ``x // y`` as torch computes it (``c10::div_floor_floating`` on floats: from the
    exact ``fmod``, so ``1 // 0.1 == 9``, not ``floor(1 / 0.1) == 10``)."""
    if not x.dtype.is_floating_point:
        return Binary("floordiv", x, y)
    dt = x.dtype
    mod = float_fmod(x, y)
    q = b("div", b("sub", x, mod), y)
    q = where(_signs_differ(mod, y), b("sub", q, 1.0), q, dt)
    fl = unary("floor", q)
    fl = where(compare("gt", b("sub", q, fl), 0.5), b("add", fl, 1.0), fl, dt)
    zero = b("copysign", const(0.0, dt), b("div", x, y))
    out = where(compare("ne", q, 0.0), fl, zero, dt)
    return where(compare("eq", y, 0.0), b("div", x, y), out, dt)


def remainder(x: Value, y: Value) -> Value:
    """Python's ``x % y`` (the sign of ``y``), from the exact ``fmod`` on floats as torch."""
    if not x.dtype.is_floating_point:
        return Binary("mod", x, y)
    mod = float_fmod(x, y)
    return where(_signs_differ(mod, y), b("add", mod, y), mod, x.dtype)


def fmod(x: Value, y: Value) -> Value:
    """C's ``fmod`` (the sign of ``x``)."""
    if x.dtype.is_floating_point:
        return float_fmod(x, y)
    r = Binary("mod", x, y)
    # floor -> trunc remainder: a nonzero remainder whose sign differs from x's moves back by y
    return where(_signs_differ(r, x), b("sub", r, y), r, x.dtype)


def trunc_divide(x: Value, y: Value) -> Value:
    """``x / y`` rounded toward zero (``rounding_mode="trunc"``)."""
    if x.dtype.is_floating_point:
        return unary("trunc", b("div", x, y))
    q = Binary("floordiv", x, y)
    r = b("sub", x, b("mul", q, y))
    # floor -> trunc quotient: a nonzero remainder when x and y differ in sign rounds up by one
    fix = b("and", compare("ne", r, 0), compare("ne", compare("lt", x, 0), compare("lt", y, 0)))
    return where(fix, b("add", q, 1), q, x.dtype)


__all__ = ["F", "_c"]
