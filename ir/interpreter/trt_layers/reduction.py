"""Reference semantics of reduce, softmax, pooling, normalization, topk and cumulative."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.dialects.trt.enums import PoolingType, ReduceOperation, TopKOperation
from ziggurat.dialects.trt.reduction import (
    CumulativeOp,
    NormalizationOp,
    PoolingOp,
    ReduceOp,
    SoftMaxOp,
    TopKOp,
)
from ziggurat.dialects.trt.shapes import axes_from_mask, resolve_padding
from ziggurat.ir.interpreter.trt_layers.common import (
    compute,
    layer,
    result_dtype,
    result_shape,
    spatial_pad,
    window_view,
)


@layer(ReduceOp)
def _reduce(op: ReduceOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = compute(args[0])
    axes = axes_from_mask(op.axes.value.data, x.dim())
    kind = op.op.data
    if kind == ReduceOperation.kSUM:
        y = x.sum(dim=axes, keepdim=True)
    elif kind == ReduceOperation.kMAX:
        y = x.amax(dim=axes, keepdim=True)
    elif kind == ReduceOperation.kMIN:
        y = x.amin(dim=axes, keepdim=True)
    elif kind == ReduceOperation.kPROD:
        # one product over all the reduced elements in their row-major order, as torch.prod
        # runs it: axis by axis, a partial product overflowed to inf before a 0 turned it
        # into NaN where the product is 0 (seed 3 program 7467)
        keep = [d for d in range(x.dim()) if d not in axes]
        moved = x.permute(*keep, *axes)
        y = moved.reshape(*[x.shape[d] for d in keep], -1).prod(dim=-1)
        y = y.reshape([1 if d in axes else x.shape[d] for d in range(x.dim())])
    else:  # kAVG
        count = 1
        for axis in axes:
            count *= x.shape[axis]
        total = x.sum(dim=axes, keepdim=True)
        y = total / count if x.dtype.is_floating_point else torch.div(total, count, rounding_mode="trunc")
    return [y.reshape(result_shape(op.output)).to(result_dtype(op.output))]


@layer(SoftMaxOp)
def _softmax(op: SoftMaxOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = compute(args[0])
    axis = op.axis
    e = torch.exp(x - x.amax(dim=axis, keepdim=True))
    return [(e / e.sum(dim=axis, keepdim=True)).to(result_dtype(op.output))]


@layer(PoolingOp)
def _pooling(op: PoolingOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Max over the window with padding at -inf; average divided by the overlap of the
    window with the unpadded input (``average_count_excludes_padding``) or with the
    padded input; kMAX_AVERAGE_BLEND = (1 - blend) * max + blend * average."""
    x = compute(args[0])
    window = op.window_values()
    stride = op.stride_values()
    ones = [1] * len(window)
    spatial = x.shape[2:]
    out_spatial = result_shape(op.output)[2:]
    pre, post, _ = resolve_padding(
        op.padding_mode.data, spatial, window, stride, ones, op.pre_padding_values(), op.post_padding_values()
    )
    extra = [
        max(0, (o - 1) * s + f - (i + p0 + p1))
        for o, s, f, i, p0, p1 in zip(out_spatial, stride, window, spatial, pre, post, strict=True)
    ]
    total_post = [p + e for p, e in zip(post, extra, strict=True)]
    nothing = [0] * len(window)

    def windows(t: torch.Tensor) -> torch.Tensor:
        v = window_view(t, window, stride, ones)
        return v[(slice(None), slice(None), *(slice(0, o) for o in out_spatial))]

    reduce_dims = tuple(range(-len(window), 0))
    kind = op.type.data
    result = None
    if kind in (PoolingType.kMAX, PoolingType.kMAX_AVERAGE_BLEND):
        result = windows(spatial_pad(x, pre, total_post, float("-inf"))).amax(dim=reduce_dims)
    if kind in (PoolingType.kAVERAGE, PoolingType.kMAX_AVERAGE_BLEND):
        sums = windows(spatial_pad(x, pre, total_post, 0.0)).sum(dim=reduce_dims)
        data = torch.ones((1, 1, *spatial), dtype=x.dtype)
        if bool(op.average_count_excludes_padding.value.data):
            area = spatial_pad(data, pre, total_post, 0.0)
        else:
            area = spatial_pad(spatial_pad(data, pre, post, 1.0), nothing, extra, 0.0)
        average = sums / windows(area).sum(dim=reduce_dims)
        if result is None:
            result = average
        else:
            blend = op.blend_factor.value.data
            result = (1.0 - blend) * result + blend * average
    assert result is not None
    return [result.to(result_dtype(op.output))]


@layer(NormalizationOp)
def _normalization(op: NormalizationOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x, scale, bias = (compute(t) for t in args)
    shape = x.shape
    axes = axes_from_mask(op.axes.value.data, x.dim())
    eps = op.epsilon.value.data
    groups = op.num_groups.value.data
    if groups > 1:
        grouped = x.reshape(shape[0], groups, shape[1] // groups, *shape[2:])
        dims = (2, *(a + 1 for a in axes))
        mean = grouped.mean(dim=dims, keepdim=True)
        var = ((grouped - mean) ** 2).mean(dim=dims, keepdim=True)
        normed = ((grouped - mean) / torch.sqrt(var + eps)).reshape(shape)
        scale = scale.repeat_interleave(shape[1] // groups, dim=1)
        bias = bias.repeat_interleave(shape[1] // groups, dim=1)
    else:
        mean = x.mean(dim=axes, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=axes, keepdim=True)
        normed = (x - mean) / torch.sqrt(var + eps)
    return [(normed * scale + bias).to(result_dtype(op.output))]


@layer(TopKOp)
def _topk(op: TopKOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = compute(args[0])
    axis = op.axis
    k = op.k.value.data
    descending = op.op.data == TopKOperation.kMAX
    values, indices = torch.sort(x, dim=axis, descending=descending, stable=True)
    values = values.narrow(axis, 0, k)
    indices = indices.narrow(axis, 0, k)
    return [values.to(result_dtype(op.values)), indices.to(torch.int32)]


@layer(CumulativeOp)
def _cumulative(op: CumulativeOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = compute(args[0])
    axis = op.axis_value
    reverse = bool(op.reverse.value.data)
    if reverse:
        x = x.flip(axis)
    y = x.cumsum(dim=axis)
    if bool(op.exclusive.value.data):
        y = y - x
    if reverse:
        y = y.flip(axis)
    return [y.to(result_dtype(op.output))]
