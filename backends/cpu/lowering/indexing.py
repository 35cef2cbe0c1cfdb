"""Indexed loads: index_select, gather, take_along_dim, embedding, index.Tensor.

The index tensor's element becomes an :class:`Indirect` subscript, checked at run time
against the indexed dimension (``loop.check_index``) with eager's convention
(``index_checks``): negative indices wrap where torch wraps them (``x[idx]``), are out of
range where it raises (``index_select``, ``gather``, ``embedding``) and are taken modulo
the size by ``take_along_dim``; out-of-range ones raise an error naming the op after the
call (the kernel reads element 0 instead, never outside the buffer).
"""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.index_checks import checked_value, in_range, index_site, modulo_index
from ziggurat.backends.cpu.lowering.pointwise import broadcast_index
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Assert, Value
from ziggurat.backends.cpu.lowering.views import norm_dim


def _checked(site: int, value: Value, size: int, wrap: bool = True) -> IndexExpr:
    """``value`` as a run-time checked subscript of a dimension of ``size``; ``wrap``: a
    negative index counts from the end (``x[idx]``), else it is out of range
    (``index_select``, ``gather``, ``embedding`` raise on it in eager)."""
    return IndexExpr.of(Indirect(checked_value(value, size, wrap), size, site))


def _scalar(x: TensorValue, index: TensorValue, idx: Index, site: int) -> Value:
    """A 0-d ``x`` read at ``index`` (eager: a 1-element vector, so only 0 is in range)."""
    pos = [IndexExpr.of(i) for i in idx] if index.rank == len(idx) else [IndexExpr.of(0)] * index.rank
    return Assert(x.load([]), in_range(index.load(pos), 1, wrap=False), site)


@lowering("aten::index_select")
def index_select(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    index = args.tensor("index")
    dim = norm_dim(int(args.static("dim")), x.rank)
    size = x.shape[dim] if x.rank else 1
    site = index_site(ctx, args, size, "index")

    def element(idx: Index) -> Value:
        sub = [IndexExpr.of(i) for i in idx]
        if x.rank == 0:  # a 0-d tensor indexes like a 1-element vector
            return _scalar(x, index, idx, site)
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
    along = args.name == "take_along_dim"
    if along and size == 0:
        raise NotLowerable("take_along_dim over an empty dimension")
    site = index_site(ctx, args, size, "index")

    def element(idx: Index) -> Value:
        if x.rank == 0:  # a 0-d tensor gathers like a 1-element vector
            return _scalar(x, index, idx, site)
        i_sub = broadcast_index(idx, index.shape, shape) if along else list(idx)
        x_sub = broadcast_index(idx, x.shape, shape) if along else list(idx)
        x_sub = [IndexExpr.of(i) for i in x_sub]
        i = index.load(i_sub)
        # take_along_dim takes every index modulo the size (eager: indices % dim_size)
        x_sub[dim] = _checked(site, modulo_index(i, size), size) if along else _checked(site, i, size, wrap=False)
        return x.load(x_sub)

    return ctx.lazy(shape, x.dtype, element, [x, index])


@lowering("aten::embedding")
def embedding(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    weight = args.tensor("weight")
    ids = args.tensor("indices")
    size = weight.shape[0]
    site = index_site(ctx, args, size, "index")
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
    sites = {d: index_site(ctx, args, x.shape[d], "index") for d in present}

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
