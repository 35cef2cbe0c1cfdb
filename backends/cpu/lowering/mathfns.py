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
from ziggurat.backends.cpu.lowering.values import Binary, Value

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
    xm1 = b("sub", x, 1.0)
    small = unary("log1p", b("add", xm1, unary("sqrt", b("mul", xm1, b("add", x, 1.0)))))
    large = b("add", unary("log", x), math.log(2.0))
    return where(compare("gt", x, 1e18), large, small, x.dtype)


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
    """``a ** e`` elementwise for float tensors (computed in float64 lanes)."""
    dt = a.dtype
    d = torch.float64
    a64, e64 = cast(a, d), cast(e, d)
    mag = unary("exp", b("mul", e64, unary("log", unary("abs", a64))), d)
    half = b("mul", e64, 0.5)
    odd = b("and", is_integer(e64), compare("ne", unary("floor", half), half))
    neg = compare("lt", a64, 0.0)
    signed = where(b("and", neg, odd), unary("neg", mag), mag, d)
    res = where(b("and", neg, compare("eq", is_integer(e64), False, torch.bool)), const(math.nan, d), signed, d)
    res = where(compare("eq", e64, 0.0), const(1.0, d), res, d)
    res = where(compare("eq", a64, 1.0), const(1.0, d), res, d)
    return cast(res, dt)


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


def floor_divide(x: Value, y: Value) -> Value:
    if x.dtype.is_floating_point:
        q = b("div", x, y)
        return unary("floor", q)
    return Binary("floordiv", x, y)


def remainder(x: Value, y: Value) -> Value:
    if x.dtype.is_floating_point:
        r = b("sub", x, b("mul", unary("floor", b("div", x, y)), y))
        return r
    return Binary("mod", x, y)


def fmod(x: Value, y: Value) -> Value:
    if x.dtype.is_floating_point:
        return b("sub", x, b("mul", unary("trunc", b("div", x, y)), y))
    q = b("sub", Binary("floordiv", x, y), const(0, x.dtype))
    r = b("sub", x, b("mul", q, y))
    # floor -> trunc: when the remainder is nonzero and the signs differ, step one back
    fix = b("and", compare("ne", r, 0), compare("ne", compare("lt", r, 0), compare("lt", y, 0)))
    return where(fix, b("sub", r, y), r, x.dtype)


__all__ = ["F", "_c"]
