"""Tensor factories -> IFillLayer (kLINSPACE) or IConstantLayer."""

from __future__ import annotations

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs, Scalar
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import FillOp, FillOperation

#: dtypes IFillLayer's kLINSPACE produces
_LINSPACE_DTYPES = (torch.float32, torch.int32, torch.int64)
_SMALL = 16


def filled(ctx: ConversionContext, value: Scalar) -> SSAValue:
    """A tensor of the op's result type filled with ``value``."""
    shape = list(ctx.result_shape())
    dtype = ctx.result_dtype()
    numel = 1
    for d in shape:
        numel *= d
    if dtype in _LINSPACE_DTYPES and numel > _SMALL and shape:
        return ctx.add(FillOp(FillOperation.kLINSPACE, shape, ctx.element(dtype), name=ctx.name(),
                              alpha=float(value), beta=[0.0] * len(shape))).output
    return ctx.constant(torch.full(shape, value, dtype=dtype), "value")


@converter(
    "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::zero_(Tensor(a!) self) -> Tensor(a!)",
)
def zeros(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return filled(ctx, 0)


@converter(
    "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
)
def ones(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return filled(ctx, 1)


@converter(
    "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
)
def full(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return filled(ctx, args.get_scalar("fill_value"))


@converter(
    "aten::fill.Scalar(Tensor self, Scalar value) -> Tensor",
    "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "aten::copy_.int(Tensor(a!) self, int other) -> Tensor(a!)",
    "aten::copy_.float(Tensor(a!) self, float other) -> Tensor(a!)",
)
def fill(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return filled(ctx, args.get_scalar("value" if args.has("value") else "other"))


@converter(
    "aten::tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
)
def tensor(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return ctx.constant(torch.tensor(args.get_scalar("t"), dtype=ctx.result_dtype()), "value")


def _arange_ok(args: ConverterArgs) -> str | None:
    from ziggurat.ir.types import dtype_of

    dtype = dtype_of(args.op.results[0].type)
    return None if dtype in _LINSPACE_DTYPES else f"IFillLayer does not produce {dtype} ramps"


@converter(
    "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    validator=_arange_ok,
)
def arange(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kLINSPACE: out[i] = start + i * step."""
    start = args.get_scalar("start") if args.has("start") else 0
    step = args.get_scalar("step") if args.has("step") else 1
    return ctx.add(FillOp(FillOperation.kLINSPACE, ctx.result_shape(), ctx.element(ctx.result_dtype()),
                          name=ctx.name(), alpha=float(start), beta=[float(step)])).output
