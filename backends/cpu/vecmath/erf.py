"""Error-function kernels: erf, erfc and the exact (erf-based) GELU, for f32 and f64 lanes.

Two regions, both evaluated for every lane and merged with a select:

* ``|z| < 1/2``: ``erf(z) = z * (2/sqrt(pi) + z^2 P(z^2))`` with the leading constant as a
  two-word value, so the relative error stays at the rounding level down to the denormals.
* ``|z| >= 1/2``: ``erfc(z) = exp(-z^2) * Q(t)``, ``t = A / (A + z)``, where ``Q`` fits
  ``erfcx(z) = exp(z^2) erfc(z)`` on ``z in [0.5, 10.5]`` (f32: A = 1, degree 10) or
  ``[0.5, 27.5]`` (f64: A = 2, degree 24), i.e. up to where erfc underflows.  (A smaller A
  needs a higher degree but amplifies the rounding of ``t`` less; A = 3 cost f32 erfc
  ~1.5 ulp more.)  ``z^2`` is formed exactly as a two-word value (``hi = z*z``, ``lo = fma(z, z, -hi)``) and fed to the exp kernel, so the
  tail ``erfc`` (and therefore GELU for negative inputs, ``x * erfc(-x/sqrt2) / 2``) keeps
  full relative accuracy until it underflows.  For GELU the square is taken of ``x`` itself
  (``z^2 = x^2 / 2``) so the rounding of ``x / sqrt2`` does not enter the exponent.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.vecmath import coeffs as K
from ziggurat.backends.cpu.vecmath.builder import VB
from ziggurat.backends.cpu.vecmath.eager_zero import ZERO_BELOW, zero_below
from ziggurat.backends.cpu.vecmath.explog import exp_normal_parts, exp_parts, scale2

_SMALL = 0.5  # region split in z
# x beyond which gelu(x) == x exactly: Phi(-x) < 2^-25 (f32) / 2^-54 (f64)
_GELU_IS_X = {"f32": 6.0, "f64": 8.5}


def _tab(v: VB, name: str) -> tuple[float, ...]:
    return getattr(K, f"{name}_{v.fmt.name.upper()}")


def _zmax(v: VB) -> float:
    return _tab(v, "ERFC_FIT")[2]


def _erf_small(v: VB, z: ir.Value) -> ir.Value:
    """erf(z) for |z| <= 1/2 (sign of z preserved except for zeros)."""
    c_hi, c_lo = _tab(v, "TWO_OVER_SQRTPI")
    s = v.mul(z, z)
    t = v.fma(v.poly(s, _tab(v, "ERF_SMALL")), s, v.c(c_lo))
    return v.fma(z, v.c(c_hi), v.mul(z, t))


def _erfc_large(v: VB, a: ir.Value, sq_hi: ir.Value, sq_lo: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """erfc(a) = (mq * s1) * s2 for a >= 1/2, given a^2 = sq_hi + sq_lo (a clamped for the polynomial)."""
    big_a, _, zmax = _tab(v, "ERFC_FIT")
    ac = v.min_ord(a, v.c(zmax))
    t = v.div(v.c(big_a), v.add(ac, v.c(big_a)))
    q = v.poly(t, _tab(v, "ERFCX"))
    m, s1, s2 = exp_parts(v, v.neg(sq_hi), v.neg(sq_lo), zero_below=True)
    return v.mul(m, q), s1, s2


def _square2(v: VB, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    hi = v.mul(a, a)
    return hi, v.fma(a, a, v.neg(hi))


def erf(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Gauss error function."""
    v = VB(b, x)
    a = v.abs(x)
    small = _erf_small(v, a)
    ac = v.min_ord(a, v.c(_zmax(v)))
    hi, lo = _square2(v, ac)
    large = v.sub(v.c(1.0), scale2(v, *_erfc_large(v, ac, hi, lo)))
    res = v.sel(v.lt(a, v.c(_SMALL)), small, large)
    return v.keep_nan(x, v.copysign(res, x))


