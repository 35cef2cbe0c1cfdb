"""Smooth activations built on the exp/log kernels: tanh, sigmoid, silu, softplus, mish,
elu/selu/celu and the tanh-approximated GELU.

Formulations are chosen so that no cancellation happens anywhere on the real line:

* ``tanh(x) = sign(x) * e / (e + 2)`` with ``e = expm1(2|x|)`` (relative accuracy near 0
  comes from expm1; saturates to +-1 exactly).
* ``sigmoid(x) = num / (1 + e)``, ``e = exp(-|x|)``, ``num = 1`` for ``x >= 0`` and ``e``
  otherwise, so the negative tail (down to the denormals) keeps full relative precision.
* ``silu(x) = x * num / (1 + e)`` with the same ``e``.
* ``softplus(x) = max(z, 0) + log1p(exp(-|z|))``, ``z = beta * x``, divided by ``beta``;
  ``x`` itself where ``z > threshold`` (torch's rule).
* ``mish(x) = x * n / (n + 2)`` with ``w = exp(x)``, ``n = w (w + 2)`` (this is
  ``tanh(log1p(w))`` without cancellation); ``x`` for ``x > 20``.
* ``gelu_tanh(x) = x * sigmoid(2u)``, ``u = sqrt(2/pi) (x + 0.044715 x^3)`` (equal to
  ``0.5 x (1 + tanh(u))``).  For f32 lanes ``2u`` is computed in f64 and passed to the exp
  kernel as a two-word argument, because the negative tail is ill-conditioned (the relative
  error of ``exp(2u)`` is ``|2u|`` times the relative error of ``2u``).
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F64
from ziggurat.backends.cpu.vecmath import coeffs as K
from ziggurat.backends.cpu.vecmath.builder import VB, f32_round
from ziggurat.backends.cpu.vecmath.eager_zero import zero_below
from ziggurat.backends.cpu.vecmath.explog import exp_core, exp_normal_parts, exp_parts, expm1, expm1_core, log1p_core, scale2

#: the largest |2u| the f32 tanh-GELU evaluates: exp(-18) < 2^-25, so 1 + exp(-|2u|) rounds to 1
#: past it, and |2u| is 17.3 at eager's zero (x = -5.0614)
_GELU_TANH_2U_MAX = 18.0
# |x| beyond which tanh(x) rounds to +-1 (f32, f64)
_TANH_SAT = {"f32": 9.5, "f64": 20.0}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


#: |x| below which tanh is its Taylor series: x + x^3 (-1/3 + x^2 (2/15 + x^2 (-17/315 + x^2 62/2835)));
#: the next term, 1382/155925 x^11, is below 2^-30 of x there (f32: correctly rounded in a
#: sweep of 2^20 inputs; the quotient form below is 1 ulp off near 0, where x - tanh(x) of
#: tanhshrink is all cancellation: fuzz seed 24, program 246)
_TANH_SERIES_BELOW = {"f32": 0.0625, "f64": 0.0}
_TANH_SERIES = (-1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0)


def tanh(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Hyperbolic tangent: expm1(2|x|) / (expm1(2|x|) + 2) with the sign of x, and near 0 its
    series (``_TANH_SERIES_BELOW``)."""
    v = VB(b, x)
    ac = v.min_ord(v.abs(x), v.c(_TANH_SAT[v.fmt.name]))
    e = expm1_core(v, v.add(ac, ac))
    t = v.copysign(v.div(e, v.add(e, v.c(2.0))), x)
    below = _TANH_SERIES_BELOW[v.fmt.name]
    if below:
        x2 = v.mul(x, x)
        series = v.fma(v.mul(x, x2), v.poly(x2, _TANH_SERIES), x)
        t = v.sel(v.lt(ac, v.c(below)), v.copysign(series, x), t)  # -0.0 stays -0.0
    return v.keep_nan(x, t)


def _exp_neg_abs(v: VB, x: ir.Value) -> ir.Value:
    return exp_core(v, v.neg(v.abs(x)))


