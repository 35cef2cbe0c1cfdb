"""Reference semantics of shuffle, concatenation, slice, gather, scatter, padding and resize."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.dialects.trt.base import ints
from ziggurat.dialects.trt.enums import (
    GatherMode,
    InterpolationMode,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
    SampleMode,
    ScatterMode,
)
from ziggurat.dialects.trt.layout import (
    ConcatenationOp,
    GatherOp,
    GridSampleOp,
    PaddingOp,
    ResizeOp,
    ScatterOp,
    ShuffleOp,
    SliceOp,
)
from ziggurat.dialects.trt.shapes import reshape_dims
from ziggurat.ir.interpreter.trt_layers.common import (
    LayerExecutionError,
    layer,
    result_dtype,
    result_shape,
)


@layer(ShuffleOp)
def _shuffle(op: ShuffleOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    first, reshape, second, zero_is_placeholder = op.parameters()
    y = args[0]
    if first is not None:
        y = y.permute(first)
    if reshape is not None:
        y = y.reshape(reshape_dims(tuple(y.shape), reshape, zero_is_placeholder))
    if second is not None:
        y = y.permute(second)
    return [y.contiguous()]


@layer(ConcatenationOp)
def _concatenation(op: ConcatenationOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.cat(list(args), dim=op.axis.value.data)]


def sample_coordinates(mode: SampleMode, start: int, size: int, stride: int, extent: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Input coordinates read for one dim, and which of them are in bounds (for kFILL)."""
    x = start + torch.arange(size, dtype=torch.int64) * stride
    inside = (x >= 0) & (x < extent)
    if mode == SampleMode.kWRAP:
        x = torch.remainder(x, extent)
    elif mode == SampleMode.kCLAMP:
        x = x.clamp(0, extent - 1)
    elif mode == SampleMode.kREFLECT:
        if extent == 1:
            x = torch.zeros_like(x)
        else:
            period = 2 * extent - 2
            c = torch.remainder(x.abs(), period)
            x = torch.where(c >= extent, period - c, c)
    elif mode == SampleMode.kFILL:
        x = x.clamp(0, max(extent - 1, 0))
    elif not bool(inside.all()):
        raise LayerExecutionError(f"kSTRICT_BOUNDS slice reads coordinates {x.tolist()} of a dim of size {extent}")
    return x, inside


@layer(SliceOp)
def _slice(op: SliceOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = args[0]
    mode = op.mode.data
    start, size, stride = ints(op.start), ints(op.size), ints(op.stride)
    if mode == SampleMode.kFILL and x.numel() == 0:  # every coordinate is out of bounds
        fill = args[1].reshape(()) if len(args) > 1 else torch.zeros((), dtype=x.dtype)
        return [torch.full(size, fill.item(), dtype=x.dtype)]
    y = x
    mask: torch.Tensor | None = None
    for dim in range(x.dim()):
        coords, inside = sample_coordinates(mode, start[dim], size[dim], stride[dim], x.shape[dim])
        y = y.index_select(dim, coords)
        if mode == SampleMode.kFILL:
            view = inside.reshape([-1 if i == dim else 1 for i in range(x.dim())])
            mask = view if mask is None else mask & view
    if mode == SampleMode.kFILL and mask is not None:
        fill = args[1].reshape(()) if len(args) > 1 else torch.zeros((), dtype=x.dtype)
        y = torch.where(mask, y, fill.to(x.dtype))
    return [y]


def _check_indices(indices: torch.Tensor, extent: int, what: str) -> torch.Tensor:
    idx = indices.to(torch.int64)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= extent):
        raise LayerExecutionError(
            f"{what} indices must be in [0, {extent}), got values in [{int(idx.min())}, {int(idx.max())}]"
        )
    return idx


def _element_index(indices: torch.Tensor, axis: int) -> tuple[torch.Tensor, ...]:
    """Advanced-indexing tuple reading data[i0, .., indices[i], .., in] for every i of indices."""
    grids = list(torch.meshgrid(*(torch.arange(d) for d in indices.shape), indexing="ij"))
    grids[axis] = indices
    return tuple(grids)


