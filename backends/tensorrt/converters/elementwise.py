"""Binary arithmetic, comparisons, logic and selection -> IElementWiseLayer / ISelectLayer."""

from __future__ import annotations

import math

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs, Scalar
from ziggurat.backends.tensorrt.converters.common import (
    cast,
    elementwise,
    promote,
    select,
    unary,
)
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import ElementWiseOperation, UnaryOperation

E = ElementWiseOperation
U = UnaryOperation


def _no_bool_arithmetic(args: ConverterArgs) -> str | None:
    from ziggurat.ir.types import dtype_of

    result = args.op.results[0].type
    if dtype_of(result) == torch.bool:
        return "arithmetic on bool tensors has no TensorRT elementwise operation"
    return None


def _other(args: ConverterArgs) -> SSAValue | Scalar:
    return args.tensor_or_scalar("other")


def _scaled(ctx: ConversionContext, value: SSAValue | Scalar, alpha: Scalar, dtype: torch.dtype) -> SSAValue | Scalar:
    if alpha == 1:
        return value
    if not isinstance(value, SSAValue):
        return value * alpha
    return elementwise(ctx, value, alpha, E.kPROD, dtype=dtype, suffix="alpha")


@converter(
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    validator=_no_bool_arithmetic,
)
def add(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    dtype = ctx.result_dtype()
    other = _scaled(ctx, _other(args), args.get_scalar("alpha"), dtype)
    return elementwise(ctx, args.tensor("self"), other, E.kSUM, dtype=dtype)


@converter(
    "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    validator=_no_bool_arithmetic,
)
def sub(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    dtype = ctx.result_dtype()
    other = _scaled(ctx, _other(args), args.get_scalar("alpha"), dtype)
    return elementwise(ctx, args.tensor("self"), other, E.kSUB, dtype=dtype)


@converter(
    "aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    validator=_no_bool_arithmetic,
)
def rsub(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """other - alpha * self."""
    dtype = ctx.result_dtype()
    scaled = _scaled(ctx, args.tensor("self"), args.get_scalar("alpha"), dtype)
    return elementwise(ctx, _other(args), scaled, E.kSUB, dtype=dtype)


@converter(
    "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor",
    validator=_no_bool_arithmetic,
)
def mul(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, args.tensor("self"), _other(args), E.kPROD, dtype=ctx.result_dtype())


def trunc(ctx: ConversionContext, x: SSAValue, suffix: str = "trunc") -> SSAValue:
    """trunc(x): ceil(x) where x < 0, else floor(x) (TensorRT has no trunc).  A -0.0 stays -0.0
    (floor(-0.0)), as do NaN and the infinities; ``sign(x) * floor(|x|)`` made +0.0 of -0.0,
    since sign(-0.0) is +0.0 (so ``atan2(-0.0, fix(-0.0))`` was -0.0, not -pi)."""
    negative = elementwise(ctx, x, 0.0, E.kLESS, suffix=f"{suffix} negative".strip())
    return select(ctx, negative, unary(ctx, x, U.kCEIL, f"{suffix} ceil".strip()),
                  unary(ctx, x, U.kFLOOR, f"{suffix} floor".strip()), dtype=ctx.dtype(x), suffix=suffix)


#: Why float floor division and remainder stay in torch.
_FLOAT_FLOOR = ("torch floors a float quotient from the exact fmod (1 // 0.1 == 9); TensorRT's kFLOOR_DIV "
                "computes floor(a / b) (10), and TensorRT has no exact fmod")


def _float_result(args: ConverterArgs) -> bool:
    from ziggurat.ir.types import dtype_of

    return dtype_of(args.op.results[0].type).is_floating_point


def _rounding_mode(args: ConverterArgs) -> str | None:
    if args.has("rounding_mode") and not args.is_none("rounding_mode"):
        mode = args.get_str("rounding_mode")
        if mode not in ("trunc", "floor"):
            return f"unknown rounding_mode {mode!r}"
        if mode == "floor" and _float_result(args):
            return _FLOAT_FLOOR
    return _no_bool_arithmetic(args)


def _int_floor(args: ConverterArgs) -> str | None:
    return _FLOAT_FLOOR if _float_result(args) else _no_bool_arithmetic(args)


@converter(
    "aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::div.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
    validator=_rounding_mode,
)
def div(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    dtype = ctx.result_dtype()
    mode = args.get_optional_str("rounding_mode") if args.has("rounding_mode") else None
    a, b = args.tensor("self"), _other(args)
    if mode == "floor":
        return elementwise(ctx, a, b, E.kFLOOR_DIV, dtype=dtype)
    if mode == "trunc" and not dtype.is_floating_point:
        return elementwise(ctx, a, b, E.kDIV, dtype=dtype)  # integer kDIV truncates
    quotient = elementwise(ctx, a, b, E.kDIV, dtype=dtype if dtype.is_floating_point else torch.float32,
                           suffix="divide" if mode else "")
    return trunc(ctx, quotient) if mode == "trunc" else quotient


@converter(
    "aten::floor_divide(Tensor self, Tensor other) -> Tensor",
    "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
    validator=_int_floor,
)
def floor_divide(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, args.tensor("self"), _other(args), E.kFLOOR_DIV, dtype=ctx.result_dtype())


@converter(
    "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
    validator=_int_floor,
)
def remainder(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """a - floor(a / b) * b (Python's modulo: the sign of b)."""
    dtype = ctx.result_dtype()
    a = args.tensor_or_scalar("self")
    b = _other(args)
    quotient = elementwise(ctx, a, b, E.kFLOOR_DIV, dtype=dtype, suffix="floor divide")
    return elementwise(ctx, a, elementwise(ctx, quotient, b, E.kPROD, dtype=dtype, suffix="multiple"), E.kSUB,
                       dtype=dtype)


@converter(
    "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    validator=_no_bool_arithmetic,
)
def pow_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kPOW (C's ``pow``), except the exponents eager computes as roots: ``x ** 0.5`` is
    ``sqrt(x)`` and ``x ** -0.5`` is ``1 / sqrt(x)``, NaN for -inf (``pow`` gives inf and 0)
    and signed for -0."""
    dtype = ctx.result_dtype()
    exponent = args.tensor_or_scalar("exponent")
    base = args.tensor_or_scalar("self")
    if isinstance(base, SSAValue) and not isinstance(exponent, SSAValue) and dtype.is_floating_point \
            and exponent in (0.5, -0.5):
        root = unary(ctx, cast(ctx, ctx.tensor(base), dtype, "base cast"), U.kSQRT, "sqrt")
        return root if exponent == 0.5 else unary(ctx, root, U.kRECIP, "reciprocal")
    return elementwise(ctx, base, exponent, E.kPOW, dtype=dtype)


@converter("aten::square(Tensor self) -> Tensor", validator=_no_bool_arithmetic)
def square(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = cast(ctx, ctx.tensor(args.tensor("self")), ctx.result_dtype())
    return elementwise(ctx, x, x, E.kPROD)


@converter(
    "aten::maximum(Tensor self, Tensor other) -> Tensor",
    "aten::max.other(Tensor self, Tensor other) -> Tensor",
    validator=_no_bool_arithmetic,
)
def maximum(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, args.tensor("self"), args.tensor("other"), E.kMAX, dtype=ctx.result_dtype())


@converter(
    "aten::minimum(Tensor self, Tensor other) -> Tensor",
    "aten::min.other(Tensor self, Tensor other) -> Tensor",
    validator=_no_bool_arithmetic,
)
def minimum(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, args.tensor("self"), args.tensor("other"), E.kMIN, dtype=ctx.result_dtype())


@converter("aten::atan2(Tensor self, Tensor other) -> Tensor")
def atan2(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """atan2 as C's: ``atan(min(|y|, |x|) / max(|y|, |x|))`` (0 for 0/0, 1 for inf/inf), from pi/2
    where ``|y| > |x|``, from pi where ``x`` is negative (-0 too), negated where ``y`` is (so
    atan2(+-0, -0) is +-pi and the infinities give the odd multiples of pi/4); NaN if either is."""
    dtype = ctx.result_dtype()
    y = cast(ctx, ctx.tensor(args.tensor("self")), dtype, "y cast")
    x = cast(ctx, ctx.tensor(args.tensor("other")), dtype, "x cast")
    ay, ax = unary(ctx, y, U.kABS, "|y|"), unary(ctx, x, U.kABS, "|x|")
    small = elementwise(ctx, ay, ax, E.kMIN, suffix="smaller")
    large = elementwise(ctx, ay, ax, E.kMAX, suffix="larger")
    ratio = elementwise(ctx, small, large, E.kDIV, suffix="ratio")
    ratio = select(ctx, elementwise(ctx, large, 0.0, E.kEQUAL, suffix="origin"), 0.0, ratio, dtype=dtype,
                   suffix="0 / 0")
    ratio = select(ctx, elementwise(ctx, small, math.inf, E.kEQUAL, suffix="both infinite"), 1.0, ratio,
                   dtype=dtype, suffix="inf / inf")
    angle = unary(ctx, ratio, U.kATAN, "atan")
    steep = elementwise(ctx, ay, ax, E.kGREATER, suffix="|y| > |x|")
    angle = select(ctx, steep, elementwise(ctx, math.pi / 2, angle, E.kSUB, dtype=dtype, suffix="pi/2 - a"), angle,
                   dtype=dtype, suffix="octant")
    angle = select(ctx, _sign_bit(ctx, x, "x"), elementwise(ctx, math.pi, angle, E.kSUB, dtype=dtype,
                                                            suffix="pi - a"), angle, dtype=dtype, suffix="left")
    angle = select(ctx, _sign_bit(ctx, y, "y"), unary(ctx, angle, U.kNEG, "-a"), angle, dtype=dtype, suffix="below")
    nan = elementwise(ctx, unary(ctx, x, U.kISNAN, "x nan"), unary(ctx, y, U.kISNAN, "y nan"), E.kOR, suffix="nan")
    return select(ctx, nan, elementwise(ctx, x, y, E.kSUM, suffix="nan sum"), angle, dtype=dtype)


def _sign_bit(ctx: ConversionContext, t: SSAValue, name: str) -> SSAValue:
    """``t < 0``, or ``t`` is -0 (``1 / -0`` is -inf)."""
    negative = elementwise(ctx, t, 0.0, E.kLESS, suffix=f"{name} < 0")
    zero = elementwise(ctx, t, 0.0, E.kEQUAL, suffix=f"{name} = 0")
    minus_zero = elementwise(ctx, zero, elementwise(ctx, unary(ctx, t, U.kRECIP, f"1 / {name}"), 0.0, E.kLESS,
                                                    suffix=f"1 / {name} < 0"), E.kAND, suffix=f"{name} = -0")
    return elementwise(ctx, negative, minus_zero, E.kOR, suffix=f"{name} sign")


# -- comparisons ------------------------------------------------------------------------------------


def _compare(ctx: ConversionContext, args: ConverterArgs, op: ElementWiseOperation) -> SSAValue:
    a, b = args.tensor("self"), _other(args)
    dtype = promote(a, b, ctx=ctx)
    if dtype == torch.bool and op != E.kEQUAL:
        dtype = torch.int32  # TensorRT orders numbers, not bools
    return elementwise(ctx, a, b, op, dtype=dtype)


def _either(ctx: ConversionContext, args: ConverterArgs, first: ElementWiseOperation) -> SSAValue:
    strict = _compare_named(ctx, args, first, "strict")
    equal = _compare_named(ctx, args, E.kEQUAL, "equal")
    return elementwise(ctx, strict, equal, E.kOR)


def _compare_named(ctx: ConversionContext, args: ConverterArgs, op: ElementWiseOperation, suffix: str) -> SSAValue:
    a, b = args.tensor("self"), _other(args)
    dtype = promote(a, b, ctx=ctx)
    if dtype == torch.bool and op != E.kEQUAL:
        dtype = torch.int32
    return elementwise(ctx, a, b, op, dtype=dtype, suffix=suffix)


@converter("aten::eq.Tensor(Tensor self, Tensor other) -> Tensor", "aten::eq.Scalar(Tensor self, Scalar other) -> Tensor")
def eq(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _compare(ctx, args, E.kEQUAL)


@converter("aten::ne.Tensor(Tensor self, Tensor other) -> Tensor", "aten::ne.Scalar(Tensor self, Scalar other) -> Tensor")
def ne(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return unary(ctx, _compare_named(ctx, args, E.kEQUAL, "equal"), U.kNOT)


@converter("aten::gt.Tensor(Tensor self, Tensor other) -> Tensor", "aten::gt.Scalar(Tensor self, Scalar other) -> Tensor")
def gt(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _compare(ctx, args, E.kGREATER)


@converter("aten::lt.Tensor(Tensor self, Tensor other) -> Tensor", "aten::lt.Scalar(Tensor self, Scalar other) -> Tensor")
def lt(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _compare(ctx, args, E.kLESS)


@converter("aten::ge.Tensor(Tensor self, Tensor other) -> Tensor", "aten::ge.Scalar(Tensor self, Scalar other) -> Tensor")
def ge(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _either(ctx, args, E.kGREATER)


@converter("aten::le.Tensor(Tensor self, Tensor other) -> Tensor", "aten::le.Scalar(Tensor self, Scalar other) -> Tensor")
def le(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _either(ctx, args, E.kLESS)


# -- logic ---------------------------------------------------------------------------------------------


def _as_bool(ctx: ConversionContext, value: SSAValue | Scalar, suffix: str) -> SSAValue:
    if not isinstance(value, SSAValue):
        return ctx.tensor(bool(value), dtype=torch.bool)
    t = ctx.tensor(value)
    if ctx.dtype(t) == torch.bool:
        return t
    return elementwise(ctx, unary(ctx, elementwise(ctx, t, 0, E.kEQUAL, suffix=f"{suffix} == 0"), U.kNOT,
                                  f"{suffix} != 0"), True, E.kAND, suffix=f"{suffix} as bool")


def _logical(ctx: ConversionContext, args: ConverterArgs, op: ElementWiseOperation) -> SSAValue:
    a = _as_bool(ctx, args.tensor("self"), "self")
    b = _as_bool(ctx, args.tensor("other"), "other")
    return cast(ctx, elementwise(ctx, a, b, op, dtype=torch.bool), ctx.result_dtype(), "result")


@converter("aten::logical_and(Tensor self, Tensor other) -> Tensor")
def logical_and(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _logical(ctx, args, E.kAND)


@converter("aten::logical_or(Tensor self, Tensor other) -> Tensor")
def logical_or(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _logical(ctx, args, E.kOR)


@converter("aten::logical_xor(Tensor self, Tensor other) -> Tensor")
def logical_xor(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _logical(ctx, args, E.kXOR)


@converter("aten::logical_not(Tensor self) -> Tensor")
def logical_not(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return cast(ctx, unary(ctx, _as_bool(ctx, args.tensor("self"), "self"), U.kNOT), ctx.result_dtype(), "result")


def _integral(args: ConverterArgs) -> str | None:
    dtype = args.dtype("self")
    return None if dtype == torch.bool or not dtype.is_floating_point else "bitwise_not of a float tensor"


@converter("aten::bitwise_not(Tensor self) -> Tensor", validator=_integral)
def bitwise_not(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kNOT for bool; -x - 1 (two's complement) for integers."""
    x = ctx.tensor(args.tensor("self"))
    if ctx.dtype(x) == torch.bool:
        return unary(ctx, x, U.kNOT)
    return elementwise(ctx, elementwise(ctx, 0, x, E.kSUB, dtype=ctx.dtype(x), suffix="negate"), 1, E.kSUB,
                       dtype=ctx.dtype(x))


# -- selection -------------------------------------------------------------------------------------------


@converter(
    "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
    "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
    "aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
)
def where(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return select(ctx, args.tensor("condition"), args.tensor_or_scalar("self"), args.tensor_or_scalar("other"),
                  dtype=ctx.result_dtype())


@converter(
    "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
    "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
)
def masked_fill(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    value = args.tensor_or_scalar("value")
    if isinstance(value, SSAValue):
        literal = ctx.literal(value)
        if literal is not None and literal.numel() == 1:
            value = literal.item()
    return select(ctx, args.tensor("mask"), value, args.tensor("self"), dtype=ctx.result_dtype())