def sigmoid(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Logistic function 1 / (1 + exp(-x))."""
    v = VB(b, x)
    e = _exp_neg_abs(v, x)
    num = v.sel(v.lt(x, v.c(0.0)), e, v.c(1.0))
    return v.keep_nan(x, zero_below(v, "sigmoid", x, v.div(num, v.add(e, v.c(1.0))), signed=False))


def _x_sigmoid(v: VB, x: ir.Value, m: ir.Value, s1: ir.Value, s2: ir.Value | None = None) -> ir.Value:
    """x * sigmoid(t) given exp(-|t|) = m*s1*s2 (``s2`` None: m*s1, the caller knows the
    exponential is normal) and sign(t) == sign(x)."""
    def scaled(y: ir.Value) -> ir.Value:
        return v.mul(y, s1) if s2 is None else scale2(v, y, s1, s2)

    e = scaled(m)
    num = v.sel(v.lt(x, v.c(0.0)), scaled(v.mul(x, m)), x)
    return v.div(num, v.add(e, v.c(1.0)))


def silu(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """x * sigmoid(x) (torch.nn.functional.silu); silu(-inf) is NaN as in torch."""
    v = VB(b, x)
    res = _x_sigmoid(v, x, *exp_parts(v, v.neg(v.abs(x)), zero_below=True))
    return zero_below(v, "silu", x, res, signed=True)


def softplus(b: ir.IRBuilder, x: ir.Value, beta: float = 1.0, threshold: float = 20.0) -> ir.Value:
    """log(1 + exp(beta x)) / beta, or x where beta x > threshold (torch semantics)."""
    v = VB(b, x)
    z = x if beta == 1.0 else v.mul(x, v.c(beta))
    lp = log1p_core(v, _exp_neg_abs(v, z))
    r = v.add(v.max_prop(z, v.c(0.0)), lp)
    if beta != 1.0:
        r = v.div(r, v.c(beta))
    if beta > 0.0:
        r = zero_below(v, "softplus", z, r, signed=False)
    return v.sel(v.gt(z, v.c(threshold)), x, r)


def mish(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """x * tanh(softplus(x))."""
    v = VB(b, x)
    m, s1, s2 = exp_parts(v, v.min_ord(x, v.c(20.0)), zero_below=True)
    w = scale2(v, m, s1, s2)
    wp2 = v.add(w, v.c(2.0))
    ratio = v.div(wp2, v.add(v.mul(w, wp2), v.c(2.0)))  # (w + 2) / (w (w + 2) + 2)
    res = scale2(v, v.mul(v.mul(x, m), ratio), s1, s2)  # x w (w + 2) / (w (w + 2) + 2)
    res = zero_below(v, "mish", x, res, signed=True)
    return v.sel(v.gt(x, v.c(20.0)), x, res)


def elu(b: ir.IRBuilder, x: ir.Value, alpha: float = 1.0, scale: float = 1.0,
        input_scale: float = 1.0) -> ir.Value:
    """torch ELU family: x < 0 ? alpha*scale*expm1(input_scale*x) : scale*x (a zero takes the
    linear branch: 0 with an infinite alpha, and a zero of its own sign)."""
    v = VB(b, x)
    if v.is_f32:  # torch forms the coefficients in the tensor's dtype
        negcoef = f32_round(f32_round(alpha) * f32_round(scale))
    else:
        negcoef = alpha * scale
    xin = x if input_scale == 1.0 else v.mul(x, v.c(input_scale))
    neg = v.mul(expm1(b, xin), v.c(negcoef))
    pos = x if scale == 1.0 else v.mul(x, v.c(scale))
    return v.sel(v.lt(x, v.c(0.0)), neg, pos)


def selu(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """SELU with the standard alpha/scale constants."""
    return elu(b, x, SELU_ALPHA, SELU_SCALE)


def celu(b: ir.IRBuilder, x: ir.Value, alpha: float = 1.0) -> ir.Value:
    """CELU: max(0, x) + min(0, alpha * expm1(x / alpha))."""
    return elu(b, x, alpha, 1.0, 1.0 / alpha)


def gelu_tanh(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """GELU with approximate='tanh': 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    v = VB(b, x)
    k1, k3 = K.GELU_TANH_K_F64
    if v.is_f32:
        vd = v.retyped(F64)
        xd = v.fpext(x, vd)
        y2 = vd.mul(xd, vd.fma(vd.c(k3), vd.mul(xd, xd), vd.c(k1)))  # 2u in f64
        # -|2u|, no inf/NaN.  Only |2u| <= 17.3 matters (x >= eager's zero, -5.0614: below it the
        # result is 0; for x > 0 past 18 the quotient rounds to x either way), so exp(-|2u|)
        # stays normal: one exact power-of-two scale, no clamps -- the same bits as the general
        # exp_parts form, in fewer instructions.
        a = vd.neg(vd.min_ord(vd.abs(y2), vd.c(_GELU_TANH_2U_MAX)))
        hi = vd.fptrunc(a, v)
        lo = vd.fptrunc(vd.sub(a, v.fpext(hi, vd)), v)
        res = _x_sigmoid(v, x, *exp_normal_parts(v, hi, lo))
    else:
        y2 = v.mul(x, v.fma(v.c(k3), v.mul(x, x), v.c(k1)))
        res = _x_sigmoid(v, x, *exp_parts(v, v.neg(v.abs(y2)), zero_below=True))
    return zero_below(v, "gelu_tanh", x, res, signed=True)
