"""Tensors made from nothing (full/zeros/ones/empty/arange/linspace/eye, the ``*_like`` and
``new_*`` variants) and masks of indices (tril/triu): element functions of the index
alone, computed inside whatever kernel reads them."""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.ops import add, cast, compare, const, index, mul, sub, where
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value


def _filled(ctx: LoweringContext, args: LoweringArgs, value: bool | int | float) -> TensorValue:
    dt = args.out_dtype
    if dt.is_floating_point:
        value = float(value)
    elif dt == torch.bool:
        value = bool(value)
    else:
        value = int(value)
    return ctx.lazy(args.out_shape, dt, lambda idx: const(value, dt), [])


@lowering("aten::zeros", "aten::zeros_like", "aten::new_zeros", "aten::empty.memory_format", "aten::empty_like",
          "aten::new_empty", "aten::zero", "aten::zero_", "aten::empty_strided", "aten::new_empty_strided")
def zeros(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``empty`` is zero-filled (any value is correct; zeros are deterministic)."""
    return _filled(ctx, args, 0)


@lowering("aten::ones", "aten::ones_like", "aten::new_ones")
def ones(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _filled(ctx, args, 1)


@lowering("aten::full", "aten::full_like", "aten::new_full", "aten::fill.Scalar", "aten::fill_.Scalar",
          "aten::scalar_tensor")
def full(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    value = args.static("fill_value") if args.has("fill_value") else args.static("value") \
        if args.has("value") else args.static("s")
    if not isinstance(value, bool | int | float):
        raise NotLowerable("fill value must be a number")
    return _filled(ctx, args, value)


@lowering("aten::fill.Tensor", "aten::fill_.Tensor")
def fill_tensor(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    v = args.tensor("value")
    dt = args.out_dtype
    return ctx.lazy(args.out_shape, dt, lambda idx: cast(v.load([IndexExpr.of(0)] * v.rank), dt), [v])


@lowering("aten::arange", "aten::arange.start", "aten::arange.start_step")
def arange(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    start = args.static("start", 0) if args.has("start") else 0
    step = args.static("step", 1) if args.has("step") else 1
    dt = args.out_dtype

    def element(idx: Index) -> Value:
        i = index(IndexExpr.of(idx[0]))
        if not dt.is_floating_point:
            return cast(add(mul(i, int(step), torch.int64), int(start), torch.int64), dt)
        return cast(add(mul(cast(i, torch.float64), float(step), torch.float64), float(start), torch.float64), dt)

    return ctx.lazy(args.out_shape, dt, element, [])


@lowering("aten::linspace")
def linspace(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    start, end = args.static("start"), args.static("end")
    if not isinstance(start, int | float) or not isinstance(end, int | float):
        raise NotLowerable("linspace with tensor bounds")
    steps = int(args.static("steps"))
    dt = args.out_dtype
    d = torch.float64
    step = (float(end) - float(start)) / (steps - 1) if steps > 1 else 0.0
    half = steps // 2

    def element(idx: Index) -> Value:
        if steps == 1:
            return cast(const(float(start), d), dt)
        i = cast(index(IndexExpr.of(idx[0])), d)
        lo = add(mul(i, step, d), float(start), d)
        hi = sub(float(end), mul(sub(float(steps - 1), i, d), step, d), d)
        v = where(compare("lt", i, float(half), d), lo, hi, d)
        if not dt.is_floating_point:
            v = cast(v, dt)
        return cast(v, dt)

    return ctx.lazy(args.out_shape, dt, element, [])


@lowering("aten::eye", "aten::eye.m")
def eye(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    dt = args.out_dtype
    return ctx.lazy(args.out_shape, dt, lambda idx: cast(compare("eq", index(IndexExpr.of(idx[0])),
                                                                   index(IndexExpr.of(idx[1]))), dt), [])


@lowering("aten::tril", "aten::triu", "aten::tril_", "aten::triu_")
def tril(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    diag = int(args.static("diagonal", 0))
    dt = args.out_dtype
    lower = args.name == "tril"

    def element(idx: Index) -> Value:
        i, j = IndexExpr.of(idx[-2]), IndexExpr.of(idx[-1])
        d = index(j - i)
        keep = compare("le", d, diag, torch.int64) if lower else compare("ge", d, diag, torch.int64)
        return where(keep, x.load(idx), const(0, dt), dt)

    return ctx.lazy(x.shape, dt, element, [x])


@lowering("aten::prelu", "aten::_prelu_kernel")
def prelu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, w = args.tensor("self"), args.tensor("weight")
    dt = args.out_dtype

    def element(idx: Index) -> Value:
        xv = x.load(idx)
        if w.numel == 1:
            wv = w.load([IndexExpr.of(0)] * w.rank)
        else:
            wv = w.load([IndexExpr.of(idx[1])] if w.rank == 1 else [IndexExpr.of(0) if n == 1 else idx[-w.rank + d]
                                                                    for d, n in enumerate(w.shape)])
        return where(compare("gt", xv, 0.0, dt), xv, mul(cast(wv, dt), xv, dt), dt)

    return ctx.lazy(x.shape, dt, element, [x, w])


@lowering("aten::glu")
def glu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    from ziggurat.backends.cpu.lowering.ops import unary
    from ziggurat.backends.cpu.lowering.views import norm_dim, slice_dim

    x = args.tensor("self")
    dim = norm_dim(int(args.static("dim", -1)), x.rank)
    half = x.shape[dim] // 2
    a = slice_dim(ctx, x, dim, 0, 1, half)
    b = slice_dim(ctx, x, dim, half, 1, half)
    dt = args.out_dtype
    return pointwise(ctx, [a, b], args.out_shape, dt, lambda av, bv: mul(av, unary("sigmoid", bv), dt))
