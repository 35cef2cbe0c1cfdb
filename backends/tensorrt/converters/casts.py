"""Dtype casts (``aten::to.*``, ``aten::_to_copy``, ``aten::type_as``) -> ICastLayer, exact for every value.

An ``ICastLayer`` is trusted only where its result cannot depend on rounding or on what the
layer does with values the target cannot hold: widening, int -> float, float -> float, bool ->
anything.  The other casts are built so that the cast layer only ever sees exact, in-range
values, and give torch's answer for every input:

* to bool: ``x != 0`` (a NaN is True, as in eager);
* float -> int32/int64: truncation toward zero (``sign(x) * floor(|x|)``) of the values in the
  target's range; NaN, infinities and values out of range give the target's minimum, as x86's
  ``cvtt*`` instructions, and so eager on CPU and Ziggurat's cpu backend, do (the cast of a NaN is
  undefined in C++: eager on CUDA gives 0 and saturates, as TensorRT's own cast does);
* int64 -> int32: the low 32 bits (eager wraps): ``x - floor(x / 2**32) * 2**32``, moved into
  ``[-2**31, 2**31)``, then cast.

Refused (validator): dtypes outside float32/float16/bfloat16/int32/int64/bool (TensorRT's int8 and
uint8 are quantized types), a ``memory_format`` other than preserve/contiguous (eager returns that
layout; TensorRT's outputs are row-major), a non-strided layout, pinned memory, and a device other
than CUDA device 0 (TensorRT's outputs stay on the engine's device).
"""

from __future__ import annotations

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import broadcast_to, cast, elementwise, select, unary
from ziggurat.backends.tensorrt.converters.elementwise import trunc
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import ElementWiseOperation as E
from ziggurat.dialects.trt import IdentityOp
from ziggurat.dialects.trt import UnaryOperation as U
from ziggurat.ir.types import dtype_of

#: The dtypes a cast converts between.
CAST_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool)
_DEFAULT_FORMATS = (None, torch.preserve_format, torch.contiguous_format)


def cast_dtype_refusal(src: torch.dtype, dst: torch.dtype) -> str | None:
    for role, dtype in (("input", src), ("result", dst)):
        if dtype not in CAST_DTYPES:
            return (f"a cast with {role} dtype {dtype}: TensorRT casts exactly only between "
                    + ", ".join(str(d).removeprefix("torch.") for d in CAST_DTYPES))
    return None


def _placement_refusal(args: ConverterArgs) -> str | None:
    """Why the op's memory format, layout, pinning or device keep it out of TensorRT."""
    if args.has("memory_format") and args.get("memory_format") not in _DEFAULT_FORMATS:
        return (f"memory_format={args.get('memory_format')}: eager returns a tensor in that layout, "
                "TensorRT's outputs are row-major")
    if args.has("layout") and args.get("layout") not in (None, torch.strided):
        return f"layout={args.get('layout')}: TensorRT's outputs are strided tensors"
    if args.has("pin_memory") and args.get("pin_memory"):
        return "pin_memory=True: TensorRT's outputs are on the GPU"
    if args.has("device") and args.get("device") is not None:
        try:
            device = torch.device(args.get("device"))
        except (RuntimeError, TypeError):
            return f"moves the tensor to {args.get('device')!r}"
        if device.type != "cuda" or device.index not in (None, 0):
            return f"moves the tensor to {device}: TensorRT's outputs stay on the engine's CUDA device"
    return None


def cast_refusal(args: ConverterArgs) -> str | None:
    """The validator of the cast converters."""
    problem = cast_dtype_refusal(args.dtype("self"), dtype_of(args.op.results[0].type))
    return problem if problem is not None else _placement_refusal(args)


def _part(suffix: str, what: str) -> str:
    return f"{suffix} {what}".strip()