@layer(GatherOp)
def _gather(op: GatherOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    data, indices = args
    mode = op.mode.data
    axis = op.axis.value.data
    out_shape = result_shape(op.output)
    if mode == GatherMode.kDEFAULT:
        idx = _check_indices(indices, data.shape[axis], "kDEFAULT gather")
        if op.num_elementwise_dims.value.data == 1:
            rows = [data[b].index_select(axis - 1, idx[b].reshape(-1)) for b in range(data.shape[0])]
            y = torch.stack(rows)
        else:
            y = data.index_select(axis, idx.reshape(-1))
        return [y.reshape(out_shape)]
    if mode == GatherMode.kELEMENT:
        idx = _check_indices(indices, data.shape[axis], "kELEMENT gather")
        return [data[_element_index(idx, axis)]]
    batch = op.num_elementwise_dims.value.data
    depth = indices.shape[-1]
    idx = indices.to(torch.int64)
    for j in range(depth):
        _check_indices(idx[..., j], data.shape[batch + j], f"kND gather (component {j})")
    flat_data = data.reshape(-1, *data.shape[batch:])
    flat_idx = idx.reshape(flat_data.shape[0], -1, depth)
    rows = [flat_data[b][tuple(flat_idx[b].unbind(-1))] for b in range(flat_data.shape[0])]
    return [torch.stack(rows).reshape(out_shape)]


@layer(ScatterOp)
def _scatter(op: ScatterOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    data, indices, updates = args
    y = data.clone()
    if op.mode.data == ScatterMode.kELEMENT:
        axis = op.axis.value.data
        idx = _check_indices(indices, data.shape[axis], "kELEMENT scatter")
        y[_element_index(idx, axis)] = updates
        return [y]
    depth = indices.shape[-1]
    idx = indices.to(torch.int64).reshape(-1, depth)
    for j in range(depth):
        _check_indices(idx[:, j], data.shape[j], f"kND scatter (component {j})")
    y[tuple(idx.unbind(-1))] = updates.reshape(idx.shape[0], *data.shape[depth:])
    return [y]


@layer(PaddingOp)
def _padding(op: PaddingOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = args[0]
    pre, post = ints(op.pre_padding), ints(op.post_padding)
    # F.pad order: last dim first; negative amounts trim.
    y = torch.nn.functional.pad(x, [pre[1], post[1], pre[0], post[0]], value=0)
    return [y]


def _source_coordinates(op: ResizeOp, out_len: int, in_len: int) -> torch.Tensor:
    transform = op.coordinate_transformation.data
    o = torch.arange(out_len, dtype=torch.float64)
    if out_len == 1 and op.selector_for_single_pixel.data == ResizeSelector.kUPPER:
        return torch.zeros(1, dtype=torch.float64)
    if transform == ResizeCoordinateTransformation.kALIGN_CORNERS:
        if out_len == 1:
            return torch.zeros(1, dtype=torch.float64)
        return o * ((in_len - 1) / (out_len - 1))
    ratio = in_len / out_len
    if transform == ResizeCoordinateTransformation.kASYMMETRIC:
        return o * ratio
    return (o + 0.5) * ratio - 0.5


def _round(mode: ResizeRoundMode, c: torch.Tensor) -> torch.Tensor:
    if mode == ResizeRoundMode.kFLOOR:
        return torch.floor(c)
    if mode == ResizeRoundMode.kCEIL:
        return torch.ceil(c)
    if mode == ResizeRoundMode.kHALF_UP:
        return torch.floor(c + 0.5)
    return torch.ceil(c - 0.5)


@layer(ResizeOp)
def _resize(op: ResizeOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = args[0].to(torch.float32)
    out_shape = result_shape(op.output)
    linear = op.resize_mode.data == InterpolationMode.kLINEAR
    for dim, (in_len, out_len) in enumerate(zip(x.shape, out_shape, strict=True)):
        if in_len == out_len:
            continue
        c = _source_coordinates(op, out_len, in_len)
        if not linear:
            index = _round(op.nearest_rounding.data, c).clamp(0, in_len - 1).to(torch.int64)
            x = x.index_select(dim, index)
            continue
        c = c.clamp(0, in_len - 1)
        lo = torch.floor(c).to(torch.int64)
        hi = (lo + 1).clamp(max=in_len - 1)
        shape = [-1 if i == dim else 1 for i in range(x.dim())]
        w = (c - lo).to(torch.float32).reshape(shape)
        low, high = x.index_select(dim, lo), x.index_select(dim, hi)
        # at the last pixel both neighbours are the same element: that element (an infinite
        # one stays infinite, as in eager, where 0 * inf would make a NaN of it)
        edge = (lo == hi).reshape(shape)
        x = torch.where(edge, low, low * (1 - w) + high * w)
    return [x.to(result_dtype(op.output))]




def _reflect(x: torch.Tensor, twice_low: int, twice_high: int) -> torch.Tensor:
    """Fold coordinates into [twice_low/2, twice_high/2] by reflection at the borders."""
    if twice_low == twice_high:
        return torch.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = (x - low).abs()
    extra = torch.fmod(x, span)
    flips = torch.floor(x / span)
    return torch.where(torch.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _grid_coordinates(g: torch.Tensor, size: int, align: bool, mode: SampleMode) -> torch.Tensor:
    """Pixel coordinates of normalized grid values along one axis (ONNX/TensorRT GridSample)."""
    x = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    if mode == SampleMode.kCLAMP:
        return x.clamp(0, size - 1)
    if mode == SampleMode.kREFLECT:
        x = _reflect(x, 0, 2 * (size - 1)) if align else _reflect(x, -1, 2 * size - 1)
        return x.clamp(0, size - 1)
    return x


def _taps(image: torch.Tensor, ys: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
    """image [N, C, H, W] at integer (ys, xs) [N, H', W'] -> [N, C, H', W']; zeros outside."""
    n, c, h, w = image.shape
    inside = (ys >= 0) & (ys < h) & (xs >= 0) & (xs < w)
    flat = (ys.clamp(0, h - 1) * w + xs.clamp(0, w - 1)).reshape(n, 1, -1).expand(n, c, -1)
    values = image.reshape(n, c, h * w).gather(2, flat).reshape(n, c, *ys.shape[1:])
    # a tap outside the image reads zero: selected, not multiplied by a 0/1 mask, since the
    # clamped element it gathered may be infinite or NaN (0 * inf is NaN; eager masks the load)
    return torch.where(inside.unsqueeze(1), values, torch.zeros((), dtype=values.dtype))


@layer(GridSampleOp)
def _grid_sample(op: GridSampleOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    image = args[0].to(torch.float32)
    grid = args[1].to(torch.float32)
    _, _, h, w = image.shape
    align = bool(op.align_corners.value.data)
    mode = op.sample_mode.data
    x = _grid_coordinates(grid[..., 0], w, align, mode)
    y = _grid_coordinates(grid[..., 1], h, align, mode)
    if op.interpolation_mode.data == InterpolationMode.kNEAREST:
        out = _taps(image, torch.round(y).to(torch.int64), torch.round(x).to(torch.int64))
    else:
        x0, y0 = torch.floor(x), torch.floor(y)
        wx, wy = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
        x0i, y0i = x0.to(torch.int64), y0.to(torch.int64)
        out = (_taps(image, y0i, x0i) * (1 - wx) * (1 - wy) + _taps(image, y0i, x0i + 1) * wx * (1 - wy)
               + _taps(image, y0i + 1, x0i) * (1 - wx) * wy + _taps(image, y0i + 1, x0i + 1) * wx * wy)
    return [out.to(result_dtype(op.output))]
