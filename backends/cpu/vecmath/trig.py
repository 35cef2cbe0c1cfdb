"""sin and cos (f32 lanes).

The argument reduction runs in f64 lanes: ``q = rint(x * 2/pi)``, ``r = x - q*pi/2`` with a
three-word f64 pi/2 and FMAs (Cody-Waite, ~160 bits of pi/2), then ``r`` is rounded to f32 and
``sin(r) = r + r^3 P(r^2)``, ``cos(r) = 1 - r^2/2 + r^4 C(r^2)`` are evaluated in f32 on
``|r| <= pi/4``; the quadrant picks the polynomial and the sign.  An f32-only reduction
(four f32 words of pi/2) was measured to break down past |x| ~ 2e6; the f64 one is exact while
``q*pi/2`` is resolved by the three words: measured <= 1.3e-7 relative error up to
``|x| = 1e14``, ~4 ulp at 1e15.

Finite inputs with ``|x| >= 2^49`` (~5.6e14) take a Payne-Hanek reduction instead
(:func:`_huge_reduction`, out of line, called only for those lanes): ``x = m * 2^k`` with a
24-bit integer ``m``, so ``x * 2/pi mod 4`` is ``m * B_k mod 2^92`` scaled by ``2^-90``, where
``B_k`` holds the 92 bits of ``2/pi`` that can reach the last two integer bits and 90 fraction
bits of the product (the bits above it make multiples of 4; the ones below move the result by
less than ``2^-66``).  Those lanes returned NaN before, where torch returns the sine.
sin(+-inf) = cos(+-inf) = NaN.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F32, F64, I1, I32, I64, declare, for_range, instr
from ziggurat.backends.cpu.vecmath import coeffs as K
from ziggurat.backends.cpu.vecmath.builder import VB

_X_LIMIT = float(2 ** 49)  # |x| from which the Cody-Waite reduction is not exact
_Q_LIMIT = float(2 ** 60)  # clamp before fptosi (quadrant bits are taken from the low bits)
#: floor(2/pi * 2^256)
_TWO_OVER_PI_256 = 0xA2F9836E4E441529FC2757D1F534DDC0DB6295993C439041FE5163ABDEBBC561
#: ``x = m * 2^k`` with ``|x| >= 2^49``: ``k`` from 26 (2^49 = 2^23 * 2^26) to 104
_K_MIN, _K_MAX = 26, 104
_WINDOW = 92  # bits of 2/pi per k: 2 integer bits and 90 fraction bits of x * 2/pi
_I128 = ir.IntType(128)
_HUGE_FN = "zig_trig_reduce_huge"


def _window(k: int) -> int:
    """``floor(2/pi * 2^(k+90)) mod 2^92``."""
    return (_TWO_OVER_PI_256 >> (256 - (k + _WINDOW - 2))) & ((1 << _WINDOW) - 1)


def _huge_reduction(module: ir.Module) -> ir.Function:
    """``{double r, double q} zig_trig_reduce_huge(float x)`` for a finite ``|x| >= 2^49``:
    ``x = q * pi/2 + r``, ``|r| <= pi/4``, ``q`` an integer whose two low bits are the quadrant."""
    existing = module.globals.get(_HUGE_FN)
    if isinstance(existing, ir.Function):
        return existing
    ret = ir.LiteralStructType([F64, F64])
    fn = ir.Function(module, ir.FunctionType(ret, [F32]), name=_HUGE_FN)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")  # into the branch that needs it: no call in machine code
    table_ty = ir.ArrayType(_I128, _K_MAX - _K_MIN + 1)
    table = ir.GlobalVariable(module, table_ty, name=_HUGE_FN + ".2_over_pi")
    table.global_constant = True
    table.linkage = "internal"
    table.initializer = ir.Constant(table_ty, [_window(k) for k in range(_K_MIN, _K_MAX + 1)])  # pyright: ignore[reportAttributeAccessIssue]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    bits = b.bitcast(fn.args[0], I32)
    m = b.or_(b.and_(bits, ir.Constant(I32, 0x7FFFFF)), ir.Constant(I32, 0x800000))
    k = b.sub(b.and_(b.lshr(bits, ir.Constant(I32, 23)), ir.Constant(I32, 0xFF)), ir.Constant(I32, 127 + 23))
    at = b.gep(table, [ir.Constant(I32, 0), b.sub(k, ir.Constant(I32, _K_MIN))], inbounds=True)
    prod = b.and_(b.mul(b.zext(m, _I128), b.load(at)), ir.Constant(_I128, (1 << _WINDOW) - 1))
    frac_bits = _WINDOW - 2
    q = b.lshr(prod, ir.Constant(_I128, frac_bits))
    f = b.and_(prod, ir.Constant(_I128, (1 << frac_bits) - 1))
    upper = b.icmp_unsigned(">=", f, ir.Constant(_I128, 1 << (frac_bits - 1)))  # f >= 1/2: the next quadrant
    q = b.add(q, b.zext(upper, _I128))
    f = b.select(upper, b.sub(f, ir.Constant(_I128, 1 << frac_bits)), f)  # signed, |f| <= 2^89
    hi = b.sitofp(b.trunc(b.ashr(f, ir.Constant(_I128, 38)), I64), F64)  # exact: 52 bits
    lo = b.sitofp(b.trunc(b.and_(f, ir.Constant(_I128, (1 << 38) - 1)), I64), F64)
    turns = b.fadd(b.fmul(hi, ir.Constant(F64, 2.0 ** (38 - frac_bits))), b.fmul(lo, ir.Constant(F64, 2.0 ** -frac_bits)))
    r = b.fmul(turns, ir.Constant(F64, math.pi / 2))
    qd = b.uitofp(b.trunc(b.and_(q, ir.Constant(_I128, 3)), I32), F64)
    negative = b.icmp_signed("<", bits, ir.Constant(I32, 0))
    r = b.select(negative, b.fneg(r), r)
    qd = b.select(negative, b.fneg(qd), qd)
    out = b.insert_value(b.insert_value(ir.Constant(ret, ir.Undefined), r, 0), qd, 1)
    b.ret(out)
    return fn


def _reduce_huge_lanes(v: VB, x: ir.Value, q: ir.Value, rd: ir.Value) -> tuple[ir.Value, ir.Value]:
    """``(q, r)`` with the lanes of finite ``|x| >= 2^49`` reduced by :func:`_huge_reduction`
    (a branch taken only when a lane needs it)."""
    from ziggurat.backends.cpu.threads import entry_alloca

    b = v.b
    ax = v.abs(x)
    huge = instr(b.and_(instr(b.fcmp_ordered(">=", ax, v.c(_X_LIMIT))), instr(b.fcmp_ordered("<", ax, v.c(math.inf)))))
    fn = _huge_reduction(b.module)
    if v.width is None:
        before = b.block
        with b.if_then(huge, likely=False):
            parts = b.call(fn, [x])
            rd_huge, q_huge = b.extract_value(parts, 0), b.extract_value(parts, 1)
            reduced = b.block
        return _merged(b, F64, (q, rd), (q_huge, rd_huge), before, reduced)
    width = v.width
    vd = ir.VectorType(F64, width)
    anyhuge = b.call(declare(b.module, f"llvm.vector.reduce.or.v{width}i1", I1, [ir.VectorType(I1, width)]), [huge])
    before = b.block
    with b.if_then(anyhuge, likely=False):  # the common path keeps q and r in registers
        qs = entry_alloca(b, vd, name="trig.q")
        rs = entry_alloca(b, vd, name="trig.r")
        xs = entry_alloca(b, v.ty, name="trig.x")
        b.store(q, qs)
        b.store(rd, rs)
        b.store(x, xs)
        qp = b.bitcast(qs, F64.as_pointer())
        rp = b.bitcast(rs, F64.as_pointer())
        xp = b.bitcast(xs, F32.as_pointer())
        with for_range(b, 0, width, name="trig.lane") as lane:
            xl = b.load(b.gep(xp, [lane]))
            axl = b.call(declare(b.module, "llvm.fabs.f32", F32, [F32]), [xl])
            lane_huge = b.and_(b.fcmp_ordered(">=", axl, ir.Constant(F32, _X_LIMIT)),
                               b.fcmp_ordered("<", axl, ir.Constant(F32, math.inf)))
            with b.if_then(lane_huge):
                parts = b.call(fn, [xl])
                b.store(b.extract_value(parts, 0), b.gep(rp, [lane]))
                b.store(b.extract_value(parts, 1), b.gep(qp, [lane]))
        q_huge, rd_huge = b.load(qs), b.load(rs)
        reduced = b.block
    return _merged(b, vd, (q, rd), (q_huge, rd_huge), before, reduced)


def _merged(b: ir.IRBuilder, ty: ir.Type, plain: tuple[ir.Value, ir.Value], fixed: tuple[ir.Value, ir.Value],
            before: ir.Block | None, reduced: ir.Block | None) -> tuple[ir.Value, ir.Value]:
    """``(q, r)`` after the branch: ``plain`` from ``before``, ``fixed`` from ``reduced``."""
    out: list[ir.Value] = []
    for name, p, f in zip(("trig.q", "trig.r"), plain, fixed, strict=True):
        phi = b.phi(ty, name=name)
        phi.add_incoming(p, before)
        phi.add_incoming(f, reduced)
        out.append(phi)
    return out[0], out[1]


def _require_f32(v: VB, name: str) -> None:
    if not v.is_f32:
        raise TypeError(f"vecmath.{name}: only f32 lanes are supported (got f64)")


def _sincos_parts(v: VB, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(sin(r), cos(r), quadrant q as integer lanes) with x = q*pi/2 + r.

    Reused for a ``sin`` and ``cos`` of the same ``x`` emitted one after the other (in the block
    where the first ended, which it dominates): the branch of :func:`_reduce_huge_lanes` keeps
    LLVM from merging the two reductions itself (a loop of sin(t) + cos(t) was 40 % slower)."""
    cache: dict[ir.Value, tuple[ir.Block, tuple[ir.Value, ir.Value, ir.Value]]] = v.b.__dict__.setdefault("_zig_sincos", {})
    hit = cache.get(x)
    if hit is not None and hit[0] is v.b.block:
        return hit[1]
    parts = _compute_sincos_parts(v, x)
    cache[x] = (v.b.block, parts)  # pyright: ignore[reportArgumentType]
    return parts


def _compute_sincos_parts(v: VB, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    vd = v.retyped(F64)
    xd = v.fpext(x, vd)
    q = vd.rint(vd.mul(xd, vd.c(K.TWO_OVER_PI_F64[0])))
    rd = xd
    for part in K.PI_2_F64:
        rd = vd.fma(q, vd.c(-part), rd)
    q, rd = _reduce_huge_lanes(v, x, q, rd)
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
    """NaN for +-inf and NaN."""
    return v.sel(v.uge(v.abs(x), v.c(math.inf)), v.c(float("nan")), res)
