"""Exponential and logarithm kernels: exp, exp2, expm1, log, log2, log10, log1p, pow.

Algorithms (all branch-free, evaluated lane-wise with FMA):

* ``exp``: ``n = rint(x / ln2)``, ``r = x - n*ln2`` with a two-word ln2 (exact first step
  thanks to the FMA), ``exp(r) = 1 + r + r^2 P(r)`` on ``|r| <= ln2/2``; the result is scaled by
  ``2^n`` as two exponent-bit multiplies ``2^(n>>1) * 2^(n - n>>1)`` so that overflow gives inf
  and gradual underflow rounds once, into the denormals.
* ``expm1``: same reduction, ``expm1(r) = r + r^2/2 + r^3 P(r)``, then
  ``expm1(x) = 2^n * expm1(r) + (2^n - 1)`` with one FMA (exact for ``n == 0``, which is what
  keeps the relative error small near 0).
* ``log``: ``x = 2^e * m`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` by integer arithmetic on the
  bits (denormals are pre-scaled by ``2^23``), ``f = m - 1`` (exact), then
  f32: ``log1p(f) = f - f^2/2 + f^3 P(f)``; f64: ``s = f/(2+f)``,
  ``log1p(f) = f - s*(f - s^2 R(s^2))``; ``log = e*ln2 + log1p(f)``.
* ``log1p``: the exponent ``e`` of ``1 + x`` is taken from the rounded sum but the mantissa is
  rebuilt exactly as ``f = x*2^-e + (2^-e - 1)`` with one FMA, so no information is lost to
  the rounding of ``1 + x``.
* ``pow``: for f32 operands the whole computation runs in f64 lanes (``exp(y * log|x|)``, the
  f64 kernels above) and is rounded once at the end, so the error does not grow with
  ``|y log x|``; C99/torch special cases (integer exponents of negative bases, zeros,
  infinities, NaN, ``pow(x, 0) = 1``, ``pow(1, y) = 1``) are applied with selects.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F64, value_type
from ziggurat.backends.cpu.vecmath import coeffs as K
from ziggurat.backends.cpu.vecmath.builder import VB

# Inputs outside these limits give exp() == 0 / inf (f32, f64); they also keep 2^n in range.
_EXP_LIMITS = {"f32": (-104.0, 89.0), "f64": (-746.0, 710.0)}
# Lower clamp of exp_parts(zero_below=True): m*s1*s2 stays exact down to here (s1, s2 normal),
# so a factor y of moderate size can still be applied before the single final rounding.
_EXP_PARTS_LOW = {"f32": -150.0, "f64": -1100.0}
_EXP2_LIMITS = {"f32": (-151.0, 129.0), "f64": (-1076.0, 1025.0)}
# expm1(x) == -1 below these (rounded); above the exp limits it is inf.
_EXPM1_LOW = {"f32": -30.0, "f64": -40.0}
_MAX_EXP = {"f32": 127, "f64": 1023}
# Bit patterns of the largest value <= sqrt(1/2): the log reduction maps the mantissa to
# [sqrt(1/2), sqrt(2)) by subtracting this and taking the arithmetic-shifted exponent.
_SQRT_HALF_BITS = {"f32": 0x3F3504F3, "f64": 0x3FE6A09E667F3BCC}
# log1p pre-scales huge x (where log1p(x) == log(x) to working precision) to keep 2^-e normal.
_LOG1P_BIG = {"f32": (2.0 ** 100, -50), "f64": (2.0 ** 1000, -500)}


def _tab(v: VB, name: str) -> tuple[float, ...]:
    return getattr(K, f"{name}_{v.fmt.name.upper()}")


# --------------------------------------------------------------------------- exp family
def _pow2_factors(v: VB, n: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(2^(n>>1), 2^(n - n>>1)) for float-valued integer lanes n in the clamped exp range."""
    ni = v.fptosi(n)
    n1 = v.ashr(ni, 1)
    return v.pow2i(n1), v.pow2i(v.isub(ni, n1))


def _exp_poly(v: VB, r: ir.Value) -> ir.Value:
    """exp(r) for |r| <= ln2/2 (plus rounding slack)."""
    p = v.poly(r, _tab(v, "EXP"))
    return v.add(v.fma(v.mul(r, r), p, r), v.c(1.0))


