"""Unary math -> IUnaryLayer (and short compositions: log2, rsqrt, expm1, trunc, isfinite ...)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.activation import accurate_expm1
from ziggurat.backends.tensorrt.converters.common import elementwise, float_input, select, unary
from ziggurat.backends.tensorrt.converters.elementwise import trunc
from ziggurat.backends.tensorrt.registry import ConverterFn, converter
from ziggurat.dialects.trt import ElementWiseOperation, UnaryOperation

E = ElementWiseOperation
U = UnaryOperation


def _not_bool(args: ConverterArgs) -> str | None:
    return "math on a bool tensor" if args.dtype("self") == torch.bool else None


def _float_math(op: UnaryOperation) -> ConverterFn:
    def convert(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
        return unary(ctx, float_input(ctx, args.tensor("self")), op)

    convert.__qualname__ = f"unary_{op.value[1:].lower()}"
    return convert


_FLOAT_UNARY = {
    "acos": U.kACOS, "acosh": U.kACOSH, "asin": U.kASIN, "asinh": U.kASINH, "atan": U.kATAN, "atanh": U.kATANH,
    "cos": U.kCOS, "cosh": U.kCOSH, "sin": U.kSIN, "sinh": U.kSINH, "tan": U.kTAN, "erf": U.kERF,
    "exp": U.kEXP, "log": U.kLOG, "sqrt": U.kSQRT, "reciprocal": U.kRECIP,
}
for _name, _op in _FLOAT_UNARY.items():
    converter(f"aten::{_name}(Tensor self) -> Tensor", validator=_not_bool)(_float_math(_op))


def _rounding(op: UnaryOperation) -> ConverterFn:
    def convert(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
        x = ctx.tensor(args.tensor("self"))
        if not ctx.dtype(x).is_floating_point:  # integers are already whole
            return elementwise(ctx, x, 0, E.kSUM, dtype=ctx.dtype(x))
        return unary(ctx, x, op)

    convert.__qualname__ = f"unary_{op.value[1:].lower()}"
    return convert


for _name, _op in {"ceil": U.kCEIL, "floor": U.kFLOOR, "round": U.kROUND}.items():
    converter(f"aten::{_name}(Tensor self) -> Tensor", validator=_not_bool)(_rounding(_op))


def _signed(op: UnaryOperation) -> ConverterFn:
    def convert(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
        return unary(ctx, ctx.tensor(args.tensor("self")), op)

    convert.__qualname__ = f"unary_{op.value[1:].lower()}"
    return convert


for _name, _op in {"abs": U.kABS, "neg": U.kNEG, "sign": U.kSIGN}.items():
    converter(f"aten::{_name}(Tensor self) -> Tensor", validator=_not_bool)(_signed(_op))


def _scaled_log(base: float) -> Callable[[ConversionContext, ConverterArgs], SSAValue]:
    def convert(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
        ln = unary(ctx, float_input(ctx, args.tensor("self")), U.kLOG, "ln")
        return elementwise(ctx, ln, 1.0 / math.log(base), E.kPROD)

    return convert


converter("aten::log2(Tensor self) -> Tensor", validator=_not_bool)(_scaled_log(2.0))
converter("aten::log10(Tensor self) -> Tensor", validator=_not_bool)(_scaled_log(10.0))


@converter("aten::exp2(Tensor self) -> Tensor", validator=_not_bool)
def exp2(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, 2.0, float_input(ctx, args.tensor("self")), E.kPOW, dtype=ctx.result_dtype())


@converter("aten::rsqrt(Tensor self) -> Tensor", validator=_not_bool)
def rsqrt(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return unary(ctx, unary(ctx, float_input(ctx, args.tensor("self")), U.kSQRT, "sqrt"), U.kRECIP)


def accurate_log1p(ctx: ConversionContext, x: SSAValue) -> SSAValue:
    """``log1p(x)`` to eager's accuracy from kLOG: ``log(1 + x)`` for ``|x| >= 0.5`` (no
    cancellation there; -inf at -1, NaN below, +inf and NaN at the ends), Kahan's
    ``x * log(u) / (u - 1)`` with ``u = 1 + x`` below, and ``x`` itself where ``u`` rounds to 1.
    ``log(1 + x)`` alone keeps no relative precision for small ``|x|``: log1p(3.08e-4) was
    1.4e-4 relatively off, amplified by a division (fuzz program s3_g1405)."""
    dtype = ctx.dtype(x)
    u = elementwise(ctx, x, 1.0, E.kSUM, suffix="u = 1 + x")
    log_u = unary(ctx, u, U.kLOG, "log u")
    kahan = elementwise(ctx, elementwise(ctx, x, log_u, E.kPROD, suffix="x log u"),
                        elementwise(ctx, u, 1.0, E.kSUB, suffix="u - 1"), E.kDIV, suffix="x log u / (u - 1)")
    near_zero = elementwise(ctx, unary(ctx, x, U.kABS, "|x|"), 0.5, E.kLESS, suffix="|x| < 0.5")
    result = select(ctx, near_zero, kahan, log_u, dtype=dtype, suffix="log1p")
    return select(ctx, elementwise(ctx, u, 1.0, E.kEQUAL, suffix="u = 1"), x, result, dtype=dtype, suffix="tiny")


@converter("aten::log1p(Tensor self) -> Tensor", validator=_not_bool)
def log1p(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return accurate_log1p(ctx, float_input(ctx, args.tensor("self")))


@converter("aten::expm1(Tensor self) -> Tensor", validator=_not_bool)
def expm1(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return accurate_expm1(ctx, float_input(ctx, args.tensor("self")))


@converter("aten::trunc(Tensor self) -> Tensor", validator=_not_bool)
def trunc_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    if not ctx.dtype(x).is_floating_point:
        return elementwise(ctx, x, 0, E.kSUM, dtype=ctx.dtype(x))
    return trunc(ctx, x, "")


@converter("aten::frac(Tensor self) -> Tensor", validator=_not_bool)
def frac(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    return elementwise(ctx, x, trunc(ctx, x), E.kSUB)


def _predicate(op: UnaryOperation) -> ConverterFn:
    def convert(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
        x = ctx.tensor(args.tensor("self"))
        if not ctx.dtype(x).is_floating_point:  # integers are never inf or nan: not (x == x)
            return unary(ctx, elementwise(ctx, x, x, E.kEQUAL, dtype=ctx.dtype(x), suffix="always"), U.kNOT)
        return unary(ctx, x, op)

    convert.__qualname__ = f"unary_{op.value[1:].lower()}"
    return convert


converter("aten::isinf(Tensor self) -> Tensor")(_predicate(U.kISINF))
converter("aten::isnan(Tensor self) -> Tensor")(_predicate(U.kISNAN))


@converter("aten::isfinite(Tensor self) -> Tensor")
def isfinite(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    if not ctx.dtype(x).is_floating_point:
        return elementwise(ctx, x, x, E.kEQUAL, dtype=ctx.dtype(x))
    bad = elementwise(ctx, unary(ctx, x, U.kISINF, "isinf"), unary(ctx, x, U.kISNAN, "isnan"), E.kOR, suffix="or")
    return unary(ctx, bad, U.kNOT)


def _bool_operands(args: ConverterArgs) -> str | None:
    if args.dtype("self") != torch.bool or args.dtype("other") != torch.bool:
        return "TensorRT has bitwise operations on bool tensors only"
    return None


def _bitwise(op: ElementWiseOperation) -> ConverterFn:
    def convert(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
        return elementwise(ctx, args.tensor("self"), args.tensor("other"), op, dtype=torch.bool)

    convert.__qualname__ = f"bitwise_{op.value[1:].lower()}"
    return convert


converter("aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor",
          "aten::__and__.Tensor(Tensor self, Tensor other) -> Tensor", validator=_bool_operands)(_bitwise(E.kAND))
converter("aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor",
          "aten::__or__.Tensor(Tensor self, Tensor other) -> Tensor", validator=_bool_operands)(_bitwise(E.kOR))
converter("aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor", validator=_bool_operands)(_bitwise(E.kXOR))

