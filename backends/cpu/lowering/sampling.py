"""``grid_sampler`` (2-D, bilinear/nearest, zeros/border padding) and bicubic upsampling:
computed source coordinates, each tap a checked indirect load."""

from __future__ import annotations

import itertools

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.ops import (
    add,
    cast,
    compare,
    const,
    index,
    logical_and,
    maximum,
    minimum,
    mul,
    sub,
    unary,
    where,
)
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.upsample import _scale, _scales
from ziggurat.backends.cpu.lowering.values import Value

F32 = torch.float32
I64 = torch.int64


def _float32(args: LoweringArgs) -> str | None:
    return None if args.out_dtype == F32 else "float32 only"


@lowering("aten::grid_sampler", "aten::grid_sampler_2d", validator=_float32)
def grid_sampler(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, grid = args.tensor("input"), args.tensor("grid")
    if x.rank != 4:
        raise NotLowerable("grid_sampler on volumes (5-D)")
    mode, pad = int(args.static("interpolation_mode")), int(args.static("padding_mode"))
    align = bool(args.static("align_corners"))
    if mode not in (0, 1) or pad not in (0, 1):
        raise NotLowerable("grid_sampler: bicubic interpolation or reflection padding")
    h, w = x.shape[2:]
    site = ctx.error_site(f"{args.key}: sample index out of range")

    def unnormalize(g: Value, size: int) -> Value:
        if align:
            v = mul(add(g, 1.0, F32), (size - 1) / 2.0, F32)
        else:
            v = mul(sub(mul(add(g, 1.0, F32), float(size), F32), 1.0, F32), 0.5, F32)
        if pad == 1:  # border: clip the coordinate; a NaN one to 0 as eager (max(NaN, 0) is 0 there)
            v = minimum(where(compare("gt", v, 0.0, F32), v, 0.0, F32), float(size - 1), F32)
        return v

    def tap(n: IndexExpr, c: IndexExpr, yi: Value, xi: Value) -> Value:
        inside = logical_and(compare("ge", yi, 0, I64), compare("lt", yi, h, I64),
                             compare("ge", xi, 0, I64), compare("lt", xi, w, I64))
        ys = minimum(maximum(yi, 0, I64), h - 1, I64)
        xs = minimum(maximum(xi, 0, I64), w - 1, I64)
        v = x.load([n, c, IndexExpr.of(Indirect(ys, h, site)), IndexExpr.of(Indirect(xs, w, site))])
        return where(inside, cast(v, F32), const(0.0, F32), F32)

    def element(idx: Index) -> Value:
        n, c, oy, ox = (IndexExpr.of(i) for i in idx)
        gx = unnormalize(cast(grid.load([n, oy, ox, IndexExpr.of(0)]), F32), w)
        gy = unnormalize(cast(grid.load([n, oy, ox, IndexExpr.of(1)]), F32), h)
        if mode == 1:  # nearest (round half to even, as nearbyint)
            return tap(n, c, cast(unary("round", gy), I64), cast(unary("round", gx), I64))
        x0f, y0f = unary("floor", gx), unary("floor", gy)
        x0, y0 = cast(x0f, I64), cast(y0f, I64)
        ax, ay = sub(gx, x0f, F32), sub(gy, y0f, F32)
        acc: Value = const(0.0, F32)
        for dy, dx in itertools.product((0, 1), (0, 1)):
            wy = ay if dy else sub(1.0, ay, F32)
            wx = ax if dx else sub(1.0, ax, F32)
            v = tap(n, c, add(y0, dy, I64), add(x0, dx, I64))
            acc = add(acc, mul(mul(wy, wx, F32), v, F32), F32)
        return acc

    return ctx.lazy(args.out_shape, F32, element, [x, grid])


_A = -0.75


def _cubic_weights(t: Value) -> list[Value]:
    """Keys' cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 for fraction ``t``."""
    def near(s: Value) -> Value:  # |s| <= 1
        return add(mul(mul(sub(mul(s, _A + 2, F32), _A + 3, F32), s, F32), s, F32), 1.0, F32)

    def far(s: Value) -> Value:  # 1 < |s| < 2
        return sub(mul(add(mul(sub(mul(s, _A, F32), 5 * _A, F32), s, F32), 8 * _A, F32), s, F32), 4 * _A, F32)

    return [far(add(t, 1.0, F32)), near(t), near(sub(1.0, t, F32)), far(sub(2.0, t, F32))]


@lowering("aten::upsample_bicubic2d", "aten::upsample_bicubic2d.vec", validator=_float32)
def bicubic(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self") if args.has("self") else args.tensor("input")
    align = bool(args.static("align_corners"))
    out_shape = args.out_shape
    scales = _scales(args, 2)
    lead = x.rank - 2
    site = ctx.error_site(f"{args.key}: source index out of range")

    def axis(o: IndexExpr, d: int) -> tuple[list[IndexExpr], list[Value]]:
        n_in, n_out = x.shape[lead + d], out_shape[lead + d]
        s = _scale(n_in, n_out, align, scales[d])
        of = cast(index(o), F32)
        src = mul(of, s, F32) if align else sub(mul(add(of, 0.5, F32), s, F32), 0.5, F32)
        base_f = unary("floor", src)
        t = sub(src, base_f, F32)
        base = cast(base_f, I64)
        taps = []
        for k in (-1, 0, 1, 2):
            i = minimum(maximum(add(base, k, I64), 0, I64), n_in - 1, I64)
            taps.append(IndexExpr.of(Indirect(i, n_in, site)))
        return taps, _cubic_weights(t)

    def element(idx: Index) -> Value:
        ys, wy = axis(IndexExpr.of(idx[lead]), 0)
        xs, wx = axis(IndexExpr.of(idx[lead + 1]), 1)
        head = [IndexExpr.of(i) for i in idx[:lead]]
        acc: Value = const(0.0, F32)
        for a in range(4):
            row: Value = const(0.0, F32)
            for b in range(4):
                row = add(row, mul(wx[b], cast(x.load([*head, ys[a], xs[b]]), F32), F32), F32)
            acc = add(acc, mul(wy[a], row, F32), F32)
        return acc

    return ctx.lazy(out_shape, F32, element, [x])
