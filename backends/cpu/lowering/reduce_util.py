"""Building reductions over dimensions of a lowered tensor."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.ops import cast
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import norm_dim


def reduce_dims(x: TensorValue, dims: Sequence[int] | int | None) -> list[int]:
    """Normalized, sorted dims (``None`` or ``[]``: all of them)."""
    if x.rank == 0:
        return []
    if dims is None:
        return list(range(x.rank))
    if isinstance(dims, int):
        dims = [dims]
    if len(dims) == 0:
        return list(range(x.rank))
    return sorted({norm_dim(d, x.rank) for d in dims})


def out_shape(x: TensorValue, dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(x.shape))
    return tuple(n for d, n in enumerate(x.shape) if d not in dims)


def source_index(rank: int, dims: Sequence[int], keepdim: bool, out: Index, red: Index) -> list[IndexExpr]:
    """The index of the reduced tensor's element at output ``out`` and reduction ``red``."""
    idx: list[IndexExpr] = []
    it_out = iter(out)
    it_red = iter(red)
    for d in range(rank):
        if d in dims:
            idx.append(IndexExpr.of(next(it_red)))
            if keepdim:
                next(it_out)
        else:
            idx.append(IndexExpr.of(next(it_out)))
    return idx


def reduce(ctx: LoweringContext, x: TensorValue, dims: Sequence[int], keepdim: bool, kind: str,
           dtype: torch.dtype, element: Callable[[Value, Index], Value] | None = None) -> TensorValue:
    """``kind``-reduce ``x`` over ``dims``; ``element(value, out_index)`` transforms each element
    (after the cast to ``dtype`` for value reductions; argmax/argmin get the raw value)."""
    dims = list(dims)
    shape = out_shape(x, dims, keepdim)
    red_shape = tuple(x.shape[d] for d in dims)
    rank = x.rank
    if numel(red_shape) == 0:
        from ziggurat.backends.cpu.lowering.ops import const, identity

        value = 0 if kind in ("argmax", "argmin") else identity(kind, dtype)
        return ctx.lazy(shape, dtype, lambda idx: const(value, dtype), [x])

    def body(out: Index, red: Index) -> Value:
        v = x.load(source_index(rank, dims, keepdim, out, red))
        if kind not in ("argmax", "argmin"):
            v = cast(v, dtype)
        return element(v, out) if element is not None else v

    return ctx.reduction(kind, dtype, shape, red_shape, body, [x])


def numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


#: A lazy input that a two-pass reduction (``logsumexp``, ``softmax``: a max, then a sum of
#: exponentials) reads in both passes is computed once into a buffer when its element function
#: has more than this many nodes: recomputing it costs twice, and LLVM's optimizer ran for
#: minutes on a scalar kernel holding the exact fmod's chain in both passes (fuzz seed 3).
REREAD_REALIZE_NODES = 48


def read_twice(ctx: LoweringContext, x: TensorValue) -> TensorValue:
    """``x`` as a two-pass reduction should read it: computed once into a buffer when its element
    function is large (:data:`REREAD_REALIZE_NODES`) or reads a reduction.  A reduction evaluated
    in each pass's loops may sum in another order in each, so the passes saw different values:
    a softmax over dim 0 of a small ``conv_transpose1d`` (a direct reduction) gave 1.0000072
    on AVX2, its sum of exponentials from other logits than its numerator (fuzz seed 88,
    program 130)."""
    from ziggurat.backends.cpu.lowering.tensors import BufferValue, LazyValue, ReductionValue

    if isinstance(x, ReductionValue):
        return BufferValue(ctx.realize(x))
    if isinstance(x, LazyValue):
        nodes, window = x.compute_size()
        if nodes > REREAD_REALIZE_NODES or window > 0:
            return BufferValue(ctx.realize(x))
    return x
