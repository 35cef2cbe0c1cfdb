"""Padding: constant (guarded loads), reflect and replicate (computed source indices),
circular (modular indices); and ``im2col`` (``F.unfold``), a gather of zero-padded patches."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.ops import cast, const, index, load_or, maximum, minimum, sub, unary
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Value


def pads_per_dim(pad: Sequence[int], rank: int) -> list[tuple[int, int]]:
    """torch's ``pad`` list (last dim first, (left, right) pairs) as per-dim (before, after)."""
    out = [(0, 0)] * rank
    for k in range(len(pad) // 2):
        d = rank - 1 - k
        out[d] = (int(pad[2 * k]), int(pad[2 * k + 1]))
    return out


def constant_pad(ctx: LoweringContext, x: TensorValue, pad: Sequence[int], value: float,
                 shape: Sequence[int]) -> TensorValue:
    pads = pads_per_dim(pad, x.rank)
    dt = x.dtype
    fill = value if dt.is_floating_point else (bool(value) if dt == torch.bool else int(value))

    def element(idx: Index) -> Value:
        sub_ = [IndexExpr.of(i) - before for i, (before, _) in zip(idx, pads, strict=True)]
        return load_or(x, sub_, fill)

    return ctx.lazy(shape, dt, element, [x])


def _computed(ctx: LoweringContext, site: int, value: Value, n: int) -> IndexExpr:
    return IndexExpr.of(Indirect(value, n, site))


def index_pad(ctx: LoweringContext, args: LoweringArgs, x: TensorValue, pad: Sequence[int], mode: str,
              shape: Sequence[int]) -> TensorValue:
    pads = pads_per_dim(pad, x.rank)
    site = ctx.error_site(f"{args.key}: padding index out of range")
    i64 = torch.int64

    def element(idx: Index) -> Value:
        subs: list[IndexExpr] = []
        for d, (i, (before, _)) in enumerate(zip(idx, pads, strict=True)):
            n = x.shape[d]
            e = IndexExpr.of(i) - before
            lo, hi = e.range()
            if lo >= 0 and hi < n:
                subs.append(e)
                continue
            if mode == "circular":
                subs.append(e % n)
                continue
            v = index(e)
            if mode == "reflect":
                r = unary("abs", v, i64)
                r = sub(n - 1, unary("abs", sub(n - 1, r, i64), i64), i64)
            else:  # replicate
                r = minimum(maximum(v, 0, i64), n - 1, i64)
            subs.append(_computed(ctx, site, r, n))
        return x.load(subs)

    return ctx.lazy(shape, x.dtype, element, [x])


@lowering("aten::constant_pad_nd")
def constant_pad_nd(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    return constant_pad(ctx, x, args.get_ints("pad", []), float(args.static("value", 0)), args.out_shape)


@lowering("aten::pad")
def pad(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    mode = args.static("mode", "constant")
    p = args.get_ints("pad", [])
    if mode == "constant":
        value = args.static("value")
        return constant_pad(ctx, x, p, float(value or 0.0), args.out_shape)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotLowerable(f"pad mode {mode}")
    return index_pad(ctx, args, x, p, mode, args.out_shape)


@lowering("aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d",
          "aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d",
          "aten::_pad_circular")
def named_pad(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    mode = "reflect" if args.name.startswith("reflection") else (
        "circular" if "circular" in args.name else "replicate")
    p = args.get_ints("padding", []) if args.has("padding") else args.get_ints("pad", [])
    return index_pad(ctx, args, x, p, mode, args.out_shape)


@lowering("aten::im2col")
def im2col(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``out[n, (c * kh + i) * kw + j, oh * OW + ow] = x[n, c, oh * sh - ph + i * dh,
    ow * sw - pw + j * dw]``, zero outside the image (an unbatched ``[C, H, W]`` too).  Floating
    tensors only: eager's im2col raises on integers ("not implemented for 'Long'")."""
    x = args.tensor("self")
    if x.rank not in (3, 4) or not x.dtype.is_floating_point:
        raise NotLowerable(f"im2col of a rank-{x.rank} {x.dtype} tensor (eager takes rank 3 or 4, floating)")
    kh, kw = (int(v) for v in args.get_ints("kernel_size", []))
    dh, dw = (int(v) for v in args.get_ints("dilation", []))
    ph, pw = (int(v) for v in args.get_ints("padding", []))
    sh, sw = (int(v) for v in args.get_ints("stride", []))
    out_w = (x.shape[-1] + 2 * pw - dw * (kw - 1) - 1) // sw + 1

    def element(idx: Index) -> Value:
        *lead, r, pixel = [IndexExpr.of(i) for i in idx]
        c, i, j = r // (kh * kw), (r // kw) % kh, r % kw
        h = (pixel // out_w) * sh - ph + i * dh
        w = (pixel % out_w) * sw - pw + j * dw
        return load_or(x, [*lead, c, h, w], 0.0)

    return ctx.lazy(args.out_shape, x.dtype, element, [x])


__all__ = ["Binary", "cast", "const"]
