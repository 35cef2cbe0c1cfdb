"""Normalizations: batch norm -> IScaleLayer (folded statistics); layer/instance/group norm -> INormalizationLayer.

Eager's batch, instance and group norm kernels compute ``x * a + (bias - mean * a)`` with
``a = rstd * weight``; INormalizationLayer computes ``(x - mean) * rstd * weight + bias``.
The two agree wherever the weight and bias are finite, not elsewhere (an infinite weight:
NaN where ``x`` or ``mean`` is 0 or their signs differ, against +-inf).  So instance and
group norm use INormalizationLayer only with constant, finite affine parameters, and
otherwise build eager's form from reduce and elementwise layers (:func:`_scale_shift_norm`).
Layer norm is ``(x - mean) * rstd * weight + bias`` in eager too.
"""

from __future__ import annotations

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import FLOAT_DTYPES, cast, elementwise, reduce, reshape, unary
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import (
    ElementWiseOperation,
    NormalizationOp,
    ReduceOperation,
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
        scale = (1 / torch.sqrt(var + eps)) * weight  # eager's alpha and beta, in float32
        shift = bias - mean * scale
        if ctx.rank(x) >= 3:
            return ctx.add(ScaleOp(x, ScaleMode.kCHANNEL, name=ctx.name(), scale=ctx.constant(scale.to(dtype), "scale"),
                                   shift=ctx.constant(shift.to(dtype), "shift"))).output
        return elementwise(ctx, elementwise(ctx, x, ctx.constant(scale.reshape(shape).to(dtype), "scale"), E.kPROD,
                                            suffix="scale"), ctx.constant(shift.reshape(shape).to(dtype), "shift"),
                           E.kSUM)
    # Statistics computed at run time: the same formula in elementwise layers.
    def vec(name: str) -> SSAValue | None:
        value = args.optional_tensor(name)
        return None if value is None else reshape(ctx, cast(ctx, ctx.tensor(value), dtype, f"{name} cast"), shape, name)

    running_mean, running_var = vec("running_mean"), vec("running_var")
    assert running_mean is not None and running_var is not None
    std = unary(ctx, elementwise(ctx, running_var, eps, E.kSUM, suffix="var + eps"), UnaryOperation.kSQRT, "std")
    rstd = elementwise(ctx, 1.0, std, E.kDIV, dtype=dtype, suffix="rstd")
    return _scale_shift(ctx, x, running_mean, rstd, vec("weight"), vec("bias"))


def _scale_shift(ctx: ConversionContext, x: SSAValue, mean: SSAValue, rstd: SSAValue, weight: SSAValue | None,
                 bias: SSAValue | None) -> SSAValue:
    """Eager's ``x * a + (bias - mean * a)`` with ``a = rstd * weight`` (all broadcast to x)."""
    a = rstd if weight is None else elementwise(ctx, rstd, weight, E.kPROD, suffix="alpha")
    moved = elementwise(ctx, mean, a, E.kPROD, suffix="mean * alpha")
    shift = elementwise(ctx, 0.0 if bias is None else bias, moved, E.kSUB, dtype=ctx.dtype(x), suffix="beta")
    return elementwise(ctx, elementwise(ctx, x, a, E.kPROD, suffix="x * alpha"), shift, E.kSUM, suffix="x * alpha + beta")


def _finite_constants(ctx: ConversionContext, *values: SSAValue | None) -> bool:
    """Each value absent or a constant without NaN or infinities."""
    for value in values:
        if value is None:
            continue
        literal = ctx.literal(value)
        if literal is None or not bool(torch.isfinite(literal.float()).all()):
            return False
    return True


def _scale_shift_norm(ctx: ConversionContext, args: ConverterArgs, groups: int) -> SSAValue:
    """Instance norm (``groups`` = C) and group norm as eager computes them: statistics per
    (sample, group) from reduce layers over ``x`` seen as [N, G, C/G, spatial], then
    :func:`_scale_shift` with the per-channel weight and bias as [1, G, C/G, 1]."""
    x = ctx.tensor(args.tensor("input"))
    shape = ctx.shape(x)
    dtype = ctx.dtype(x)
    n, channels = shape[0], shape[1]
    per = channels // groups
    spatial = 1
    for d in shape[2:]:
        spatial *= d
    grouped = reshape(ctx, x, [n, groups, per, spatial], "grouped")
    mean = reduce(ctx, grouped, ReduceOperation.kAVG, [2, 3], True, "mean")
    centered = elementwise(ctx, grouped, mean, E.kSUB, suffix="centered")
    var = reduce(ctx, elementwise(ctx, centered, centered, E.kPROD, suffix="squared"), ReduceOperation.kAVG,
                 [2, 3], True, "variance")
    std = unary(ctx, elementwise(ctx, var, args.get_float("eps"), E.kSUM, suffix="var + eps"), UnaryOperation.kSQRT,
                "std")
    rstd = elementwise(ctx, 1.0, std, E.kDIV, dtype=dtype, suffix="rstd")
    affine = [1, groups, per, 1]
    weight, bias = args.optional_tensor("weight"), args.optional_tensor("bias")
    y = _scale_shift(ctx, grouped, mean, rstd,
                     None if weight is None else _affine(ctx, weight, affine, 1.0, dtype, "weight"),
                     None if bias is None else _affine(ctx, bias, affine, 0.0, dtype, "bias"))
    return reshape(ctx, y, list(shape), "result shape")


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
    if not _finite_constants(ctx, args.optional_tensor("weight"), args.optional_tensor("bias")):
        return _scale_shift_norm(ctx, args, ctx.shape(ctx.tensor(args.tensor("input")))[1])
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
    """INormalizationLayer with num_groups (unit [1, G, 1, ...] scale/bias), then the per-channel affine
    (constant, finite weight and bias); eager's scale-shift form otherwise."""
    if not _finite_constants(ctx, args.optional_tensor("weight"), args.optional_tensor("bias")):
        return _scale_shift_norm(ctx, args, args.get_int("num_groups"))
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
