"""Upsampling (nearest, nearest-exact, linear/bilinear/trilinear) over the trailing spatial dims.

Source indices and weights follow torch's CPU kernels (``area_pixel_compute_scale`` and
``nearest_idx``), computed in float32 like them; computed indices are subscripts checked
at run time, so every read stays in the input.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.ops import add, cast, compare, const, fma, index, maximum, minimum, mul, sub, unary, where
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value

F32 = torch.float32
I64 = torch.int64


def _f32(v: float) -> float:
    return float(torch.tensor(v, dtype=torch.float32))


def _scales(args: LoweringArgs, k: int) -> list[float | None]:
    if args.has("scale_factors"):
        sf = args.static("scale_factors")
        return [None] * k if sf is None else [float(s) for s in sf]
    names = {1: ["scales"], 2: ["scales_h", "scales_w"], 3: ["scales_d", "scales_h", "scales_w"]}[k]
    return [args.static(n) if args.has(n) else None for n in names]


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> float:
    if align_corners:
        return _f32((n_in - 1) / (n_out - 1)) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return _f32(1.0 / scale)
    return _f32(n_in / n_out)


def _nearest_scale(n_in: int, n_out: int, scale: float | None) -> float:
    return _f32(1.0 / scale) if scale is not None and scale > 0 else _f32(n_in / n_out)


def _spatial(name: str) -> int:
    for tag, k in (("1d", 1), ("2d", 2), ("3d", 3), ("linear", 1), ("bilinear", 2), ("trilinear", 3)):
        if tag in name:
            return k
    raise NotLowerable(f"unknown upsample {name}")


def _float32(args: LoweringArgs) -> str | None:
    return None if args.out_dtype == F32 else "upsampling computes float32 only"


@lowering("aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::upsample_nearest3d",
          "aten::upsample_nearest1d.vec", "aten::upsample_nearest2d.vec", "aten::upsample_nearest3d.vec",
          "aten::_upsample_nearest_exact1d", "aten::_upsample_nearest_exact2d", "aten::_upsample_nearest_exact3d",
          "aten::_upsample_nearest_exact1d.vec", "aten::_upsample_nearest_exact2d.vec",
          "aten::_upsample_nearest_exact3d.vec")
def nearest(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self") if args.has("self") else args.tensor("input")
    k = _spatial(args.name)
    exact = "exact" in args.name
    out_shape = args.out_shape
    lead = x.rank - k
    scales = _scales(args, k)
    site = ctx.error_site(f"{args.key}: source index out of range")

    def element(idx: Index) -> Value:
        sub_: list[IndexExpr] = [IndexExpr.of(i) for i in idx[:lead]]
        for d in range(k):
            n_in, n_out = x.shape[lead + d], out_shape[lead + d]
            o = IndexExpr.of(idx[lead + d])
            if n_in == n_out and not exact:
                sub_.append(o)
                continue
            if n_out == 2 * n_in and not exact and scales[d] in (None, 2.0):
                sub_.append(o // 2)
                continue
            s = _nearest_scale(n_in, n_out, scales[d])
            of = cast(index(o), F32)
            if exact:
                of = add(of, 0.5, F32)
            src = unary("floor", mul(of, s, F32))
            src = minimum(cast(src, I64), n_in - 1, I64)
            sub_.append(IndexExpr.of(Indirect(src, n_in, site)))
        return x.load(sub_)

    return ctx.lazy(out_shape, x.dtype, element, [x])


@lowering("aten::upsample_linear1d", "aten::upsample_bilinear2d", "aten::upsample_trilinear3d",
          "aten::upsample_linear1d.vec", "aten::upsample_bilinear2d.vec", "aten::upsample_trilinear3d.vec",
          validator=_float32)
def linear(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self") if args.has("self") else args.tensor("input")
    k = _spatial(args.name)
    align = bool(args.static("align_corners"))
    out_shape = args.out_shape
    lead = x.rank - k
    scales = _scales(args, k)
    site = ctx.error_site(f"{args.key}: source index out of range")

    def element(idx: Index) -> Value:
        corners: list[list[tuple[IndexExpr, Value]]] = []
        for d in range(k):
            n_in, n_out = x.shape[lead + d], out_shape[lead + d]
            if n_in == n_out:
                # torch's compute_source_index_and_lambda: an unscaled dim reads its own
                # element for both corners (weights 1 and 0), never the neighbour, whose
                # inf or NaN times 0 would poison the result.
                here = IndexExpr.of(idx[lead + d])
                corners.append([(here, const(1.0, F32)), (here, const(0.0, F32))])
                continue
            s = _scale(n_in, n_out, align, scales[d])
            o = cast(index(IndexExpr.of(idx[lead + d])), F32)
            # ``scale * (dst + 0.5) - 0.5`` as eager's kernels compute it (GCC contracts it to an
            # FMA in the per-ISA builds of UpSampleKernel.cpp): 2.5 * 0.2f - 0.5 is 7.45e-9, not
            # 0, so an upscaled width-1 dim weights its one element by 1 and 7.45e-9, and an
            # infinite element gives inf, not inf * 0 = NaN (fuzz seed 148, program 22)
            src = mul(o, s, F32) if align else maximum(fma(add(o, 0.5, F32), s, -0.5, F32), 0.0, F32)
            i0 = minimum(cast(src, I64), n_in - 1, I64)
            step = cast(compare("lt", i0, n_in - 1, I64), I64)
            i1 = add(i0, step, I64)
            l1 = sub(src, cast(i0, F32), F32)
            l0 = sub(const(1.0, F32), l1, F32)
            corners.append([(IndexExpr.of(Indirect(i0, n_in, site)), l0),
                            (IndexExpr.of(Indirect(i1, n_in, site)), l1)])
        lead_subs = [IndexExpr.of(i) for i in idx[:lead]]

        def interpolate(d: int, subs: list[IndexExpr]) -> Value:
            """torch's generic kernel, which trilinear takes unless its input is channels-last
            3d with over 3 channels (``Interpolate<n>`` in UpSampleKernel.cpp): one dim at a
            time, the last innermost, ``t0 * w0 + t1 * w1``.  Weighting each corner by the
            product of its weights instead (torch's channels-last kernel) rounds differently: values that cancel exactly in eager (the mean of -1.5 and 1.5 along
            one dim, after a dim of size 1 read with weights 1 - l and l) come out as +-3e-8,
            and a count_nonzero or comparison downstream changes (seed 3 program 7214)."""
            if d == k:
                return cast(x.load(lead_subs + subs), F32)
            (i0, w0), (i1, w1) = corners[d]
            t0 = interpolate(d + 1, [*subs, i0])
            t1 = interpolate(d + 1, [*subs, i1])
            return add(mul(t0, w0, F32), mul(t1, w1, F32), F32)

        if k == 3:
            return interpolate(0, [])
        # bilinear: torch takes its channels-last kernel for small outputs whatever the layout
        # (_use_vectorized_kernel_cond_2d): each corner times the product of its weights,
        # summed in corner order (the same as the nesting for linear)
        acc: Value | None = None
        for combo in itertools.product(*corners):
            w: Value = combo[0][1]
            for c in combo[1:]:
                w = mul(w, c[1], F32)
            term = mul(w, cast(x.load(lead_subs + [c[0] for c in combo]), F32), F32)
            acc = term if acc is None else add(acc, term, F32)
        assert acc is not None
        return acc

    return ctx.lazy(out_shape, args.out_dtype, element, [x])


__all__ = ["Sequence", "const", "where"]
