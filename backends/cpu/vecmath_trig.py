"""sin and cos (f32 lanes).

``q = rint(x * 2/pi)``, ``r = x - q*pi/2`` with a four-word pi/2 and FMAs (Cody-Waite), then
``sin(r) = r + r^3 P(r^2)`` and ``cos(r) = 1 - r^2/2 + r^4 C(r^2)`` on ``|r| <= pi/4``; the
quadrant picks the polynomial and the sign.  The reduction is accurate while ``q*pi/2`` is
resolved by the four words, i.e. for ``|x|`` up to about 1e5 (see the accuracy table in
``vecmath``); beyond that the result stays in [-1, 1] but loses relative accuracy
(no Payne-Hanek reduction).  sin(+-inf) = cos(+-inf) = NaN.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu import vecmath_coeffs as K
from ziggurat.backends.cpu.vecmath_ir import VB

_Q_LIMIT = float(2 ** 24)  # quadrant numbers are exact integers below this


def _require_f32(v: VB, name: str) -> None:
    if not v.is_f32:
        raise TypeError(f"vecmath.{name}: only f32 lanes are supported (got f64)")


def _sincos_parts(v: VB, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(sin(r), cos(r), quadrant q as integer lanes) with x = q*pi/2 + r."""
    q = v.rint(v.mul(x, v.c(K.TWO_OVER_PI_F32[0])))
    r = x
    for part in K.PI_2_F32:
        r = v.fma(q, v.c(-part), r)
    s = v.mul(r, r)
    sn = v.fma(v.mul(r, s), v.poly(s, K.SIN_F32), r)
    cs = v.fma(v.mul(s, s), v.poly(s, K.COS_F32), v.fma(s, v.c(-0.5), v.c(1.0)))
    qc = v.min_ord(v.max_ord(q, v.c(-_Q_LIMIT)), v.c(_Q_LIMIT))  # keep fptosi defined
    return sn, cs, v.fptosi(qc)


def _flip_sign(v: VB, val: ir.Value, qi: ir.Value) -> ir.Value:
    """Negate lanes whose quadrant has bit 1 set (xor of the sign bit)."""
    sign = v.shl(v.b.and_(qi, v.ci(2)), v.fmt.bits - 2)
    return v.from_bits(v.b.xor(v.to_bits(val), sign))


def sin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Sine."""
    v = VB(b, x)
    _require_f32(v, "sin")
    sn, cs, qi = _sincos_parts(v, x)
    odd = v.b.icmp_signed("!=", v.b.and_(qi, v.ci(1)), v.ci(0))
    res = _flip_sign(v, v.sel(odd, cs, sn), qi)
    return v.sel(v.lt(v.abs(x), v.c(2.0 ** -12)), x, res)  # sin(x) == x there; keeps -0


def cos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Cosine."""
    v = VB(b, x)
    _require_f32(v, "cos")
    sn, cs, qi = _sincos_parts(v, x)
    odd = v.b.icmp_signed("!=", v.b.and_(qi, v.ci(1)), v.ci(0))
    return _flip_sign(v, v.sel(odd, sn, cs), v.iadd(qi, v.ci(1)))