def _reduce_ln2(v: VB, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(n, r) with x = n*ln2 + r, |r| <= ln2/2 (Cody-Waite with a two-word ln2)."""
    ln2_hi, ln2_lo = _tab(v, "LN2")
    n = v.rint(v.mul(x, v.c(_tab(v, "LOG2E")[0])))
    r = v.fma(n, v.c(-ln2_hi), x)
    r = v.fma(n, v.c(-ln2_lo), r)
    return n, r


def exp_parts(v: VB, x: ir.Value, lo: ir.Value | None = None,
              zero_below: bool = False) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(m, s1, s2) with exp(x + lo) = (m * s1) * s2, m in [0.7, 1.42] and s1, s2 normal powers of two.

    Callers that multiply the exponential by another factor y should form ``((y*m)*s1)*s2``:
    the scaling then rounds once, so results in the denormal range stay correctly rounded
    instead of being built from an already-underflowed exp.  ``lo`` is an optional small
    correction (|lo| << ulp(x)) added after the reduction -- a double-word argument such as
    ``-z^2`` computed exactly.  NaN lanes give arbitrary finite values (callers fix them).
    Arguments below the underflow limit are clamped, which leaves ``m*s1*s2`` at the smallest
    scale; ``zero_below=True`` moves the clamp further down (-150 for f32) and returns ``m = 0``
    beyond it, as needed when the caller multiplies by an unbounded factor.
    """
    lo_lim, hi_lim = _EXP_LIMITS[v.fmt.name]
    if zero_below:
        lo_lim = _EXP_PARTS_LOW[v.fmt.name]
    xc = v.min_ord(v.max_ord(x, v.c(lo_lim)), v.c(hi_lim))
    n, r = _reduce_ln2(v, xc)
    if lo is not None:
        r = v.add(r, lo)
    s1, s2 = _pow2_factors(v, n)
    m = _exp_poly(v, r)
    if zero_below:
        m = v.sel(v.lt(x, v.c(lo_lim)), v.c(0.0), m)
    return m, s1, s2


def exp_normal_parts(v: VB, x: ir.Value, lo: ir.Value | None = None) -> tuple[ir.Value, ir.Value]:
    """(m, s) with exp(x + lo) = m * s, s a power of two, for a caller that bounds ``x`` to where
    ``exp`` is a normal number and its reduction stays in range (f32: ``[-87, 88]``): no clamps,
    no second scale factor, no NaN handling -- the cheap form for an activation's inner ``exp``."""
    n, r = _reduce_ln2(v, x)
    if lo is not None:
        r = v.add(r, lo)
    return _exp_poly(v, r), v.pow2i(v.fptosi(n))


def scale2(v: VB, y: ir.Value, s1: ir.Value, s2: ir.Value) -> ir.Value:
    """(y * s1) * s2 -- apply the power-of-two factors of :func:`exp_parts`."""
    return v.mul(v.mul(y, s1), s2)


def exp_core(v: VB, x: ir.Value, lo: ir.Value | None = None) -> ir.Value:
    """exp(x + lo) for finite or infinite x; NaN lanes give an arbitrary finite value."""
    m, s1, s2 = exp_parts(v, x, lo)
    return scale2(v, m, s1, s2)


def exp(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """e**x."""
    v = VB(b, x)
    return v.keep_nan(x, exp_core(v, x))


def exp2(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """2**x (exact for integer x in range)."""
    v = VB(b, x)
    lo_lim, hi_lim = _EXP2_LIMITS[v.fmt.name]
    xc = v.min_ord(v.max_ord(x, v.c(lo_lim)), v.c(hi_lim))
    n = v.rint(xc)
    f = v.sub(xc, n)  # exact, |f| <= 1/2
    ln2_hi, ln2_lo = _tab(v, "LN2")
    r = v.fma(f, v.c(ln2_hi), v.mul(f, v.c(ln2_lo)))
    s1, s2 = _pow2_factors(v, n)
    return v.keep_nan(x, scale2(v, _exp_poly(v, r), s1, s2))


def expm1_core(v: VB, x: ir.Value) -> ir.Value:
    """exp(x) - 1 without the NaN / signed-zero fixups."""
    xc = v.min_ord(v.max_ord(x, v.c(_EXPM1_LOW[v.fmt.name])), v.c(_EXP_LIMITS[v.fmt.name][1]))
    n, r = _reduce_ln2(v, xc)
    q = v.poly(r, _tab(v, "EXPM1"))
    u = v.fma(q, r, v.c(0.5))
    em = v.fma(u, v.mul(r, r), r)  # expm1(r)
    ni = v.fptosi(n)
    nc = v.imin(ni, v.ci(_MAX_EXP[v.fmt.name]))
    s = v.pow2i(nc)
    res = v.fma(s, em, v.sub(s, v.c(1.0)))
    return v.mul(res, v.pow2i(v.isub(ni, nc)))  # extra factor 2^(n - nc) only near overflow


def expm1(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """e**x - 1, accurate in relative terms near 0."""
    v = VB(b, x)
    res = expm1_core(v, x)
    res = v.sel(v.eq(x, v.c(0.0)), x, res)  # keeps -0
    return v.keep_nan(x, res)


# --------------------------------------------------------------------------- log family
def _log1p_reduced(v: VB, f: ir.Value) -> ir.Value:
    """log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]."""
    if v.is_f32:
        p = v.poly(f, K.LOG1P_F32)
        u = v.fma(p, f, v.c(-0.5))
        return v.fma(u, v.mul(f, f), f)
    s = v.div(f, v.add(f, v.c(2.0)))
    q = v.mul(s, s)
    rr = v.poly(q, K.ATANH_F64)
    w = v.fma(v.neg(q), rr, f)  # f - s^2 R
    return v.fma(v.neg(s), w, f)  # f - s (f - s^2 R) == 2s + s^3 R


def _mant_exp(v: VB, bits: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Integer exponent k and mantissa m in [sqrt(1/2), sqrt(2)) with value == m * 2^k."""
    mant = v.fmt.mant_bits
    k = v.ashr(v.isub(bits, v.ci(_SQRT_HALF_BITS[v.fmt.name])), mant)
    m = v.from_bits(v.isub(bits, v.shl(k, mant)))
    return k, m


def log_parts(v: VB, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(e, l) with log(x) = e*ln2 + l for positive finite x (denormals included)."""
    mant = v.fmt.mant_bits
    tiny = v.lt(x, v.c(v.fmt.min_normal))
    xs = v.sel(tiny, v.mul(x, v.c(2.0 ** mant)), x)
    k, m = _mant_exp(v, v.to_bits(xs))
    e = v.add(v.sitofp(k), v.sel(tiny, v.c(-float(mant)), v.c(0.0)))
    return e, _log1p_reduced(v, v.sub(m, v.c(1.0)))


def _log_specials(v: VB, x: ir.Value, res: ir.Value, at_zero: float, below: ir.Value) -> ir.Value:
    """NaN for x < 'below', -inf at the pole, +inf/NaN pass through."""
    res = v.sel(v.lt(x, below), v.c(float("nan")), res)
    res = v.sel(v.eq(x, v.c(at_zero)), v.c(float("-inf")), res)
    return v.sel(v.ueq(x, v.c(float("inf"))), x, res)


def log_core(v: VB, x: ir.Value) -> ir.Value:
    """Natural log with IEEE special cases."""
    e, lf = log_parts(v, x)
    ln2_hi, ln2_lo = _tab(v, "LN2")
    res = v.fma(e, v.c(ln2_hi), v.fma(e, v.c(ln2_lo), lf))
    return _log_specials(v, x, res, 0.0, v.c(0.0))


def log(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Natural logarithm (log(0) = -inf, log(x<0) = NaN)."""
    return log_core(VB(b, x), x)


def log2(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Base-2 logarithm (exact for powers of two)."""
    v = VB(b, x)
    e, lf = log_parts(v, x)
    hi, lo = _tab(v, "LOG2E")
    res = v.fma(lf, v.c(hi), v.fma(lf, v.c(lo), e))
    return _log_specials(v, x, res, 0.0, v.c(0.0))


def log10(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Base-10 logarithm."""
    v = VB(b, x)
    e, lf = log_parts(v, x)
    lg_hi, lg_lo = _tab(v, "LOG10_2")
    le_hi, le_lo = _tab(v, "LOG10E")
    t = v.fma(lf, v.c(le_lo), v.mul(e, v.c(lg_lo)))
    t = v.fma(lf, v.c(le_hi), t)
    res = v.fma(e, v.c(lg_hi), t)
    return _log_specials(v, x, res, 0.0, v.c(0.0))


def log1p_core(v: VB, x: ir.Value) -> ir.Value:
    """log(1 + x) for x >= -1 finite or +inf; no NaN/zero-sign fixups."""
    big_at, big_shift = _LOG1P_BIG[v.fmt.name]
    big = v.gt(x, v.c(big_at))
    xs = v.sel(big, v.mul(x, v.c(2.0 ** big_shift)), x)
    u = v.add(xs, v.c(1.0))
    k, _ = _mant_exp(v, v.to_bits(u))
    s = v.pow2i(v.isub(v.ci(0), k))
    f = v.fma(xs, s, v.sub(s, v.c(1.0)))  # (1 + x) * 2^-k - 1 with one rounding
    e = v.add(v.sitofp(k), v.sel(big, v.c(-float(big_shift)), v.c(0.0)))
    ln2_hi, ln2_lo = _tab(v, "LN2")
    return v.fma(e, v.c(ln2_hi), v.fma(e, v.c(ln2_lo), _log1p_reduced(v, f)))


def log1p(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """log(1 + x), accurate in relative terms near 0."""
    v = VB(b, x)
    res = log1p_core(v, x)
    res = v.sel(v.eq(x, v.c(0.0)), x, res)  # keeps -0
    return _log_specials(v, x, res, -1.0, v.c(-1.0))


# --------------------------------------------------------------------------- pow
def _is_odd_integer(v: VB, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(y is an integer (or +-inf), y is an odd integer)."""
    is_int = v.eq(v.rint(y), y)
    half = v.mul(y, v.c(0.5))
    odd = v.band(is_int, v.ne(v.rint(half), half))
    return is_int, odd


def _pow_same(v: VB, x: ir.Value, y: ir.Value) -> ir.Value:
    """pow in the lanes' own precision (used with f64 lanes)."""
    ax = v.abs(x)
    t = v.mul(y, log_core(v, ax))
    r = exp_core(v, t)
    is_int, odd = _is_odd_integer(v, y)
    neg = v.b.icmp_signed("<", v.to_bits(x), v.ci(0))  # sign bit, includes -0 and -inf
    r = v.sel(v.band(neg, odd), v.neg(r), r)
    finite_neg = v.band(v.lt(x, v.c(0.0)), v.lt(ax, v.c(float("inf"))))
    r = v.sel(v.band(finite_neg, v.bnot(is_int)), v.c(float("nan")), r)
    r = v.sel(v.band(v.eq(ax, v.c(1.0)), v.eq(v.abs(y), v.c(float("inf")))), v.c(1.0), r)
    r = v.sel(v.b.fcmp_unordered("uno", x, y), v.c(float("nan")), r)
    r = v.sel(v.eq(y, v.c(0.0)), v.c(1.0), r)
    return v.sel(v.eq(x, v.c(1.0)), v.c(1.0), r)


_POW_SPECIAL_EXPONENTS = (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5)


def pow(b: ir.IRBuilder, x: ir.Value, y: ir.Value | float) -> ir.Value:
    """x**y with C99/torch semantics; ``y`` may be an IR value (same type as x) or a Python number.

    Python-number exponents 0, 1, 2, 3, -1, -2, 0.5 and -0.5 are specialised the way torch's
    ``pow(Tensor, Scalar)`` kernel does (products, reciprocal, sqrt), everything else goes
    through the general path.
    """
    v = VB(b, x)
    if not isinstance(y, ir.Value):
        yf = float(y)
        if yf == 0.0:
            return v.c(1.0)
        if yf == 1.0:
            return x
        if yf == 2.0:
            return v.mul(x, x)
        if yf == 3.0:
            return v.mul(v.mul(x, x), x)
        if yf == -1.0:
            return v.div(v.c(1.0), x)
        if yf == -2.0:
            return v.div(v.c(1.0), v.mul(x, x))
        if yf == 0.5:
            return v.sqrt(x)
        if yf == -0.5:
            return v.div(v.c(1.0), v.sqrt(x))
        y = v.c(yf)
    if value_type(y) != value_type(x):
        raise TypeError(f"pow: exponent type {value_type(y)} differs from base type {value_type(x)}")
    if not v.is_f32:
        return _pow_same(v, x, y)
    vd = v.retyped(F64)
    return v.fptrunc(_pow_same(vd, v.fpext(x, vd), v.fpext(y, vd)), v)