def erfc(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Complementary error function 1 - erf(x), accurate in the x > 0 tail."""
    v = VB(b, x)
    a = v.abs(x)
    small = v.sub(v.c(1.0), _erf_small(v, x))
    ac = v.min_ord(a, v.c(_zmax(v)))
    hi, lo = _square2(v, ac)
    k = scale2(v, *_erfc_large(v, ac, hi, lo))
    large = v.sel(v.lt(x, v.c(0.0)), v.sub(v.c(2.0), k), k)
    res = v.sel(v.lt(a, v.c(_SMALL)), small, large)
    return v.keep_nan(x, res)


def gelu_erf(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Exact GELU (torch approximate='none'): 0.5 x (1 + erf(x / sqrt 2)).

    gelu(+inf) = +inf and gelu(-inf) = NaN (torch's scalar path; its AVX path returns NaN
    for +inf too).
    """
    v = VB(b, x)
    if v.is_f32:
        return _gelu_erf_one_region(v, x)
    sqrt1_2 = _tab(v, "SQRT1_2")[0]
    z = v.mul(x, v.c(sqrt1_2))
    h = v.mul(x, v.c(0.5))
    # |z| < 1/2: gelu = h + h*erf(z)
    small = v.fma(h, _erf_small(v, z), h)
    # |z| >= 1/2: with k = erfc(|z|), gelu = x - h*k (x > 0) or h*k (x < 0)
    xlim = _zmax(v) * 2.0 ** 0.5 * 0.999
    xc = v.min_ord(v.max_ord(x, v.c(-xlim)), v.c(xlim))
    xh, xl = _square2(v, xc)
    half = v.c(0.5)
    mq, s1, s2 = _erfc_large(v, v.abs(v.mul(xc, v.c(sqrt1_2))), v.mul(xh, half), v.mul(xl, half))
    neg = scale2(v, v.mul(h, mq), s1, s2)  # h * erfc(|z|), rounded once into the denormals
    pos = v.fma(v.neg(h), scale2(v, mq, s1, s2), x)
    large = v.sel(v.lt(x, v.c(0.0)), neg, pos)
    res = v.sel(v.lt(v.abs(z), v.c(_SMALL)), small, large)
    res = v.sel(v.gt(x, v.c(_GELU_IS_X[v.fmt.name])), x, res)  # x*Phi(x) rounds to x; handles +inf
    # gelu(x) has the sign of x (fixes -0, keeps NaN); eager's 1 + erf cancels to 0
    return zero_below(v, "gelu_erf", x, v.copysign(res, x), signed=True)


def _gelu_erf_one_region(v: VB, x: ir.Value) -> ir.Value:
    """f32 GELU from one tail value ``Phi(-|x|)``: gelu(x) = x * Phi(x) (x < 0) or x - x*Phi(-x) (x >= 0).

    ``Phi(-a) = exp(-a^2/2) * erfcx(a/sqrt2) / 2`` with ``erfcx / 2`` fitted in ``t = C/(C+a)``
    over ``a in [0, 6]`` (``GELU_ERFCX_F32``), so there is no second, small-argument branch:
    near 0 the result is ``x/2 +- x*O(1)`` and needs erfcx only to a few ulps.  Only ``a <= 6``
    matters: above 6 the result is ``x`` itself, below eager's zero (-5.5426) it is zero, and
    every other lane has ``exp(-a^2/2) >= exp(-18)``, a normal number -- so the exponential
    needs no clamps and one power-of-two scale, which is exact (the lanes past 6, NaN among
    them, compute with ``a = 6`` and are replaced).  The exponent ``-a^2/2`` enters as a
    two-word value.  About 45 vector instructions; it runs in every GEMM/conv GELU epilogue.
    """
    c, amax = K.GELU_FIT_F32
    a = v.min_ord(v.abs(x), v.c(amax))
    t = v.div(v.c(c), v.add(a, v.c(c)))
    q = v.poly(t, K.GELU_ERFCX_F32)  # erfcx(a / sqrt2) / 2
    ha = v.mul(a, v.c(-0.5))  # exact
    hi = v.mul(ha, a)
    lo = v.fma(ha, a, v.neg(hi))  # -a^2/2 = hi + lo exactly
    m, s = exp_normal_parts(v, hi, lo)
    phi = v.mul(v.mul(q, m), s)  # Phi(-|x|): one rounding, then an exact scale
    res = v.sel(v.lt(x, v.c(0.0)), v.mul(x, phi), v.fma(v.neg(x), phi, x))  # x - x*Phi(-x): one rounding
    res = v.sel(v.gt(x, v.c(amax)), x, res)  # x*Phi(x) rounds to x; handles +inf
    # gelu(x) has the sign of x (fixes -0, keeps NaN); eager's 1 + erf cancels to 0; -inf: NaN
    return zero_below(v, "gelu_erf", x, v.copysign(res, x), signed=True)
