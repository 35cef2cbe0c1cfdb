"""Assorted ops: tensors from Python data, copy, diag/diag_embed, tril/triu_indices, outer
products, bilinear, cross, bucketize, one_hot, hann_window."""

from __future__ import annotations

import math

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.index_checks import asserted_index, index_site
from ziggurat.backends.cpu.lowering.ops import (
    add,
    cast,
    compare,
    const,
    index,
    logical_and,
    logical_not,
    mul,
    sub,
    unary,
    where,
)
from ziggurat.backends.cpu.lowering.pointwise import broadcast_index, pointwise
from ziggurat.backends.cpu.lowering.reduce_util import reduce
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import BufferValue, Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Value
from ziggurat.backends.cpu.lowering.views import norm_dim, permute, reshape

I64 = torch.int64
F32 = torch.float32


@lowering("aten::tensor", "aten::tensor.float", "aten::tensor.int", "aten::tensor.bool", "aten::as_tensor.list")
def tensor(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    data = args.get("data") if args.has("data") else args.get("t")
    if isinstance(data, TensorValue) or data is None:
        raise NotLowerable("tensor() of runtime data")
    try:
        value = torch.tensor(data, dtype=args.out_dtype)
    except (TypeError, ValueError, RuntimeError) as e:
        raise NotLowerable(f"tensor() data: {e}") from None
    if tuple(value.shape) != args.out_shape:
        raise NotLowerable("tensor() data does not match the result type")
    if value.numel() <= 16:
        flat = value.reshape(-1).tolist()
        shape = args.out_shape
        dt = args.out_dtype

        def element(idx: Index) -> Value:
            from ziggurat.backends.cpu.lowering.index import flat_index

            pos = flat_index(idx, shape)
            if pos.is_constant():
                return const(flat[pos.const], dt)
            out: Value = const(flat[-1], dt)
            p = index(pos)
            for i in range(len(flat) - 2, -1, -1):
                out = where(compare("eq", p, i, I64), const(flat[i], dt), out, dt)
            return out

        return ctx.lazy(shape, dt, element, [])
    return BufferValue(ctx.constant(value, "tensor"))


@lowering("aten::copy", "aten::copy_", "aten::copy_.Tensor", "aten::copy_.float", "aten::copy_.int")
def copy(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``self.copy_(src)`` as a value: ``src`` broadcast to self's shape, in self's dtype."""
    src = args.tensor_or_scalar("src") if args.has("src") else args.tensor_or_scalar("other")
    return pointwise(ctx, [src], args.out_shape, args.out_dtype, lambda v: v)


@lowering("aten::diag")
def diag(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    k = int(args.static("diagonal", 0))
    dt = x.dtype
    if x.rank == 1:
        def element(idx: Index) -> Value:
            i, j = IndexExpr.of(idx[0]), IndexExpr.of(idx[1])
            on = compare("eq", index(j - i), k, I64)
            from ziggurat.backends.cpu.lowering.ops import load_or

            return where(on, load_or(x, [i - max(-k, 0)], 0), const(0, dt), dt)

        return ctx.lazy(args.out_shape, dt, element, [x])
    return ctx.lazy(args.out_shape, dt, lambda idx: x.load([IndexExpr.of(idx[0]) + max(-k, 0),
                                                           IndexExpr.of(idx[0]) + max(k, 0)]), [x])


@lowering("aten::diag_embed")
def diag_embed(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    offset = int(args.static("offset", 0))
    shape = args.out_shape
    d1 = norm_dim(int(args.static("dim1", -2)), len(shape))
    d2 = norm_dim(int(args.static("dim2", -1)), len(shape))
    rest = [d for d in range(len(shape)) if d not in (d1, d2)]
    dt = x.dtype

    def element(idx: Index) -> Value:
        a, b = IndexExpr.of(idx[d1]), IndexExpr.of(idx[d2])
        on = compare("eq", index(b - a), offset, I64)
        from ziggurat.backends.cpu.lowering.ops import load_or

        sub_ = [IndexExpr.of(idx[d]) for d in rest] + [a - max(-offset, 0)]
        return where(on, load_or(x, sub_, 0), const(0, dt), dt)

    return ctx.lazy(shape, dt, element, [x])


@lowering("aten::tril_indices", "aten::triu_indices")
def tri_indices(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    fn = torch.tril_indices if args.name == "tril_indices" else torch.triu_indices
    value = fn(int(args.static("row")), int(args.static("col")), int(args.static("offset", 0)),
               dtype=args.out_dtype)
    return BufferValue(ctx.constant(value, args.name))


@lowering("aten::outer", "aten::ger")
def outer(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    a, b = args.tensor("self"), args.tensor("vec2")
    dt = args.out_dtype
    return ctx.lazy(args.out_shape, dt, lambda idx: mul(cast(a.load([idx[0]]), dt), cast(b.load([idx[1]]), dt), dt),
                    [a, b])


@lowering("aten::addr")
def addr(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, a, b = args.tensor("self"), args.tensor("vec1"), args.tensor("vec2")
    beta, alpha = args.static("beta", 1), args.static("alpha", 1)
    dt = args.out_dtype
    shape = args.out_shape

    def element(idx: Index) -> Value:
        prod = mul(cast(a.load([idx[0]]), dt), cast(b.load([idx[1]]), dt), dt)
        base = cast(x.load(broadcast_index(idx, x.shape, shape)), dt)
        if beta == 0:
            return mul(prod, alpha, dt)
        return add(mul(base, beta, dt), mul(prod, alpha, dt), dt)

    return ctx.lazy(shape, dt, element, [x, a, b])


@lowering("aten::bilinear")
def bilinear(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``y[.., o] = x1 W[o] x2 + b[o]``: ``x1 @ W.permute(1, 0, 2).reshape(I1, O*I2)``, then the
    contraction with ``x2`` as a reduction."""
    from ziggurat.backends.cpu.lowering.linalg import all_float32, matmul

    if all_float32(args):
        raise NotLowerable("bilinear computes float32 only")
    x1, x2, w = args.tensor("input1"), args.tensor("input2"), args.tensor("weight")
    bias = args.optional_tensor("bias")
    o, i1, i2 = w.shape
    lead = x1.shape[:-1]
    m = math.prod(lead)
    a = reshape(ctx, x1, (m, i1))
    wb = reshape(ctx, permute(ctx, w, (1, 0, 2)), (i1, o * i2))
    t = reshape(ctx, matmul(ctx, a, wb, (m, o * i2)), (m, o, i2))
    x2f = reshape(ctx, x2, (m, i2))
    prod = ctx.lazy((m, o, i2), F32, lambda idx: mul(t.load(idx), x2f.load([idx[0], idx[2]]), F32), [t, x2f])
    y = reduce(ctx, prod, [2], False, "sum", F32)
    if bias is not None:
        y = pointwise(ctx, [y, bias], (m, o), F32, lambda v, b: add(v, b, F32))
    return reshape(ctx, y, args.out_shape)


@lowering("aten::linalg_cross", "aten::cross")
def cross(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    a, b = args.tensor("self"), args.tensor("other")
    shape = args.out_shape
    dim = args.static("dim", -1)
    if dim is None:
        dim = next(d for d, n in enumerate(shape) if n == 3)
    dim = norm_dim(int(dim), len(shape))
    dt = args.out_dtype

    def comp(t: TensorValue, idx: Index, c: int) -> Value:
        sub_ = [IndexExpr.of(i) for i in idx]
        sub_[dim] = IndexExpr.of(c)
        return cast(t.load(broadcast_index(sub_, t.shape, shape)), dt)

    def element(idx: Index) -> Value:
        i = index(IndexExpr.of(idx[dim]))
        parts = []
        for c in range(3):
            u, v = (c + 1) % 3, (c + 2) % 3
            parts.append(sub(mul(comp(a, idx, u), comp(b, idx, v), dt), mul(comp(a, idx, v), comp(b, idx, u), dt), dt))
        return where(compare("eq", i, 0, I64), parts[0], where(compare("eq", i, 1, I64), parts[1], parts[2], dt), dt)

    return ctx.lazy(shape, dt, element, [a, b])


@lowering("aten::bucketize.Tensor")
def bucketize(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """Eager's binary search itself (``cus_lower_bound``/``cus_upper_bound``), unrolled over
    the ``n.bit_length()`` steps it can take: the lower bound moves right past a boundary
    ``b`` with ``not b >= v`` (``right``: ``not b > v``).  The same steps give the same
    bucket where a count of boundaries would not: NaN values or boundaries, unsorted ones."""
    x, bounds = args.tensor("self"), args.tensor("boundaries")
    right = bool(args.static("right", False))
    compute = torch.promote_types(x.dtype, bounds.dtype)
    n = bounds.shape[0]
    site = ctx.error_site(f"{args.key}: internal index")

    def element(idx: Index) -> Value:
        v = cast(x.load(idx), compute)
        lo: Value = const(0, I64)
        hi: Value = const(n, I64)
        for _ in range(n.bit_length()):
            active = compare("lt", lo, hi, I64)
            mid = where(active, add(lo, Binary("floordiv", sub(hi, lo, I64), const(2, I64)), I64), 0, I64)
            b = cast(bounds.load([IndexExpr.of(Indirect(mid, n, site))]), compute)
            stop = compare("gt" if right else "ge", b, v)
            right_of, left_of = logical_and(active, logical_not(stop)), logical_and(active, stop)
            lo = where(right_of, add(mid, 1, I64), lo, I64)
            hi = where(left_of, mid, hi, I64)
        return cast(lo, args.out_dtype)

    return ctx.lazy(x.shape, args.out_dtype, element, [x, bounds])


@lowering("aten::one_hot")
def one_hot(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    classes = int(args.static("num_classes", -1))
    if classes < 0:
        raise NotLowerable("one_hot without num_classes has a data-dependent shape")
    if classes == 0:
        raise NotLowerable("one_hot with no classes")
    shape = args.out_shape
    site = index_site(ctx, args, classes, "class value")  # eager raises outside [0, num_classes)

    def element(idx: Index) -> Value:
        cls = asserted_index(x.load(idx[:-1]), classes, site, wrap=False)
        return cast(compare("eq", cls, index(IndexExpr.of(idx[-1])), I64), I64)

    return ctx.lazy(shape, I64, element, [x])


@lowering("aten::hann_window", "aten::hann_window.periodic")
def hann_window(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    n = int(args.static("window_length"))
    periodic = bool(args.static("periodic", True))
    value = torch.hann_window(n, periodic=periodic, dtype=args.out_dtype)
    return BufferValue(ctx.constant(value, "hann_window"))


__all__ = ["Indirect", "unary"]
