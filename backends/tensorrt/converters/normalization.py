"""Normalizations: batch norm -> IScaleLayer (folded statistics); layer/instance/group norm ->
reduce and elementwise layers computing eager's formula.

Eager's instance and group norm kernels compute ``x * a + (bias - mean * a)`` with
``a = rstd * weight``, its layer norm ``(x * rstd - rstd * mean) * weight + bias``, all in
float32 for 16-bit inputs, from statistics that stay finite for any finite input: the mean
of values near the float32 limit is finite (its Welford update never forms their sum), and
where the squares overflow, ``rstd`` is 0 and the output is the bias.  INormalizationLayer
computes ``(x - mean) * rstd * weight + bias`` from statistics whose overflow the engine does
not document: its float32 sum (and ``x - mean``) of such values gave NaN where eager gives the
bias (fuzz seeds 96 and 111), and an infinite weight gives NaN where eager gives +-inf.  So
these norms are built from layers whose overflow is eager's: the mean is the sum of
``x * (1 / n)`` (a sum of terms of at most ``max |x| / n``), the variance the mean of the
centred squares, and the output eager's form of the two.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import FLOAT_DTYPES, cast, elementwise, reduce, reshape, unary
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import (
    ElementWiseOperation,
    ReduceOperation,
    ScaleMode,
    ScaleOp,
    UnaryOperation,
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


def _widened(ctx: ConversionContext, x: SSAValue) -> SSAValue:
    """``x`` in float32: eager computes a 16-bit tensor's norm in float32 (its squares overflow
    float16 from 256 on) and rounds the output once."""
    return cast(ctx, x, torch.float32, "to float32") if ctx.dtype(x) != torch.float32 else x


def _narrowed(ctx: ConversionContext, y: SSAValue, dtype: torch.dtype) -> SSAValue:
    return cast(ctx, y, dtype, "to input dtype") if dtype != torch.float32 else y


def _moments(ctx: ConversionContext, x: SSAValue, dims: Sequence[int], count: int, eps: float
             ) -> tuple[SSAValue, SSAValue]:
    """Mean and ``1 / sqrt(var + eps)`` of float32 ``x`` over ``dims`` (``count`` elements),
    kept as size-1 dims.  The mean sums ``x * (1 / count)``: finite wherever ``x`` is, as eager's
    (a float32 sum of values near the limit overflowed)."""
    share = elementwise(ctx, x, 1.0 / max(count, 1), E.kPROD, suffix="x / n")
    mean = reduce(ctx, share, ReduceOperation.kSUM, dims, True, "mean")
    centered = elementwise(ctx, x, mean, E.kSUB, suffix="centered")
    var = reduce(ctx, elementwise(ctx, centered, centered, E.kPROD, suffix="squared"), ReduceOperation.kAVG,
                 dims, True, "variance")
    std = unary(ctx, elementwise(ctx, var, eps, E.kSUM, suffix="var + eps"), UnaryOperation.kSQRT, "std")
    return mean, elementwise(ctx, 1.0, std, E.kDIV, dtype=torch.float32, suffix="rstd")


def _scale_shift_norm(ctx: ConversionContext, args: ConverterArgs, groups: int) -> SSAValue:
    """Instance norm (``groups`` = C) and group norm as eager computes them: statistics per
    (sample, group) over ``x`` seen as [N, G, C/G, spatial], then :func:`_scale_shift` with
    the per-channel weight and bias as [1, G, C/G, 1].  N may be dynamic; C and the spatial
    dims must be static (the mean's ``1 / n``)."""
    x = ctx.tensor(args.tensor("input"))
    shape = ctx.shape(x, dynamic=True)
    dtype = ctx.dtype(x)
    reduced = ctx.dims(x, range(1, len(shape)))
    channels = reduced[0]
    per = channels // groups
    spatial = 1
    for d in reduced[1:]:
        spatial *= d
    grouped = reshape(ctx, _widened(ctx, x), [shape[0], groups, per, spatial], "grouped")
    mean, rstd = _moments(ctx, grouped, [2, 3], per * spatial, args.get_float("eps"))
    affine = [1, groups, per, 1]
    weight, bias = args.optional_tensor("weight"), args.optional_tensor("bias")
    y = _scale_shift(ctx, grouped, mean, rstd,
                     None if weight is None else _affine(ctx, weight, affine, 1.0, torch.float32, "weight"),
                     None if bias is None else _affine(ctx, bias, affine, 0.0, torch.float32, "bias"))
    return _narrowed(ctx, reshape(ctx, y, list(shape), "result shape"), dtype)


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
    """Eager's ``(x * rstd - rstd * mean) * weight + bias`` over the normalized (static) dims."""
    x = ctx.tensor(args.tensor("input"))
    normalized = args.get_ints("normalized_shape")
    rank = ctx.rank(x)
    axes = list(range(rank - len(normalized), rank))
    count = 1
    for d in ctx.dims(x, axes):
        count *= d
    dtype = ctx.dtype(x)
    wide = _widened(ctx, x)
    mean, rstd = _moments(ctx, wide, axes, count, args.get_float("eps"))
    shift = elementwise(ctx, 0.0, elementwise(ctx, rstd, mean, E.kPROD, suffix="rstd * mean"), E.kSUB,
                        dtype=torch.float32, suffix="-rstd * mean")
    y = elementwise(ctx, elementwise(ctx, wide, rstd, E.kPROD, suffix="x * rstd"), shift, E.kSUM, suffix="normalized")
    shape = [1] * (rank - len(normalized)) + list(normalized)
    if not args.is_none("weight"):
        y = elementwise(ctx, y, _affine(ctx, args.tensor("weight"), shape, 1.0, torch.float32, "weight"), E.kPROD,
                        suffix="weight" if not args.is_none("bias") else "")
    if not args.is_none("bias"):
        y = elementwise(ctx, y, _affine(ctx, args.tensor("bias"), shape, 0.0, torch.float32, "bias"), E.kSUM)
    return _narrowed(ctx, y, dtype)


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
    return _scale_shift_norm(ctx, args, ctx.dims(ctx.tensor(args.tensor("input")), [1])[0])


def _group_norm_ok(args: ConverterArgs) -> str | None:
    if args.rank("input") < 2:
        return "group_norm needs [N, C, ...]"
    return _float_input(args)


@converter(
    "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor",
    validator=_group_norm_ok,
)
def group_norm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _scale_shift_norm(ctx, args, args.get_int("num_groups"))
