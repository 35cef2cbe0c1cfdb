"""Normalizations: batch norm -> IScaleLayer (folded statistics); layer/instance/group norm -> INormalizationLayer."""

from __future__ import annotations

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import FLOAT_DTYPES, cast, elementwise, reshape, unary
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import (
    ElementWiseOperation,
    NormalizationOp,
    ScaleMode,
    ScaleOp,
    UnaryOperation,
    mask_from_axes,
)

E = ElementWiseOperation


def _float_input(args: ConverterArgs) -> str | None:
    dtype = args.dtype("input")
    return None if dtype in FLOAT_DTYPES else f"normalization of {dtype} tensors"


def _batch_norm_ok(args: ConverterArgs) -> str | None:
    if args.get_bool("training"):
        return "batch_norm in training mode (batch statistics)"
    if args.is_none("running_mean") or args.is_none("running_var"):
        return "batch_norm without running statistics"
    if args.rank("input") < 2:
        return "batch_norm of a tensor without a channel dim"
    return _float_input(args)


def _per_channel(ctx: ConversionContext, value: SSAValue | None, channels: int, default: float) -> torch.Tensor | None:
    if value is None:
        return torch.full((channels,), default)
    literal = ctx.literal(value)
    return None if literal is None else literal.to(torch.float32).reshape(channels)


