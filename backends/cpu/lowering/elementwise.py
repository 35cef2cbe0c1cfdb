"""Element-wise unary math, activations and ``clamp`` (binary arithmetic is in ``arithmetic.py``,
comparisons/logic/where/casts in ``logic.py``).  Every one is a lazy value, fused into the
kernel that reads it.

Dtypes: float32 compute for every float op; int64/int32 for integer arithmetic,
comparisons, bitwise ops; bool for masks and logic.  Transcendentals of integer inputs
compute in float32 (their result type).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ziggurat.backends.cpu.lowering import mathfns as mf
from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.ops import (
    add,
    compare,
    const,
    div,
    logical_and,
    logical_not,
    maximum,
    minimum,
    mul,
    predicate,
    sub,
    unary,
    where,
)
from ziggurat.backends.cpu.lowering.pointwise import Operand, pointwise
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Const, Value
from ziggurat.dialects.torch.schema import registered_schemas


def with_inplace(*keys: str) -> tuple[str, ...]:
    """``keys`` plus their in-place variants that torch has (``aten::relu`` -> ``aten::relu_``)."""
    known = registered_schemas()
    out: list[str] = []
    for k in keys:
        out.append(k)
        name, _, overload = k.partition(".")
        inplace = name + "_" + ("." + overload if overload else "")
        if inplace in known and inplace not in out:
            out.append(inplace)
    return tuple(out)


def _self(args: LoweringArgs) -> TensorValue:
    return args.tensor("self") if args.has("self") else args.tensor("input")


def _float_unary(kind: str, **params: float) -> Callable[[Value], Value]:
    return lambda x: unary(kind, x, None, **params)


# -- unary ------------------------------------------------------------------------------


def _log_sigmoid(x: Value) -> Value:
    """Eager's form, ``min(x, 0) - log1p(exp(-|x|))``: a large positive ``x`` gives ``+0`` (the
    former ``-softplus(-x)`` gave ``-0``, which a bf16 result keeps)."""
    dtype = x.dtype if x.dtype.is_floating_point else torch.float32
    tail = unary("log1p", unary("exp", unary("neg", unary("abs", x, dtype))))
    return sub(minimum(x, 0.0, dtype), tail, dtype)


UNARY: dict[str, Callable[[Value], Value]] = {
    "exp": _float_unary("exp"), "exp2": _float_unary("exp2"), "expm1": _float_unary("expm1"),
    "log": _float_unary("log"), "log2": _float_unary("log2"), "log10": _float_unary("log10"),
    "log1p": _float_unary("log1p"), "sqrt": _float_unary("sqrt"), "rsqrt": _float_unary("rsqrt"),
    "erf": _float_unary("erf"), "erfc": _float_unary("erfc"), "sin": _float_unary("sin"),
    "cos": _float_unary("cos"), "tanh": _float_unary("tanh"), "sigmoid": _float_unary("sigmoid"),
    "silu": _float_unary("silu"), "mish": _float_unary("mish"), "selu": _float_unary("selu"),
    "hardswish": _float_unary("hardswish"), "hardsigmoid": _float_unary("hardsigmoid"),
    "relu6": _float_unary("relu6"), "reciprocal": _float_unary("reciprocal"),
    "tan": mf.tan, "sinh": mf.sinh, "cosh": mf.cosh, "asinh": mf.asinh, "acosh": mf.acosh,
    "atanh": mf.atanh, "atan": mf.atan, "asin": mf.asin, "acos": mf.acos,
    "arctan": mf.atan, "arcsin": mf.asin, "arccos": mf.acos, "arctanh": mf.atanh, "arcsinh": mf.asinh,
    "arccosh": mf.acosh,
    "log_sigmoid": lambda x: _log_sigmoid(x),
    "deg2rad": lambda x: mul(x, math.pi / 180.0, x.dtype),
    "rad2deg": lambda x: mul(x, 180.0 / math.pi, x.dtype),
    "frac": lambda x: sub(x, unary("trunc", x), x.dtype),
}

#: ops that keep integer dtypes (computed in the result dtype, no float promotion)
SAME_DTYPE: dict[str, Callable[[Value], Value]] = {
    "abs": lambda x: unary("abs", x, x.dtype) if x.dtype != torch.bool else x,
    "absolute": lambda x: unary("abs", x, x.dtype),
    "neg": lambda x: unary("neg", x, x.dtype), "negative": lambda x: unary("neg", x, x.dtype),
    "relu": lambda x: unary("relu", x, x.dtype),
    "square": lambda x: mul(x, x, x.dtype),
    "floor": lambda x: unary("floor", x, x.dtype), "ceil": lambda x: unary("ceil", x, x.dtype),
    "round": lambda x: unary("round", x, x.dtype), "trunc": lambda x: unary("trunc", x, x.dtype),
    "fix": lambda x: unary("trunc", x, x.dtype),
    "sign": mf.sign, "sgn": mf.sign, "positive": lambda x: x,
    "bitwise_not": lambda x: logical_not(x) if x.dtype == torch.bool else unary("bitwise_not", x, x.dtype),
}

PREDICATES = ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit")


def _unary_lowering(name: str, fn: Callable[[Value], Value], keep_dtype: bool) -> None:
    key = f"aten::{name}"

    def lower(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
        x = _self(args)
        out = args.out_dtype
        compute = out if keep_dtype or out.is_floating_point else torch.float32
        return pointwise(ctx, [x], args.out_shape, out, fn, compute)

    lower.__qualname__ = f"lower_{name}"
    lowering(*with_inplace(key))(lower)


for _name, _fn in UNARY.items():
    if f"aten::{_name}" in registered_schemas():
        _unary_lowering(_name, _fn, keep_dtype=False)
for _name, _fn in SAME_DTYPE.items():
    if f"aten::{_name}" in registered_schemas():
        _unary_lowering(_name, _fn, keep_dtype=True)


@lowering(*[f"aten::{p}" for p in PREDICATES])
def predicate_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    kind = args.name
    if not x.dtype.is_floating_point:
        value = kind in ("isfinite",)
        if kind == "signbit":
            return pointwise(ctx, [x], args.out_shape, torch.bool, lambda v: compare("lt", v, 0), x.dtype)
        return pointwise(ctx, [x], args.out_shape, torch.bool, lambda v: const(value, torch.bool), x.dtype)
    return pointwise(ctx, [x], args.out_shape, torch.bool, lambda v: predicate(kind, v), x.dtype)


@lowering(*with_inplace("aten::gelu"))
def gelu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    approx = args.static("approximate", "none")
    kind = "gelu_tanh" if approx == "tanh" else "gelu_erf"
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype, _float_unary(kind))


@lowering(*with_inplace("aten::leaky_relu"))
def leaky_relu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    slope = float(args.static("negative_slope", 0.01))
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype,
                     _float_unary("leaky_relu", negative_slope=slope))


@lowering(*with_inplace("aten::rrelu"))
def rrelu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """Eval-mode rrelu is eager's leaky_relu with the mean slope ``(lower + upper) / 2``."""
    if bool(args.static("training", False)):
        raise NotLowerable("rrelu in training mode draws random slopes")
    slope = (float(args.static("lower", 0.125)) + float(args.static("upper", 1.0 / 3.0))) / 2
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype,
                     _float_unary("leaky_relu", negative_slope=slope))


