"""sin and cos (f32 lanes).

The argument reduction runs in f64 lanes: ``q = rint(x * 2/pi)``, ``r = x - q*pi/2`` with a
three-word f64 pi/2 and FMAs (Cody-Waite, ~160 bits of pi/2), then ``r`` is rounded to f32 and
``sin(r) = r + r^3 P(r^2)``, ``cos(r) = 1 - r^2/2 + r^4 C(r^2)`` are evaluated in f32 on
``|r| <= pi/4``; the quadrant picks the polynomial and the sign.  An f32-only reduction
(four f32 words of pi/2) was measured to break down past |x| ~ 2e6; the f64 one is exact while
``q*pi/2`` is resolved by the three words: measured <= 1.3e-7 relative error up to
``|x| = 1e14``, ~4 ulp at 1e15.  Inputs with ``|x| >= 2^49`` (~5.6e14), which would need a
Payne-Hanek reduction, return NaN rather than a silently wrong number (torch returns the
correctly reduced value there).  sin(+-inf) = cos(+-inf) = NaN.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F64, instr
from ziggurat.backends.cpu.vecmath import coeffs as K
from ziggurat.backends.cpu.vecmath.builder import VB

_X_LIMIT = float(2 ** 49)  # supported |x|; NaN beyond
_Q_LIMIT = float(2 ** 60)  # clamp before fptosi (quadrant bits are taken from the low bits)


def _require_f32(v: VB, name: str) -> None:
    if not v.is_f32:
        raise TypeError(f"vecmath.{name}: only f32 lanes are supported (got f64)")


def _sincos_parts(v: VB, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(sin(r), cos(r), quadrant q as integer lanes) with x = q*pi/2 + r."""
    vd = v.retyped(F64)
    xd = v.fpext(x, vd)
    q = vd.rint(vd.mul(xd, vd.c(K.TWO_OVER_PI_F64[0])))
    rd = xd
    for part in K.PI_2_F64:
        rd = vd.fma(q, vd.c(-part), rd)
    r = vd.fptrunc(rd, v)
    s = v.mul(r, r)
    sn = v.fma(v.mul(r, s), v.poly(s, K.SIN_F32), r)
    cs = v.fma(v.mul(s, s), v.poly(s, K.COS_F32), v.fma(s, v.c(-0.5), v.c(1.0)))
    qc = vd.min_ord(vd.max_ord(q, vd.c(-_Q_LIMIT)), vd.c(_Q_LIMIT))  # keep fptosi defined
    return sn, cs, instr(v.b.trunc(vd.fptosi(qc), v.ity))


def _flip_sign(v: VB, val: ir.Value, qi: ir.Value) -> ir.Value:
    """Negate lanes whose quadrant has bit 1 set (xor of the sign bit)."""
    sign = v.shl(instr(v.b.and_(qi, v.ci(2))), v.fmt.bits - 2)
    return v.from_bits(instr(v.b.xor(v.to_bits(val), sign)))


def sin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Sine."""
    v = VB(b, x)
    _require_f32(v, "sin")
    sn, cs, qi = _sincos_parts(v, x)
    odd = v.b.icmp_signed("!=", v.b.and_(qi, v.ci(1)), v.ci(0))
    res = _flip_sign(v, v.sel(odd, cs, sn), qi)
    res = v.sel(v.lt(v.abs(x), v.c(2.0 ** -12)), x, res)  # sin(x) == x there; keeps -0
    return _unsupported_nan(v, x, res)


def cos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Cosine."""
    v = VB(b, x)
    _require_f32(v, "cos")
    sn, cs, qi = _sincos_parts(v, x)
    odd = v.b.icmp_signed("!=", v.b.and_(qi, v.ci(1)), v.ci(0))
    return _unsupported_nan(v, x, _flip_sign(v, v.sel(odd, sn, cs), v.iadd(qi, v.ci(1))))


def _unsupported_nan(v: VB, x: ir.Value, res: ir.Value) -> ir.Value:
    return v.sel(v.uge(v.abs(x), v.c(_X_LIMIT)), v.c(float("nan")), res)
