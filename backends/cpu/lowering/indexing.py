"""Indexed loads: index_select, gather, take_along_dim, embedding, index.Tensor.

The index tensor's element becomes an :class:`Indirect` subscript, checked at run time
against the indexed dimension (``loop.check_index``): negative indices wrap where torch
wraps them (``x[idx]``, ``take_along_dim``) and are out of range where it raises
(``index_select``, ``gather``, ``embedding``); out-of-range ones raise an error naming the op after the call (the kernel reads
element 0 instead, never outside the buffer).
"""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.ops import cast, compare, const, where
from ziggurat.backends.cpu.lowering.pointwise import broadcast_index
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import norm_dim
from ziggurat.ir.locations import op_location


def _site_cache(ctx: LoweringContext, args: LoweringArgs, size: int, what: str) -> int:
    where = op_location(args.op)
    return ctx.error_site(f"{args.key}: {what} out of range for a dimension of size {size}"
                          + (f" at {where}" if where else ""))


def _checked(site: int, value: Value, size: int, wrap: bool = True) -> IndexExpr:
    """``value`` as a run-time checked subscript of a dimension of ``size``; ``wrap``: a
    negative index counts from the end (``x[idx]``, ``take_along_dim``), else it is out of
    range (``index_select``, ``gather``, ``embedding`` raise on it in eager)."""
    return IndexExpr.of(Indirect(checked_value(value, size, wrap), size, site))


def checked_value(value: Value, size: int, wrap: bool) -> Value:
    """``value`` as an int64 index for ``Indirect`` (whose check wraps one negative index):
    without ``wrap`` a negative index becomes ``size``, which the check reports."""
    v = cast(value, torch.int64)
    if wrap:
        return v
    return where(compare("lt", v, 0, torch.int64), const(size, torch.int64), v, torch.int64)


@lowering("aten::index_select")
def index_select(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    index = args.tensor("index")
    dim = norm_dim(int(args.static("dim")), x.rank)
    size = x.shape[dim] if x.rank else 1
    site = _site_cache(ctx, args, size, "index")

    def element(idx: Index) -> Value:
        sub = [IndexExpr.of(i) for i in idx]
        if x.rank == 0:
            return x.load([])
        pos = [sub[dim]] if index.rank == 1 else []
        sub[dim] = _checked(site, index.load(pos), size, wrap=False)
        return x.load(sub)

    return ctx.lazy(args.out_shape, x.dtype, element, [x, index])


@lowering("aten::gather", "aten::take_along_dim")
def gather(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    index = args.tensor("index") if args.has("index") else args.tensor("indices")
    dim = args.static("dim")
    shape = args.out_shape
    if dim is None:
        raise NotLowerable("take_along_dim without dim flattens the input")
    dim = norm_dim(int(dim), max(x.rank, 1))
    size = x.shape[dim] if x.rank else 1
    site = _site_cache(ctx, args, size, "index")

    def element(idx: Index) -> Value:
        if x.rank == 0:
            return x.load([])
        i_sub = broadcast_index(idx, index.shape, shape) if args.name == "take_along_dim" else list(idx)
        x_sub = broadcast_index(idx, x.shape, shape) if args.name == "take_along_dim" else list(idx)
        x_sub = [IndexExpr.of(i) for i in x_sub]
        x_sub[dim] = _checked(site, index.load(i_sub), size, wrap=args.name == "take_along_dim")
        return x.load(x_sub)

    return ctx.lazy(shape, x.dtype, element, [x, index])


@lowering("aten::embedding")
def embedding(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    weight = args.tensor("weight")
    ids = args.tensor("indices")
    size = weight.shape[0]
    site = _site_cache(ctx, args, size, "index")
    k = ids.rank

    def element(idx: Index) -> Value:
        row = _checked(site, ids.load(list(idx[:k])), size, wrap=False)
        return weight.load([row, IndexExpr.of(idx[k])])

    return ctx.lazy(args.out_shape, weight.dtype, element, [weight, ids])


@lowering("aten::index.Tensor", "aten::_unsafe_index.Tensor")
def index_tensor(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    raw = args.get("indices")
    indices: list[TensorValue | None] = list(raw or [])
    if any(i is not None and not isinstance(i, TensorValue) for i in indices):
        raise NotLowerable("index with a non-tensor index")
    if any(i is not None and i.dtype == torch.bool for i in indices):
        raise NotLowerable("boolean mask indexing has a data-dependent shape")
    shape = args.out_shape
    present = [d for d, i in enumerate(indices) if i is not None]
    idx_tensors = [i for i in indices if i is not None]
    bshape = tuple(torch.broadcast_shapes(*[t.shape for t in idx_tensors]))  # type: ignore[union-attr]
    adjacent = present == list(range(present[0], present[-1] + 1)) if present else True
    first = present[0] if adjacent and present else 0
    nb = len(bshape)
    sites = {d: _site_cache(ctx, args, x.shape[d], "index") for d in present}

    def element(idx: Index) -> Value:
        out = [IndexExpr.of(i) for i in idx]
        bidx = out[first:first + nb]
        rest = out[:first] + out[first + nb:]
        sub: list[IndexExpr] = []
        it = iter(rest)
        for d in range(x.rank):
            t = indices[d] if d < len(indices) else None
            if t is None:
                sub.append(next(it))
            else:
                v = t.load(broadcast_index(bidx, t.shape, bshape))
                sub.append(_checked(sites[d], v, x.shape[d]))
        return x.load(sub)

    return ctx.lazy(shape, x.dtype, element, [x, *idx_tensors])  # type: ignore[list-item]
