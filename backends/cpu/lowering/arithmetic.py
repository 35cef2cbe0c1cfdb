"""Binary arithmetic with torch broadcasting and type promotion: add/sub/mul/div (rounding modes),
floor_divide/remainder/fmod, max/min, pow, atan2, copysign, hypot, logaddexp, xlogy, heaviside,
lerp, addcmul/addcdiv."""

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
from ziggurat.backends.cpu.lowering.values import Binary, Value

from ziggurat.backends.cpu.lowering.elementwise import _self, with_inplace


# -- binary arithmetic -------------------------------------------------------------------


def _other(args: LoweringArgs) -> Operand:
    return args.tensor_or_scalar("other")


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
    a, c = _self(args), _other(args)
    if mode is None:
        return _binary(ctx, args, a, c, lambda x, y: Binary("div", x, y))
    nz = nonzero_divisor(ctx, args) if not args.out_dtype.is_floating_point else (lambda y: y)
    fn = mf.trunc_divide if mode == "trunc" else mf.floor_divide
    return _binary(ctx, args, a, c, lambda x, y: fn(x, nz(y)))


def nonzero_divisor(ctx: LoweringContext, args: LoweringArgs) -> Callable[[Value], Value]:
    """Wraps an integer divisor with a run-time check (torch raises on integer division by zero)."""
    from ziggurat.backends.cpu.lowering.values import Assert
    from ziggurat.ir.locations import op_location

    where_ = op_location(args.op)
    site = ctx.error_site(f"{args.key}: ZeroDivisionError (integer division by zero)"
                          + (f" at {where_}" if where_ else ""))

    def check(y: Value) -> Value:
        if y.dtype.is_floating_point or y.dtype == torch.bool:
            return y
        return Assert(y, compare("ne", y, 0), site)

    return check


@lowering(*with_inplace("aten::floor_divide", "aten::floor_divide.Scalar"))
def floor_divide(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    nz = nonzero_divisor(ctx, args)
    return _binary(ctx, args, _self(args), _other(args), lambda x, y: mf.floor_divide(x, nz(y)))


@lowering(*with_inplace("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor"))
def remainder(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    a = args.tensor_or_scalar("self")
    nz = nonzero_divisor(ctx, args)
    return _binary(ctx, args, a, _other(args), lambda x, y: mf.remainder(x, nz(y)))


@lowering(*with_inplace("aten::fmod.Tensor", "aten::fmod.Scalar"))
def fmod(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    nz = nonzero_divisor(ctx, args)
    return _binary(ctx, args, _self(args), _other(args), lambda x, y: mf.fmod(x, nz(y)))


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
    base = args.tensor_or_scalar("self")
    exponent = args.tensor_or_scalar("exponent")
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
    return _binary(ctx, args, _self(args), _other(args), mf.hypot)


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

    return _binary(ctx, args, args.tensor_or_scalar("self"), _other(args), fn)


@lowering("aten::heaviside")
def heaviside(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype

    def fn(x: Value, v: Value) -> Value:
        return where(compare("eq", x, 0), v, cast(compare("gt", x, 0), dt), dt)

    return pointwise(ctx, [_self(args), args.tensor("values")], args.out_shape, dt, fn)


@lowering(*with_inplace("aten::lerp.Scalar", "aten::lerp.Tensor"))
def lerp(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    w = args.tensor_or_scalar("weight")

    if isinstance(w, TensorValue):
        return pointwise(ctx, [_self(args), args.tensor("end"), w], args.out_shape, dt, mf.lerp)
    wv = const(w, dt)
    return pointwise(ctx, [_self(args), args.tensor("end")], args.out_shape, dt, lambda s, e: mf.lerp(s, e, wv))


@lowering(*with_inplace("aten::addcmul", "aten::addcdiv"))
def addcmul(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    value = args.static("value", 1)
    op = "mul" if args.name == "addcmul" else "div"

    def fn(s: Value, t1: Value, t2: Value) -> Value:
        # eager's order, ``self + value * t1 * t2`` (``/ t2``): value * t1 first, so a product
        # or quotient that overflows alone may not overflow there
        return add(s, Binary(op, mul(t1, value, dt) if value != 1 else t1, t2), dt)

    return pointwise(ctx, [_self(args), args.tensor("tensor1"), args.tensor("tensor2")], args.out_shape, dt, fn)
