"""Derive the polynomial coefficients used by :mod:`ziggurat.backends.cpu.vecmath`.

Every kernel polynomial in ``backends/cpu/vecmath/coeffs.py`` is produced by this script; nothing is
copied from a library.  Run::

    /work/main/.venv/bin/python -m ziggurat.tools.vecmath_fit > backends/cpu/vecmath/coeffs.py

Method
------
Each approximation is written as ``h(v) ~= sum_k c_k v**k`` where ``h`` is the smooth
"unknown part" of a function after the exact leading terms are peeled off (for example
``h(r) = (exp(r) - 1 - r) / r**2``) and ``v`` is the reduced variable.  We minimise the
maximum *relative* error of ``h`` on the reduction interval with a discrete Remez exchange
(alternation on a dense Chebyshev-distributed grid) carried out in mpmath at 40 digits, then
round the coefficients to the target format greedily: round ``c_0``, refit the remaining
coefficients with ``c_0`` frozen, round ``c_1``, ... .  The error reported next to each table
is the max relative error of ``h`` with the *rounded* coefficients, evaluated exactly (in
mpmath) on a 4x denser grid; the rounding of the vector evaluation itself is measured by the
tests in ``tests/cpu_vecmath``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath as mp
import numpy as np

_DPS = 50  # working precision of all fits and checks (digits)

# An mpmath number.  ``mp.mpf`` is a context attribute, not a class a checker can see, and
# mpmath attaches the arithmetic operators of its number class at import time.
Mpf = Any
MpFun = Callable[[Mpf], Mpf]


@dataclass(frozen=True)
class PolySpec:
    """One polynomial to fit: ``h(v) ~= sum_{k<degree+1} c_k v**k`` on ``[lo, hi]``."""

    name: str
    doc: str
    h: MpFun
    lo: float
    hi: float
    degree: int
    fmt: str  # "f32" or "f64"
    #: converts an error in h into a relative error of the whole function: |scale(v)| * |dh| / ...
    #: i.e. rel_err_f = |scale(v) * (P(v) - h(v))|; None means f == h.
    scale: MpFun | None = None


def _round(v: Mpf, fmt: str) -> float:
    if fmt == "f32":
        return float(np.float32(float(v)))
    return float(v)


def _grid(lo: float, hi: float, n: int) -> list[Mpf]:
    a, b = mp.mpf(lo), mp.mpf(hi)
    return [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / (n - 1)) for i in range(n)]


def _remez(xs: Sequence[Mpf], gs: Sequence[Mpf], ws: Sequence[Mpf],
           powers: Sequence[int], iters: int = 40) -> tuple[list[Mpf], Mpf]:
    """Discrete weighted minimax: minimise max_i |ws[i] * (gs[i] - sum c_k xs[i]**p_k)|."""
    m = len(powers)
    n = len(xs)
    basis = [[x ** p for p in powers] for x in xs]
    # initial reference: Chebyshev extrema of the index range
    ref = sorted({int(round((n - 1) * (1 - float(mp.cos(mp.pi * i / m))) / 2)) for i in range(m + 1)})
    if len(ref) != m + 1:
        raise ValueError("grid too small for the requested degree")
    coeffs: list[Mpf] = [mp.mpf(0)] * m
    best: tuple[list[Mpf], Mpf] | None = None
    for _ in range(iters):
        a = mp.matrix(m + 1, m + 1)
        rhs = mp.matrix(m + 1, 1)
        for r, i in enumerate(ref):
            for k in range(m):
                a[r, k] = basis[i][k]
            a[r, m] = (-1) ** r / ws[i]
            rhs[r] = gs[i]
        sol = mp.lu_solve(a, rhs)
        coeffs = [sol[k] for k in range(m)]
        lev = abs(sol[m])
        err = [ws[i] * (gs[i] - mp.fsum(c * bk for c, bk in zip(coeffs, basis[i]))) for i in range(n)]
        emax = max(abs(e) for e in err)
        if best is None or emax < best[1]:
            best = (coeffs, emax)
        if emax <= lev * (1 + mp.mpf("1e-4")):
            break
        # extrema of each run of constant sign
        ext: list[int] = []
        i = 0
        while i < n:
            s = err[i] >= 0
            j, arg = i, i
            while j < n and (err[j] >= 0) == s:
                if abs(err[j]) > abs(err[arg]):
                    arg = j
                j += 1
            ext.append(arg)
            i = j
        if len(ext) < m + 1:
            break
        while len(ext) > m + 1:
            if abs(err[ext[0]]) < abs(err[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        ref = ext
    assert best is not None
    return best


@mp.workdps(_DPS)
def fit(spec: PolySpec, grid_n: int | None = None) -> tuple[list[float], float]:
    """Fit, round greedily to ``spec.fmt``; return the rounded coefficients and max rel error of h."""
    n = grid_n or (600 if spec.fmt == "f32" else 1200)
    xs = [x for x in _grid(spec.lo, spec.hi, n) if _weight(spec, x, spec.h(x)) != 0]
    hs = [spec.h(x) for x in xs]
    ws = [abs(_weight(spec, x, h)) for x, h in zip(xs, hs)]
    powers = list(range(spec.degree + 1))
    fixed: list[float] = []
    for k in range(spec.degree + 1):
        rest = powers[k:]
        gs = [h - mp.fsum(mp.mpf(c) * x ** p for c, p in zip(fixed, powers)) for h, x in zip(hs, xs)]
        coeffs, _ = _remez(xs, gs, ws, rest)
        fixed.append(_round(coeffs[0], spec.fmt))
    return fixed, check(spec, fixed)


def _weight(spec: PolySpec, x: Mpf, h: Mpf) -> Mpf:
    if spec.scale is None:
        return 1 / h
    # zero at removable points (e.g. r^2/exp(r) at r = 0): such points carry no error and are
    # dropped from the fitting grid
    return spec.scale(x)


def check(spec: PolySpec, coeffs: Sequence[float], n: int | None = None) -> float:
    """Max relative error of the whole function due to ``coeffs`` (exact arithmetic), dense grid."""
    with mp.workdps(_DPS):  # a block, not the decorator: that one hides the return type
        xs = _grid(spec.lo, spec.hi, n or (2400 if spec.fmt == "f32" else 4800))
        worst = mp.mpf(0)
        for x in xs:
            h = spec.h(x)
            p = mp.fsum(mp.mpf(c) * x ** k for k, c in enumerate(coeffs))
            worst = max(worst, abs((p - h) * _weight(spec, x, h)))
        return float(worst)


def _sq(f: MpFun) -> MpFun:
    """h(s) given as a function of r where s = r**2 (even/odd kernels fitted in r**2)."""
    return lambda s: f(mp.sqrt(s))


def _limit(f: MpFun, at0: Mpf) -> MpFun:
    return lambda v: at0 if v == 0 else f(v)


with mp.workdps(_DPS):
    LN2_HALF = float(mp.log(2) / 2)
    SQRT_HALF_M1 = float(mp.sqrt(mp.mpf(0.5)) - 1)
    SQRT2_M1 = float(mp.sqrt(2) - 1)
    #: |s| bound of the f64 log reduction s = f / (2 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1]
    ATANH_S_MAX = float((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1))
    PI_4 = float(mp.pi / 4)
#: erfc(z) = exp(-z**2) * Q(t) with t = ERFC_A / (ERFC_A + z) on z in [ERFC_ZLO, ERFC_ZHI]
ERFC_A = 1.0
ERFC_ZLO = 0.5
ERFC_ZHI = 10.5
#: the same for f64 lanes (erfc underflows the f64 denormals at z ~ 26.6)
ERFC_A_F64 = 2.0
ERFC_ZHI_F64 = 27.5
#: GELU (f32) in one region: Phi(-a) = exp(-a^2/2) * erfcx(a/sqrt2) / 2 with erfcx / 2 fitted in
#: t = GELU_C / (GELU_C + a), a = |x| in [0, GELU_AMAX]; GELU_C = 3.5 (a float32, so t is formed
#: from |x| with one add and one divide; of the C tried from 2 to 4 it rounds the degree-8 fit's
#: coefficients best: 9e-9, where 2*sqrt2 gave 1.7e-8).  Only
#: a <= 6 matters: above 6 gelu(x) rounds to x, and below eager's zero (x < -5.5426,
#: ``eager_zero.py``) the kernel returns zero, so there exp(-a^2/2) >= exp(-18) stays normal.
GELU_C = 3.5
GELU_AMAX = 6.0
#: |r| bound of the sin/cos kernels: pi/4 plus slack for the rounding of x*2/pi at |x| ~ 1e5
SINCOS_R_MAX = 0.8


def _erfcx_t(t: Mpf, a: float = ERFC_A) -> Mpf:
    z = a / t - a
    return mp.erfc(z) * mp.exp(z * z)


def _gelu_erfcx_t(t: Mpf) -> Mpf:
    a = GELU_C / t - GELU_C
    z = a / mp.sqrt(2)
    return mp.erfc(z) * mp.exp(z * z) / 2


def _atanh_h(q: Mpf) -> Mpf:
    s = mp.sqrt(q)
    return (2 * mp.atanh(s) - 2 * s) / s ** 3


@mp.workdps(_DPS)
def specs() -> list[PolySpec]:
    """All polynomials used by the vecmath kernels."""
    half = mp.mpf(1) / 2
    exp_h = _limit(lambda r: (mp.exp(r) - 1 - r) / r ** 2, half)
    expm1_h = _limit(lambda r: (mp.expm1(r) - r - r * r / 2) / r ** 3, mp.mpf(1) / 6)
    log1p_h = _limit(lambda f: (mp.log1p(f) - f + f * f / 2) / f ** 3, mp.mpf(1) / 3)
    exp_s = _limit(lambda r: r ** 2 / mp.exp(r), mp.mpf(0))
    expm1_s = _limit(lambda r: r ** 3 / mp.expm1(r), mp.mpf(0))
    log1p_s = _limit(lambda f: f ** 3 / mp.log1p(f), mp.mpf(0))
    sin_s = _limit(lambda s: s * mp.sqrt(s) / mp.sin(mp.sqrt(s)), mp.mpf(0))
    cos_s = lambda s: s * s / mp.cos(mp.sqrt(s))  # noqa: E731
    atanh_s = _limit(lambda q: q * mp.sqrt(q) / (2 * mp.atanh(mp.sqrt(q))), mp.mpf(0))
    pad = 1e-6
    return [
        PolySpec("EXP_F32", "exp(r) = 1 + r + r^2 * P(r), |r| <= ln2/2", exp_h,
                 -LN2_HALF - pad, LN2_HALF + pad, 4, "f32", exp_s),
        PolySpec("EXPM1_F32", "expm1(r) = r + r^2/2 + r^3 * P(r), |r| <= ln2/2", expm1_h,
                 -LN2_HALF - pad, LN2_HALF + pad, 4, "f32", expm1_s),
        PolySpec("LOG1P_F32", "log1p(f) = f - f^2/2 + f^3 * P(f), f in [sqrt(1/2)-1, sqrt(2)-1]", log1p_h,
                 SQRT_HALF_M1 - pad, SQRT2_M1 + pad, 7, "f32", log1p_s),
        PolySpec("ERF_SMALL_F32", "erf(x) = x * (2/sqrt(pi) + x^2 * P(x^2)), |x| <= 1/2 (2/sqrt(pi) as hi+lo)",
                 _limit(_sq(lambda x: (mp.erf(x) / x - 2 / mp.sqrt(mp.pi)) / x ** 2), -2 / (3 * mp.sqrt(mp.pi))),
                 0.0, 0.25 + 1e-6, 3, "f32", _limit(lambda s: s * mp.sqrt(s) / mp.erf(mp.sqrt(s)), mp.mpf(0))),
        PolySpec("ERFCX_F32", f"erfc(z) = exp(-z^2) * P(t), t = {ERFC_A}/({ERFC_A}+z), z in [{ERFC_ZLO}, {ERFC_ZHI}]",
                 _erfcx_t, ERFC_A / (ERFC_A + ERFC_ZHI), ERFC_A / (ERFC_A + ERFC_ZLO), 10, "f32"),
        PolySpec("GELU_ERFCX_F32", f"Phi(-a) = exp(-a^2/2) * P(t), t = {GELU_C}/({GELU_C}+a), a in [0, {GELU_AMAX}]",
                 _gelu_erfcx_t, GELU_C / (GELU_C + GELU_AMAX), 1.0, 8, "f32"),
        PolySpec("SIN_F32", "sin(r) = r + r^3 * P(r^2), |r| <= 0.8",
                 _limit(_sq(lambda r: (mp.sin(r) - r) / r ** 3), -mp.mpf(1) / 6), 0.0, SINCOS_R_MAX ** 2, 2,
                 "f32", sin_s),
        PolySpec("COS_F32", "cos(r) = 1 - r^2/2 + r^4 * P(r^2), |r| <= 0.8",
                 _limit(_sq(lambda r: (mp.cos(r) - 1 + r * r / 2) / r ** 4), mp.mpf(1) / 24), 0.0,
                 SINCOS_R_MAX ** 2, 2, "f32", cos_s),
        PolySpec("EXP_F64", "exp(r) = 1 + r + r^2 * P(r), |r| <= ln2/2", exp_h,
                 -LN2_HALF - 1e-12, LN2_HALF + 1e-12, 9, "f64", exp_s),
        PolySpec("EXPM1_F64", "expm1(r) = r + r^2/2 + r^3 * P(r), |r| <= ln2/2", expm1_h,
                 -LN2_HALF - 1e-12, LN2_HALF + 1e-12, 9, "f64", expm1_s),
        PolySpec("ERF_SMALL_F64", "erf(x) = x * (2/sqrt(pi) + x^2 * P(x^2)), |x| <= 1/2 (2/sqrt(pi) as hi+lo)",
                 _limit(_sq(lambda x: (mp.erf(x) / x - 2 / mp.sqrt(mp.pi)) / x ** 2), -2 / (3 * mp.sqrt(mp.pi))),
                 0.0, 0.25 + 1e-9, 7, "f64", _limit(lambda s: s * mp.sqrt(s) / mp.erf(mp.sqrt(s)), mp.mpf(0))),
        PolySpec("ERFCX_F64", f"erfc(z) = exp(-z^2) * P(t), t = {ERFC_A_F64}/({ERFC_A_F64}+z), "
                 f"z in [{ERFC_ZLO}, {ERFC_ZHI_F64}]", lambda t: _erfcx_t(t, ERFC_A_F64),
                 ERFC_A_F64 / (ERFC_A_F64 + ERFC_ZHI_F64), ERFC_A_F64 / (ERFC_A_F64 + ERFC_ZLO), 24, "f64"),
        PolySpec("ATANH_F64", "log1p(f) = 2s + s^3 * P(s^2), s = f/(2+f), |s| <= (sqrt2-1)/(sqrt2+1)",
                 _limit(_atanh_h, mp.mpf(2) / 3), 0.0, ATANH_S_MAX ** 2 * (1 + 1e-9), 6, "f64", atanh_s),
    ]


def _fmt(v: float, fmt: str) -> str:
    return f'float.fromhex("{v.hex()}")'


def split(v: Mpf, fmt: str, parts: int) -> list[float]:
    """v ~= sum(parts), each part rounded to ``fmt`` (a multi-word constant)."""
    out: list[float] = []
    rest = mp.mpf(v)
    for _ in range(parts):
        p = _round(rest, fmt)
        out.append(p)
        rest -= mp.mpf(p)
    return out


@mp.workdps(_DPS)
def constants() -> list[tuple[str, str, list[float]]]:
    """(name, doc, parts) of the multi-word constants the kernels use."""
    ln2, log2e, log10e, log10_2 = mp.log(2), 1 / mp.log(2), 1 / mp.log(10), mp.log10(2)
    out: list[tuple[str, str, list[float]]] = []
    for fmt in ("f32", "f64"):
        sfx = fmt.upper()
        out += [
            (f"LN2_{sfx}", "ln(2) as hi + lo", split(ln2, fmt, 2)),
            (f"LOG2E_{sfx}", "1/ln(2) as hi + lo", split(log2e, fmt, 2)),
            (f"LOG10E_{sfx}", "1/ln(10) as hi + lo", split(log10e, fmt, 2)),
            (f"LOG10_2_{sfx}", "log10(2) as hi + lo", split(log10_2, fmt, 2)),
        ]
    out += [
        ("PI_2_F64", "pi/2 as three f64 words (Cody-Waite reduction with FMA)", split(mp.pi / 2, "f64", 3)),
        ("TWO_OVER_PI_F64", "2/pi", split(2 / mp.pi, "f64", 1)),
        ("SQRT1_2_F32", "1/sqrt(2)", split(1 / mp.sqrt(2), "f32", 1)),
        ("TWO_OVER_SQRTPI_F32", "2/sqrt(pi) as hi + lo", split(2 / mp.sqrt(mp.pi), "f32", 2)),
        ("ERFC_FIT_F32", "erfcx fit: (A, z_lo, z_hi) with t = A/(A+z)", [ERFC_A, ERFC_ZLO, ERFC_ZHI]),
        ("GELU_FIT_F32", "GELU erfcx fit: (C, a_max) with t = C/(C+|x|)", [GELU_C, GELU_AMAX]),
        ("ERFC_FIT_F64", "erfcx fit: (A, z_lo, z_hi) with t = A/(A+z)", [ERFC_A_F64, ERFC_ZLO, ERFC_ZHI_F64]),
        ("TWO_OVER_SQRTPI_F64", "2/sqrt(pi) as hi + lo", split(2 / mp.sqrt(mp.pi), "f64", 2)),
        ("SQRT1_2_F64", "1/sqrt(2)", split(1 / mp.sqrt(2), "f64", 1)),
        ("GELU_TANH_K_F64", "2*sqrt(2/pi) and 2*sqrt(2/pi)*0.044715 (the 2 folds 1+tanh(u) = 2*sigmoid(2u))",
         [float(2 * mp.sqrt(2 / mp.pi)), float(2 * mp.sqrt(2 / mp.pi) * mp.mpf("0.044715"))]),
    ]
    return out


def main(argv: Sequence[str] = ()) -> int:
    only = set(argv)
    print('"""Polynomial coefficients for vecmath kernels (generated by tools/vecmath_fit.py, do not edit).')
    print()
    print("Each table is ``(c_0, c_1, ...)`` for ``P(v) = sum c_k v**k`` (Horner from the top);")
    print('the comment gives the max relative error of the approximated part with these rounded values.')
    print('"""')
    print()
    print("from __future__ import annotations")
    print()
    for name, doc, parts in constants():
        if only and name not in only:
            continue
        print(f"# {doc}")
        print(f"{name}: tuple[float, ...] = ({', '.join(_fmt(p, '') for p in parts)},)")
        print()
    for spec in specs():
        if only and spec.name not in only:
            continue
        coeffs, err = fit(spec)
        print(f"# {spec.doc}")
        print(f"# fitted on [{spec.lo!r}, {spec.hi!r}], {spec.fmt}, max rel err of P part: {err:.3e}")
        print(f"{spec.name}: tuple[float, ...] = (")
        for c in coeffs:
            print(f"    {_fmt(c, spec.fmt)},  # {c!r}")
        print(")")
        print()
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