def torch_cast(ctx: ConversionContext, x: SSAValue, dtype: torch.dtype, suffix: str = "cast") -> SSAValue:
    """``x.to(dtype)`` with torch's result for every value (see the module doc); ``x`` itself
    when it already has ``dtype``."""
    x = ctx.tensor(x)
    src = ctx.dtype(x)
    problem = cast_dtype_refusal(src, dtype)
    if problem is not None:
        raise ctx.error(problem)
    if src == dtype:
        return x
    if dtype == torch.bool:
        zero = elementwise(ctx, x, 0, E.kEQUAL, dtype=src, suffix=_part(suffix, "== 0"))
        return unary(ctx, zero, U.kNOT, _part(suffix, "!= 0"))
    if src.is_floating_point and not dtype.is_floating_point:
        return _float_to_int(ctx, x, dtype, suffix)
    if src == torch.int64 and dtype == torch.int32:
        return _wrap_to_int32(ctx, x, suffix)
    return cast(ctx, x, dtype, suffix)


def _float_to_int(ctx: ConversionContext, x: SSAValue, dtype: torch.dtype, suffix: str) -> SSAValue:
    bits = dtype.itemsize * 8
    wide = cast(ctx, x, torch.float32, _part(suffix, "as float32"))  # float16/bfloat16 widen exactly
    lo, hi = -(2.0 ** (bits - 1)), 2.0 ** (bits - 1)  # both exact in float32
    at_least = elementwise(ctx, elementwise(ctx, wide, lo, E.kGREATER, dtype=torch.float32, suffix=_part(suffix, "> min")),
                           elementwise(ctx, wide, lo, E.kEQUAL, dtype=torch.float32, suffix=_part(suffix, "== min")),
                           E.kOR, dtype=torch.bool, suffix=_part(suffix, ">= min"))  # False for NaN
    below = elementwise(ctx, wide, hi, E.kLESS, dtype=torch.float32, suffix=_part(suffix, "< max"))
    fits = elementwise(ctx, at_least, below, E.kAND, dtype=torch.bool, suffix=_part(suffix, "in range"))
    safe = select(ctx, fits, wide, 0.0, dtype=torch.float32, suffix=_part(suffix, "in-range values"))
    whole = cast(ctx, trunc(ctx, safe, _part(suffix, "trunc")), dtype, suffix)
    return select(ctx, fits, whole, -(2 ** (bits - 1)), dtype=dtype, suffix=_part(suffix, "out of range"))


def _wrap_to_int32(ctx: ConversionContext, x: SSAValue, suffix: str) -> SSAValue:
    i64 = torch.int64
    words = elementwise(ctx, x, 2 ** 32, E.kFLOOR_DIV, dtype=i64, suffix=_part(suffix, "high word"))
    low = elementwise(ctx, x, elementwise(ctx, words, 2 ** 32, E.kPROD, dtype=i64, suffix=_part(suffix, "high part")),
                      E.kSUB, dtype=i64, suffix=_part(suffix, "low word"))  # in [0, 2**32)
    negative = elementwise(ctx, low, 2 ** 31 - 1, E.kGREATER, dtype=i64, suffix=_part(suffix, "sign bit"))
    signed = select(ctx, negative, elementwise(ctx, low, 2 ** 32, E.kSUB, dtype=i64, suffix=_part(suffix, "negative")),
                    low, dtype=i64, suffix=_part(suffix, "signed"))
    return cast(ctx, signed, torch.int32, suffix)


@converter(
    "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)",
    "aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)",
    "aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)",
    "aten::type_as(Tensor self, Tensor other) -> Tensor",
    "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    validator=cast_refusal,
)
def to(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """A cast to the result dtype; an identity layer when the dtype does not change (TensorRT
    outputs must be distinct tensors)."""
    y = torch_cast(ctx, args.tensor("self"), ctx.result_dtype(), "")
    if y is ctx.tensor(args.tensor("self")):
        return ctx.add(IdentityOp(y, name=ctx.name())).output
    return y


def _copy_refusal(args: ConverterArgs) -> str | None:
    src = args.dtype("src" if args.has("src") else "other")
    return cast_dtype_refusal(src, dtype_of(args.op.results[0].type))


@converter(
    "aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "aten::copy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    validator=_copy_refusal,
)
def copy(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """The value written: ``src`` cast to ``self``'s dtype (as ``to``) and broadcast to its shape."""
    src = ctx.tensor(args.tensor("src" if args.has("src") else "other"))
    value = torch_cast(ctx, src, ctx.result_dtype(), "cast")
    if ctx.shape(value) == ctx.result_shape():
        return ctx.add(IdentityOp(value, name=ctx.name())).output
    return broadcast_to(ctx, value, ctx.result_shape(), "")