@converter(
    "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    validator=_batch_norm_ok,
)
def batch_norm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Constant statistics fold into one kCHANNEL scale: x * w/sqrt(var+eps) + (b - mean * w/sqrt(var+eps))."""
    x = ctx.tensor(args.tensor("input"))
    dtype = ctx.dtype(x)
    channels = ctx.shape(x)[1]
    eps = args.get_float("eps")
    stats = [
        _per_channel(ctx, args.optional_tensor("weight"), channels, 1.0),
        _per_channel(ctx, args.optional_tensor("bias"), channels, 0.0),
        _per_channel(ctx, args.tensor("running_mean"), channels, 0.0),
        _per_channel(ctx, args.tensor("running_var"), channels, 1.0),
    ]
    shape = [1, channels] + [1] * (ctx.rank(x) - 2)
    if all(s is not None for s in stats):
        weight, bias, mean, var = stats  # pyright: ignore[reportGeneralTypeIssues]
        assert weight is not None and bias is not None and mean is not None and var is not None
        scale = weight / torch.sqrt(var + eps)
        shift = bias - mean * scale
        if ctx.rank(x) >= 3:
            return ctx.add(ScaleOp(x, ScaleMode.kCHANNEL, name=ctx.name(), scale=ctx.constant(scale.to(dtype), "scale"),
                                   shift=ctx.constant(shift.to(dtype), "shift"))).output
        return elementwise(ctx, elementwise(ctx, x, ctx.constant(scale.reshape(shape).to(dtype), "scale"), E.kPROD,
                                            suffix="scale"), ctx.constant(shift.reshape(shape).to(dtype), "shift"),
                           E.kSUM)
    # Statistics computed at run time: the same formula in elementwise layers.
    def vec(name: str, default: float) -> SSAValue:
        value = args.optional_tensor(name)
        if value is None:
            return ctx.constant(torch.full(shape, default, dtype=dtype), name)
        return reshape(ctx, cast(ctx, ctx.tensor(value), dtype, f"{name} cast"), shape, name)

    inv = unary(ctx, elementwise(ctx, vec("running_var", 1.0), eps, E.kSUM, suffix="var + eps"),
                UnaryOperation.kSQRT, "std")
    scale = elementwise(ctx, vec("weight", 1.0), inv, E.kDIV, suffix="scale")
    centered = elementwise(ctx, x, vec("running_mean", 0.0), E.kSUB, suffix="centered")
    return elementwise(ctx, elementwise(ctx, centered, scale, E.kPROD, suffix="scaled"), vec("bias", 0.0), E.kSUM)


def _affine(ctx: ConversionContext, value: SSAValue | None, shape: list[int], default: float, dtype: torch.dtype,
            name: str) -> SSAValue:
    if value is None:
        return ctx.constant(torch.full(shape, default, dtype=dtype), name)
    literal = ctx.literal(value)
    if literal is not None:
        return ctx.constant(literal.to(dtype).reshape(shape), name)
    return reshape(ctx, cast(ctx, ctx.tensor(value), dtype, f"{name} cast"), shape, name)


@converter(
    "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
    validator=_float_input,
)
def layer_norm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("input"))
    normalized = args.get_ints("normalized_shape")
    rank = ctx.rank(x)
    axes = list(range(rank - len(normalized), rank))
    shape = [1] * (rank - len(normalized)) + list(normalized)
    dtype = ctx.dtype(x)
    scale = _affine(ctx, args.optional_tensor("weight"), shape, 1.0, dtype, "weight")
    bias = _affine(ctx, args.optional_tensor("bias"), shape, 0.0, dtype, "bias")
    return ctx.add(NormalizationOp(x, scale, bias, mask_from_axes(axes), name=ctx.name(),
                                   epsilon=args.get_float("eps"))).output


def _instance_norm_ok(args: ConverterArgs) -> str | None:
    if not args.get_bool("use_input_stats"):
        return "instance_norm with running statistics"
    if args.rank("input") < 3:
        return "instance_norm needs [N, C, *spatial]"
    return _float_input(args)


@converter(
    "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    validator=_instance_norm_ok,
)
def instance_norm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("input"))
    rank = ctx.rank(x)
    channels = ctx.shape(x)[1]
    shape = [1, channels] + [1] * (rank - 2)
    dtype = ctx.dtype(x)
    scale = _affine(ctx, args.optional_tensor("weight"), shape, 1.0, dtype, "weight")
    bias = _affine(ctx, args.optional_tensor("bias"), shape, 0.0, dtype, "bias")
    return ctx.add(NormalizationOp(x, scale, bias, mask_from_axes(range(2, rank)), name=ctx.name(),
                                   epsilon=args.get_float("eps"))).output


def _group_norm_ok(args: ConverterArgs) -> str | None:
    if args.rank("input") < 3 and args.get_int("num_groups") > 1:
        return "INormalizationLayer groups channels of [N, C, *spatial] inputs"
    if args.rank("input") < 2:
        return "group_norm needs [N, C, ...]"
    return _float_input(args)


@converter(
    "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor",
    validator=_group_norm_ok,
)
def group_norm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """INormalizationLayer with num_groups (unit [1, G, 1, ...] scale/bias), then the per-channel affine."""
    x = ctx.tensor(args.tensor("input"))
    rank = ctx.rank(x)
    groups = args.get_int("num_groups")
    channels = ctx.shape(x)[1]
    dtype = ctx.dtype(x)
    # INormalizationLayer splits channels only for num_groups != 1: one group is a norm over C and space.
    unit = [1, groups] + [1] * (rank - 2)
    axes = range(2, rank) if groups > 1 else range(1, rank)
    normed = ctx.add(NormalizationOp(
        x, ctx.constant(torch.ones(unit, dtype=dtype), "unit scale"), ctx.constant(torch.zeros(unit, dtype=dtype), "unit bias"),
        mask_from_axes(axes), name=ctx.name("normalize"), epsilon=args.get_float("eps"), num_groups=groups,
    )).output
    shape = [1, channels] + [1] * (rank - 2)
    y = normed
    if not args.is_none("weight"):
        y = elementwise(ctx, y, _affine(ctx, args.tensor("weight"), shape, 1.0, dtype, "weight"), E.kPROD,
                        suffix="weight" if not args.is_none("bias") else "")
    if not args.is_none("bias"):
        y = elementwise(ctx, y, _affine(ctx, args.tensor("bias"), shape, 0.0, dtype, "bias"), E.kSUM)
    return y