@lowering(*with_inplace("aten::hardtanh"))
def hardtanh(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    lo, hi = float(args.static("min_val", -1.0)), float(args.static("max_val", 1.0))
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype,
                     _float_unary("hardtanh", min_val=lo, max_val=hi))


@lowering(*with_inplace("aten::elu"))
def elu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    p = {"alpha": float(args.static("alpha", 1.0)), "scale": float(args.static("scale", 1.0)),
         "input_scale": float(args.static("input_scale", 1.0))}
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype, _float_unary("elu", **p))


@lowering(*with_inplace("aten::celu"))
def celu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    alpha = float(args.static("alpha", 1.0))
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype, _float_unary("celu", alpha=alpha))


@lowering("aten::softplus")
def softplus(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    beta, thr = float(args.static("beta", 1.0)), float(args.static("threshold", 20.0))
    return pointwise(ctx, [_self(args)], args.out_shape, args.out_dtype,
                     _float_unary("softplus", beta=beta, threshold=thr))


@lowering(*with_inplace("aten::threshold"))
def threshold(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    thr, value = args.static("threshold"), args.static("value")
    dt = args.out_dtype
    return pointwise(ctx, [_self(args)], args.out_shape, dt, lambda x: where(compare("le", x, thr, dt), value, x, dt))


@lowering("aten::hardshrink", "aten::softshrink")
def shrink(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    lam = float(args.static("lambd", 0.5))
    dt = args.out_dtype
    soft = args.name == "softshrink"

    # eager's forms: hardshrink is ``-lambd <= x <= lambd ? 0 : x`` and softshrink
    # ``x > lambd ? x - lambd : (x < -lambd ? x + lambd : x * 0)``, so a NaN falls through
    # every ordered compare and stays NaN
    def fn(x: Value) -> Value:
        if not soft:
            inside = logical_and(compare("ge", x, -lam, dt), compare("le", x, lam, dt))
            return where(inside, 0.0, x, dt)
        below = where(compare("lt", x, -lam, dt), add(x, lam, dt), mul(x, 0.0, dt), dt)
        return where(compare("gt", x, lam, dt), sub(x, lam, dt), below, dt)

    return pointwise(ctx, [_self(args)], args.out_shape, dt, fn)


@lowering("aten::logit")
def logit(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    eps = args.static("eps")
    dt = args.out_dtype

    def fn(x: Value) -> Value:
        if eps is not None:
            x = minimum(maximum(x, float(eps), dt), 1.0 - float(eps), dt)
        return unary("log", div(x, sub(1.0, x, dt), dt))

    return pointwise(ctx, [_self(args)], args.out_shape, dt, fn, torch.float32)


@lowering(*with_inplace("aten::nan_to_num"))
def nan_to_num(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    if not dt.is_floating_point:
        return pointwise(ctx, [_self(args)], args.out_shape, dt, lambda x: x)
    info = torch.finfo(dt)
    nan = float(args.static("nan") or 0.0)
    pos = args.static("posinf")
    neg = args.static("neginf")
    pos = float(info.max if pos is None else pos)
    neg = float(info.min if neg is None else neg)

    def fn(x: Value) -> Value:
        y = where(predicate("isnan", x), nan, x, dt)
        y = where(predicate("isposinf", x), pos, y, dt)
        return where(predicate("isneginf", x), neg, y, dt)

    return pointwise(ctx, [_self(args)], args.out_shape, dt, fn)


# -- clamp ------------------------------------------------------------------------------


@lowering(*with_inplace("aten::clamp", "aten::clamp.Tensor", "aten::clamp_min", "aten::clamp_min.Tensor",
                        "aten::clamp_max", "aten::clamp_max.Tensor", "aten::clip", "aten::clip.Tensor"))
def clamp(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dt = args.out_dtype
    if args.name == "clamp_min":
        lo, hi = args.get("min"), None
    elif args.name == "clamp_max":
        lo, hi = None, args.get("max")
    else:
        lo, hi = args.get("min"), args.get("max")
    operands: list[Operand] = [x]
    bounds: list[str] = []
    for v, tag in ((lo, "lo"), (hi, "hi")):
        if v is not None:
            operands.append(v)
            bounds.append(tag)

    def fn(xv: Value, *bs: Value) -> Value:
        out = xv
        for tag, bv in zip(bounds, bs, strict=True):
            if dt.is_floating_point and isinstance(bv, Const) and not math.isnan(float(bv.value)):
                # eager's step with a number bound: x < min ? min : x, so NaN stays and a tie
                # keeps x (clamp(-0.0, min=0.0) is -0.0; llvm.maximum gave +0.0)
                out = where(compare("lt" if tag == "lo" else "gt", out, bv), bv, out, dt)
            else:
                # a tensor bound (eager's vector and scalar loops disagree on which zero a tie
                # gives), a NaN bound (NaN), an integer one
                out = Binary("max" if tag == "lo" else "min", out, bv)
        return out

    return pointwise(ctx, operands, args.out_shape, dt, fn)
