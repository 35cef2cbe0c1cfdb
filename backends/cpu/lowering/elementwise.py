"""Element-wise ops: unary math and activations, binary arithmetic, comparisons, logic,
``where``/``masked_fill``/``clamp``, casts.  Every one is a lazy value, fused into the
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
    cast,
    compare,
    const,
    div,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mul,
    predicate,
    sub,
    unary,
    where,
)
from ziggurat.backends.cpu.lowering.pointwise import Operand, pointwise, result_dtype
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Value
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
    return lambda x: unary(kind, x, **params)


# -- unary ------------------------------------------------------------------------------

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
    "log_sigmoid": lambda x: unary("neg", unary("softplus", unary("neg", x))),
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

    def fn(x: Value) -> Value:
        keep = logical_or(compare("gt", x, lam, dt), compare("lt", x, -lam, dt))
        if not soft:
            return where(keep, x, 0.0, dt)
        shrunk = where(compare("gt", x, lam, dt), sub(x, lam, dt), add(x, lam, dt), dt)
        return where(keep, shrunk, 0.0, dt)

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
                        "aten::clamp_max", "aten::clamp_max.Tensor", "aten::clip"))
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
            if dt.is_floating_point:
                # torch.clamp propagates NaN of x; a NaN bound gives NaN
                out = Binary("max" if tag == "lo" else "min", out, bv)
            else:
                out = Binary("max" if tag == "lo" else "min", out, bv)
        return out

    return pointwise(ctx, operands, args.out_shape, dt, fn)


# -- binary arithmetic -------------------------------------------------------------------


def _other(args: LoweringArgs) -> Operand:
    return args.scalar_or_tensor("other")


def _binary(ctx: LoweringContext, args: LoweringArgs, a: Operand, c: Operand,
            fn: Callable[[Value, Value], Value], compute: torch.dtype | None = None) -> TensorValue:
    return pointwise(ctx, [a, c], args.out_shape, args.out_dtype, fn, compute)


@lowering(*with_inplace("aten::add.Tensor", "aten::add.Scalar", "aten::sub.Tensor", "aten::sub.Scalar",
                        "aten::rsub.Tensor", "aten::rsub.Scalar", "aten::subtract.Tensor"))
def add_sub(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    a, c = _self(args), _other(args)
    alpha = args.static("alpha", 1)
    dt = args.out_dtype
    op = "add" if args.name == "add" else "sub"
    if args.name == "rsub":
        a, c = c, a  # other - alpha * self

    def fn(x: Value, y: Value) -> Value:
        return Binary(op, x, mul(y, alpha, dt) if alpha != 1 else y)

    return _binary(ctx, args, a, c, fn)


@lowering(*with_inplace("aten::mul.Tensor", "aten::mul.Scalar", "aten::multiply.Tensor"))
def mul_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _binary(ctx, args, _self(args), _other(args), lambda x, y: Binary("mul", x, y))


@lowering(*with_inplace("aten::div.Tensor", "aten::div.Scalar", "aten::div.Tensor_mode", "aten::div.Scalar_mode",
                        "aten::true_divide.Tensor", "aten::divide.Tensor"))
def div_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    mode = args.static("rounding_mode")
    dt = args.out_dtype
    a, c = _self(args), _other(args)
    if mode is None:
        return _binary(ctx, args, a, c, lambda x, y: Binary("div", x, y))
    if dt.is_floating_point:
        fn: Callable[[Value, Value], Value] = (lambda x, y: unary("trunc", Binary("div", x, y))) if mode == "trunc" \
            else (lambda x, y: unary("floor", Binary("div", x, y)))
        return _binary(ctx, args, a, c, fn)
    if mode == "floor":
        return _binary(ctx, args, a, c, lambda x, y: Binary("floordiv", x, y))
    return _binary(ctx, args, a, c, _int_trunc_div)


def _int_trunc_div(x: Value, y: Value) -> Value:
    q = Binary("floordiv", x, y)
    r = Binary("sub", x, Binary("mul", q, y))
    fix = logical_and(compare("ne", r, 0), compare("ne", compare("lt", r, 0), compare("lt", y, 0)))
    return where(fix, Binary("add", q, const(1, x.dtype)), q, x.dtype)


@lowering(*with_inplace("aten::floor_divide", "aten::floor_divide.Scalar"))
def floor_divide(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _binary(ctx, args, _self(args), _other(args), mf.floor_divide)


@lowering(*with_inplace("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor"))
def remainder(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    a = args.scalar_or_tensor("self")
    return _binary(ctx, args, a, _other(args), mf.remainder)


@lowering(*with_inplace("aten::fmod.Tensor", "aten::fmod.Scalar"))
def fmod(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _binary(ctx, args, _self(args), _other(args), mf.fmod)


@lowering("aten::maximum", "aten::minimum", "aten::fmax", "aten::fmin", "aten::max.other", "aten::min.other")
def max_min(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    op = {"maximum": "max", "minimum": "min", "fmax": "fmax", "fmin": "fmin", "max": "max", "min": "min"}[args.name]
    dt = args.out_dtype
    if not dt.is_floating_point and op in ("fmax", "fmin"):
        op = op[1:]
    return _binary(ctx, args, _self(args), _other(args), lambda x, y: Binary(op, x, y))


@lowering(*with_inplace("aten::pow.Tensor_Scalar", "aten::pow.Tensor_Tensor", "aten::pow.Scalar",
                        "aten::float_power.Tensor_Scalar", "aten::float_power.Tensor_Tensor",
                        "aten::float_power.Scalar"))
def pow_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    base = args.scalar_or_tensor("self")
    exponent = args.scalar_or_tensor("exponent")
    if not dt.is_floating_point:
        if isinstance(exponent, int) and exponent >= 0 and isinstance(base, TensorValue):
            return pointwise(ctx, [base], args.out_shape, dt, lambda x: mf.int_pow(x, exponent))
        raise NotLowerable("integer pow with a tensor or negative exponent")
    if isinstance(exponent, int | float) and isinstance(base, TensorValue):
        e = float(exponent)
        return pointwise(ctx, [base], args.out_shape, dt, lambda x: mf.pow_scalar(x, e))
    return _binary(ctx, args, base, exponent, mf.pow_tensor)


@lowering("aten::atan2", "aten::arctan2", "aten::atan2_")
def atan2(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _binary(ctx, args, _self(args), _other(args), mf.atan2, torch.float32)


@lowering("aten::copysign.Tensor", "aten::copysign.Scalar")
def copysign(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _binary(ctx, args, _self(args), _other(args), lambda x, y: Binary("copysign", x, y), torch.float32)


@lowering("aten::hypot")
def hypot(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _binary(ctx, args, _self(args), _other(args),
                   lambda x, y: unary("sqrt", add(mul(x, x, x.dtype), mul(y, y, y.dtype), x.dtype)))


@lowering("aten::logaddexp", "aten::logaddexp2")
def logaddexp(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    two = args.name == "logaddexp2"
    ln2 = math.log(2.0)

    def fn(x: Value, y: Value) -> Value:
        dt = x.dtype
        m = Binary("max", x, y)
        d = unary("abs", sub(x, y, dt))
        if two:
            d = mul(d, ln2, dt)
        s = unary("log1p", unary("exp", unary("neg", d)))
        if two:
            s = mul(s, 1.0 / ln2, dt)
        out = add(m, s, dt)
        return where(compare("eq", m, -math.inf), m, where(compare("eq", m, math.inf), m, out, dt), dt)

    return _binary(ctx, args, _self(args), _other(args), fn)


@lowering("aten::xlogy.Tensor", "aten::xlogy.Scalar_Other", "aten::xlogy.Scalar_Self")
def xlogy(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    def fn(x: Value, y: Value) -> Value:
        dt = x.dtype
        r = mul(x, unary("log", y), dt)
        r = where(compare("eq", x, 0.0), 0.0, r, dt)
        return where(predicate("isnan", y), y, r, dt)

    return _binary(ctx, args, args.scalar_or_tensor("self"), _other(args), fn)


@lowering("aten::heaviside")
def heaviside(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype

    def fn(x: Value, v: Value) -> Value:
        return where(compare("eq", x, 0), v, cast(compare("gt", x, 0), dt), dt)

    return pointwise(ctx, [_self(args), args.tensor("values")], args.out_shape, dt, fn)


@lowering(*with_inplace("aten::lerp.Scalar", "aten::lerp.Tensor"))
def lerp(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    w = args.scalar_or_tensor("weight")

    def fn(s: Value, e: Value, wv: Value) -> Value:
        return add(s, mul(wv, sub(e, s, dt), dt), dt)

    return pointwise(ctx, [_self(args), args.tensor("end"), w], args.out_shape, dt, fn)


@lowering(*with_inplace("aten::addcmul", "aten::addcdiv"))
def addcmul(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    value = args.static("value", 1)
    op = "mul" if args.name == "addcmul" else "div"

    def fn(s: Value, t1: Value, t2: Value) -> Value:
        return add(s, mul(Binary(op, t1, t2), value, dt), dt)

    return pointwise(ctx, [_self(args), args.tensor("tensor1"), args.tensor("tensor2")], args.out_shape, dt, fn)


# -- comparisons and logic ----------------------------------------------------------------

_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "less": "lt", "greater": "gt",
        "less_equal": "le", "greater_equal": "ge", "not_equal": "ne"}


def _cmp_keys() -> tuple[str, ...]:
    known = registered_schemas()
    keys: list[str] = []
    for name in _CMP:
        for ov in ("Tensor", "Scalar"):
            k = f"aten::{name}.{ov}"
            if k in known:
                keys.append(k)
    return with_inplace(*keys)


@lowering(*_cmp_keys())
def compare_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    pred = _CMP[args.name]
    a, c = _self(args), _other(args)
    compute = result_dtype(a, c)
    if args.out_dtype != torch.bool:  # in-place variants keep self's dtype
        return pointwise(ctx, [a, c], args.out_shape, args.out_dtype,
                         lambda x, y: cast(compare(pred, x, y), args.out_dtype), compute)
    return pointwise(ctx, [a, c], args.out_shape, torch.bool, lambda x, y: compare(pred, x, y), compute)


@lowering("aten::logical_and", "aten::logical_or", "aten::logical_xor", "aten::logical_and_", "aten::logical_or_",
          "aten::logical_xor_")
def logical_binary(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    kind = args.name.replace("logical_", "")
    dt = args.out_dtype

    def fn(x: Value, y: Value) -> Value:
        xb, yb = cast(x, torch.bool), cast(y, torch.bool)
        r = Binary(kind, xb, yb)
        return cast(r, dt)

    a, c = _self(args), args.tensor("other")
    return pointwise(ctx, [a, c], args.out_shape, dt, fn, _any_dtype(a, c))


def _any_dtype(a: TensorValue, c: TensorValue) -> torch.dtype:
    return torch.promote_types(a.dtype, c.dtype)


@lowering(*with_inplace("aten::logical_not"))
def logical_not_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    return pointwise(ctx, [x], args.out_shape, args.out_dtype, lambda v: cast(logical_not(cast(v, torch.bool)),
                                                                              args.out_dtype), x.dtype)


_BITWISE = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "__and__": "and", "__or__": "or",
            "__xor__": "xor", "bitwise_left_shift": "shl", "bitwise_right_shift": "shr", "__lshift__": "shl",
            "__rshift__": "shr"}


def _bitwise_keys() -> tuple[str, ...]:
    known = registered_schemas()
    keys = []
    for name in _BITWISE:
        for ov in ("Tensor", "Scalar", "Tensor_Scalar", "Scalar_Tensor"):
            k = f"aten::{name}.{ov}"
            if k in known:
                keys.append(k)
    return with_inplace(*keys)


def _int_only(args: LoweringArgs) -> str | None:
    if args.out_dtype.is_floating_point:
        return "bitwise ops on floats"
    return None


@lowering(*_bitwise_keys(), validator=_int_only)
def bitwise(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    raw = args.key.split("::")[1].split(".")[0]
    op = _BITWISE.get(raw) or _BITWISE[raw.removesuffix("_")]
    a = args.scalar_or_tensor("self")
    return _binary(ctx, args, a, _other(args), lambda x, y: Binary(op, x, y))


# -- where / masked_fill -------------------------------------------------------------------


@lowering("aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar")
def where_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    cond = args.tensor("condition")
    a, c = args.scalar_or_tensor("self"), args.scalar_or_tensor("other")
    dt = args.out_dtype
    operands: list[Operand] = [cond, a, c]

    def element(index):  # type: ignore[no-untyped-def]
        from ziggurat.backends.cpu.lowering.pointwise import read

        cv = cast(read(cond, index, args.out_shape), torch.bool)
        return where(cv, read(a, index, args.out_shape, dt), read(c, index, args.out_shape, dt), dt)

    return ctx.lazy(args.out_shape, dt, element, [v for v in operands if isinstance(v, TensorValue)])


@lowering(*with_inplace("aten::masked_fill.Scalar", "aten::masked_fill.Tensor"))
def masked_fill(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, mask = _self(args), args.tensor("mask")
    value = args.scalar_or_tensor("value")
    dt = args.out_dtype

    def element(index):  # type: ignore[no-untyped-def]
        from ziggurat.backends.cpu.lowering.pointwise import read

        m = cast(read(mask, index, args.out_shape), torch.bool)
        return where(m, read(value, index, args.out_shape, dt), read(x, index, args.out_shape, dt), dt)

    return ctx.lazy(args.out_shape, dt, element, [x, mask])


# -- casts -----------------------------------------------------------------------------------


@lowering("aten::to.dtype", "aten::to.dtype_layout", "aten::to.other", "aten::to.device", "aten::_to_copy",
          "aten::type_as", "aten::_cast_Float", "aten::_cast_Long", "aten::_cast_Int")
def to_dtype(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    device = args.get("device")
    if device is not None and str(device) not in ("cpu",) and not str(device).startswith("cpu"):
        raise NotLowerable(f"moves the tensor to {device}")
    return pointwise(ctx, [x], args.out_shape, args.out_dtype, lambda v: v, x.dtype)


@lowering("aten::isclose")
def isclose(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    rtol, atol = float(args.static("rtol", 1e-5)), float(args.static("atol", 1e-8))
    equal_nan = bool(args.static("equal_nan", False))
    a, c = _self(args), args.tensor("other")
    compute = torch.promote_types(a.dtype, c.dtype)
    if not compute.is_floating_point:
        compute = torch.float32

    def fn(x: Value, y: Value) -> Value:
        dt = x.dtype
        close = compare("le", unary("abs", sub(x, y, dt)), add(atol, mul(rtol, unary("abs", y), dt), dt))
        close = logical_or(close, compare("eq", x, y))
        if equal_nan:
            close = logical_or(close, logical_and(predicate("isnan", x), predicate("isnan", y)))
        return close

    return pointwise(ctx, [a, c], args.out_shape, torch.bool, fn, compute)
