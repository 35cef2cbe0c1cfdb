"""Pooling over the trailing 1-3 spatial dims: max/avg with padding, dilation, ceil mode,
adaptive avg/max, and the ``*_with_indices`` variants.

A window is a reduction over the kernel offsets, read with guarded loads (padding reads
as -inf for max, 0 for avg).  The consuming kernel is vectorized over the output's last
spatial dim: each lane keeps its own window accumulator (strided input reads are
gathers, stride-1 windows vector loads).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.ops import (
    add,
    cast,
    compare,
    const,
    div,
    index,
    load_or,
    logical_and,
    maximum,
    minimum,
    mul,
    predicate,
    sub,
    where,
)
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Value

I64 = torch.int64


def _expand(values: Sequence[int], k: int, default: int | None = None) -> list[int]:
    vals = list(values)
    if not vals and default is not None:
        return [default] * k
    if len(vals) == 1:
        return vals * k
    if len(vals) != k:
        raise NotLowerable(f"expected {k} values, got {vals}")
    return vals


def _float32(args: LoweringArgs) -> str | None:
    dt = args.result_dtype(0)
    return None if dt == torch.float32 else f"pooling computes float32 only, got {dt}"


def window_pool(ctx: LoweringContext, x: TensorValue, k: int, kernel: Sequence[int], stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], out_shape: Sequence[int], kind: str,
                dt: torch.dtype) -> TensorValue:
    """``kind``-reduce (``max`` / ``sum`` / ``argmax``) each window; padding reads -inf (max) or 0."""
    lead = x.rank - k
    fill = -math.inf if kind in ("max", "argmax") else 0.0

    def body(out: Index, red: Index) -> Value:
        sub_ = [IndexExpr.of(i) for i in out[:lead]]
        for d in range(k):
            sub_.append(IndexExpr.of(out[lead + d]) * stride[d] + IndexExpr.of(red[d]) * dilation[d] - padding[d])
        v = load_or(x, sub_, fill)
        return cast(v, dt) if kind != "argmax" else v

    rdt = I64 if kind == "argmax" else dt
    return ctx.reduction(kind, rdt, tuple(out_shape), tuple(kernel), body, [x])


def _pool_params(args: LoweringArgs, k: int) -> tuple[list[int], list[int], list[int], list[int]]:
    kernel = _expand(args.get_ints("kernel_size", []), k)
    stride = _expand(args.get_ints("stride", []), k) if args.get_ints("stride", []) else list(kernel)
    padding = _expand(args.get_ints("padding", [0]), k, 0)
    dilation = _expand(args.get_ints("dilation", [1]), k, 1) if args.has("dilation") else [1] * k
    return kernel, stride, padding, dilation


def _spatial_rank(name: str) -> int:
    return int(next(c for c in name if c.isdigit()))


@lowering("aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::max_pool1d_with_indices",
          "aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices", validator=_float32)
def max_pool(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    x = args.tensor("self")
    k = _spatial_rank(args.name)
    kernel, stride, padding, dilation = _pool_params(args, k)
    out_shape = args.result_shape(0)
    values = window_pool(ctx, x, k, kernel, stride, padding, dilation, out_shape, "max", args.result_dtype(0))
    if len(args.op.results) == 1:
        return values
    arg = window_pool(ctx, x, k, kernel, stride, padding, dilation, out_shape, "argmax", I64)
    lead = x.rank - k
    in_spatial = x.shape[lead:]

    def body(out: Index, red: Index) -> Value:
        sub_ = [IndexExpr.of(i) for i in out[:lead]]
        for d in range(k):
            sub_.append(IndexExpr.of(out[lead + d]) * stride[d] + IndexExpr.of(red[d]) * dilation[d] - padding[d])
        return load_or(x, sub_, -math.inf)

    last_nan = _last_nan(ctx, out_shape, kernel, body, x)

    def element(idx: Index) -> Value:
        """The flat index in the input plane of the window's maximum, as torch's kernels pick it:
        the last NaN if there is one, else the first maximum; a window whose maximum is -inf
        (all -inf or padding) points at its first element inside the input."""
        starts = [sub(mul(index(IndexExpr.of(idx[lead + d])), stride[d], I64), padding[d], I64)
                  for d in range(k)]
        first_inside: Value = const(0, I64)
        for d in range(k):
            # the first window offset whose coordinate is >= 0: max(0, ceil(-start / dilation))
            off = maximum(Binary("floordiv", add(sub(const(0, I64), starts[d], I64), dilation[d] - 1, I64),
                                 const(dilation[d], I64)), const(0, I64), I64)
            first_inside = add(mul(first_inside, kernel[d], I64), off, I64)
        all_minus_inf = compare("eq", values.load(idx), -math.inf, args.result_dtype(0))
        pos_ = _pick(last_nan.load(idx), where(all_minus_inf, first_inside, arg.load(idx), I64))
        rem = pos_
        pos: list[Value] = []
        for d in reversed(range(k)):
            pos.append(Binary("mod", rem, const(kernel[d], I64)))
            rem = Binary("floordiv", rem, const(kernel[d], I64))
        pos.reverse()
        flat: Value = const(0, I64)
        for d in range(k):
            coord = add(starts[d], mul(pos[d], dilation[d], I64), I64)
            flat = add(mul(flat, in_spatial[d], I64), coord, I64)
        return flat

    return [values, ctx.lazy(out_shape, I64, element, [x])]


def _last_nan(ctx: LoweringContext, out_shape: Sequence[int], window: Sequence[int],
              body: Callable[[Index, Index], Value], x: TensorValue) -> TensorValue:
    """Per window, the flat offset (row-major over ``window``) of its last NaN, -1 if none.

    torch's max-pooling kernels (``max_pool*d_with_indices``, ``adaptive_max_pool*d``, on every
    layout) update their running maximum where ``val > max || isnan(val)``, so a window's index
    is its *last* NaN, where an ``argmax`` reduction (``torch.argmax``'s rule) keeps the first.
    """
    def nan_body(out: Index, red: Index) -> Value:
        flat = IndexExpr.of(0)
        for d, n in enumerate(window):
            flat = flat * n + IndexExpr.of(red[d])
        return where(predicate("isnan", body(out, red)), index(flat), const(-1, I64), I64)

    return ctx.reduction("max", I64, tuple(out_shape), tuple(window), nan_body, [x])


def _pick(last_nan: Value, other: Value) -> Value:
    return where(compare("ge", last_nan, const(0, I64), I64), last_nan, other, I64)


@lowering("aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d", validator=_float32)
def avg_pool(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    k = _spatial_rank(args.name)
    kernel = _expand(args.get_ints("kernel_size", []), k)
    stride = _expand(args.get_ints("stride", []), k) if args.get_ints("stride", []) else list(kernel)
    padding = _expand(args.get_ints("padding", [0]), k, 0)
    include_pad = bool(args.static("count_include_pad", True))
    divisor = args.static("divisor_override")
    out_shape = args.out_shape
    dt = args.out_dtype
    total = window_pool(ctx, x, k, kernel, stride, padding, [1] * k, out_shape, "sum", dt)
    lead = x.rank - k
    spatial = x.shape[lead:]

    def element(idx: Index) -> Value:
        s = total.load(idx)
        if divisor:
            return div(s, float(divisor), dt)
        count: Value = const(1, I64)
        for d in range(k):
            start = sub(mul(index(IndexExpr.of(idx[lead + d])), stride[d], I64), padding[d], I64)
            end = minimum(add(start, kernel[d], I64), spatial[d] + padding[d], I64)
            if include_pad:
                n = sub(end, start, I64)
            else:
                n = sub(minimum(end, spatial[d], I64), maximum(start, 0, I64), I64)
            count = mul(count, n, I64)
        return div(s, cast(count, dt), dt)

    return ctx.lazy(out_shape, dt, element, [x])


def _adaptive_window(o: IndexExpr, n_in: int, n_out: int) -> tuple[IndexExpr, IndexExpr, int]:
    """(start, end, widest window) of output position ``o`` (torch's adaptive pooling rule)."""
    start = (o * n_in) // n_out
    end = (o * n_in + (n_in + n_out - 1)) // n_out
    widest = max(((i + 1) * n_in + n_out - 1) // n_out - (i * n_in) // n_out for i in range(n_out))
    return start, end, widest


@lowering("aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d",
          "aten::_adaptive_avg_pool2d", "aten::_adaptive_avg_pool3d",
          "aten::adaptive_max_pool1d", "aten::adaptive_max_pool2d", "aten::adaptive_max_pool3d",
          validator=_float32)
def adaptive_pool(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    x = args.tensor("self")
    k = _spatial_rank(args.name)
    out_shape = args.result_shape(0)
    dt = args.result_dtype(0)
    lead = x.rank - k
    n_in = x.shape[lead:]
    n_out = out_shape[lead:]
    is_max = "max" in args.name
    widest = [_adaptive_window(IndexExpr.of(0), n_in[d], n_out[d])[2] for d in range(k)]
    uniform = all(n_in[d] % n_out[d] == 0 for d in range(k))
    fill = -math.inf if is_max else 0.0

    def windows(out: Index) -> list[tuple[IndexExpr, IndexExpr]]:
        return [_adaptive_window(IndexExpr.of(out[lead + d]), n_in[d], n_out[d])[:2] for d in range(k)]

    def body(out: Index, red: Index) -> Value:
        win = windows(out)
        sub_ = [IndexExpr.of(i) for i in out[:lead]]
        conds: list[Value] = []
        for d in range(k):
            start, end = win[d]
            sub_.append(start + IndexExpr.of(red[d]))
            if not uniform:
                conds.append(compare("lt", index(start + IndexExpr.of(red[d])), index(end), I64))
        v = cast(load_or(x, sub_, fill), dt)
        if conds:
            v = where(logical_and(*conds), v, const(fill, dt), dt)
        return v

    kind = "max" if is_max else "sum"
    red = ctx.reduction(kind, dt, tuple(out_shape), tuple(widest), body, [x])
    if is_max:
        if len(args.op.results) == 1:
            return red
        arg = ctx.reduction("argmax", I64, tuple(out_shape), tuple(widest), body, [x])
        last_nan = _last_nan(ctx, out_shape, widest, body, x)

        def flat_index(idx: Index) -> Value:
            # the last NaN, else the first maximum (the first element when the maximum is -inf:
            # a window starts inside the input and its filler slots come last)
            rem = _pick(last_nan.load(idx), arg.load(idx))
            pos: list[Value] = []
            for d in reversed(range(k)):
                pos.append(Binary("mod", rem, const(widest[d], I64)))
                rem = Binary("floordiv", rem, const(widest[d], I64))
            pos.reverse()
            flat: Value = const(0, I64)
            for d, (start, _) in enumerate(windows(idx)):
                flat = add(mul(flat, n_in[d], I64), add(index(start), pos[d], I64), I64)
            return flat

        return [red, ctx.lazy(out_shape, I64, flat_index, [x])]

    def element(idx: Index) -> Value:
        win = windows(idx)
        count: Value = const(1, I64)
        for start, end in win:
            count = mul(count, index(end - start), I64)
        return div(red.load(idx), cast(count, dt), dt)

    return ctx.lazy(out_shape, dt, element, [x])
