"""cat/stack/atleast_nd/split/chunk/unbind/meshgrid/repeat_interleave: still index arithmetic.

``cat`` is one element function choosing its source by the index along the concatenated
dimension (guarded loads, so a vector that straddles two sources loads each part masked);
inlined into a reader it stays that, but the kernel realizing it runs one loop nest per
part, where the choice is known (a 256-step ``stack`` read 256 sources per element). The
split family returns views.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.ops import cast, const, in_bounds, where
from ziggurat.backends.cpu.lowering.pointwise import map_tensor
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, Pieces, TensorValue
from ziggurat.backends.cpu.lowering.values import Const, Value, guarded_loads
from ziggurat.backends.cpu.lowering.views import expand, norm_dim, reshape, slice_bounds, slice_dim


#: A ``cat`` of at most this many parts is realized by one loop nest per part (each reads its
#: part alone, where one nest would choose among all parts for every element).
MAX_PIECES = 512


def concat(ctx: LoweringContext, parts: Sequence[TensorValue], dim: int, dtype: torch.dtype,
           shape: Sequence[int]) -> TensorValue:
    parts = [p for p in parts if p.numel > 0 or len(parts) == 1]
    offsets: list[int] = []
    off = 0
    for p in parts:
        offsets.append(off)
        off += p.shape[dim]
    if len(parts) == 1:
        only = parts[0]
        return map_tensor(ctx, only, shape, dtype, lambda idx: list(idx))

    def element(idx: Index) -> Value:
        acc: Value = const(0, dtype)
        for p, o in reversed(list(zip(parts, offsets, strict=True))):
            sub = [IndexExpr.of(i) for i in idx]
            sub[dim] = sub[dim] - o
            cond = in_bounds([sub[dim]], [p.shape[dim]])
            if isinstance(cond, Const) and not cond.value:
                continue  # another part's range (a loop nest of one piece)
            with guarded_loads():
                v = cast(p.load(sub), dtype)
            acc = where(cond, v, acc, dtype)
        return acc

    value = ctx.lazy(shape, dtype, element, parts)
    if len(parts) <= MAX_PIECES:
        value.pieces = Pieces(dim, tuple(offsets), tuple(p.shape[dim] for p in parts))
    return value


@lowering("aten::cat", "aten::concat", "aten::concatenate")
def cat(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    parts = args.tensors("tensors")
    shape = args.out_shape
    rank = len(shape)
    parts = [p for p in parts if not (p.rank == 1 and p.shape[0] == 0 and rank > 1)]
    dim = norm_dim(int(args.static("dim", 0)), rank)
    return concat(ctx, parts, dim, args.out_dtype, shape)


def atleast_shape(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """The shape ``torch.atleast_{rank}d`` gives: a 0-d tensor becomes ones, ``[n]`` becomes
    ``[1, n]`` (``[1, n, 1]`` for rank 3), ``[m, n]`` becomes ``[m, n, 1]``."""
    if len(shape) >= rank:
        return shape
    padded = (1, *shape) if len(shape) == 1 else shape
    return padded + (1,) * (rank - len(padded))


def atleast(ctx: LoweringContext, x: TensorValue, rank: int) -> TensorValue:
    return reshape(ctx, x, atleast_shape(x.shape, rank))


@lowering("aten::atleast_1d.Sequence", "aten::atleast_2d.Sequence", "aten::atleast_3d.Sequence")
def atleast_sequence(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    rank = int(args.name.removeprefix("atleast_").removesuffix("d"))
    return [atleast(ctx, t, rank) for t in args.tensors("tensors")]


@lowering("aten::stack", "aten::hstack", "aten::vstack", "aten::dstack", "aten::column_stack", "aten::row_stack")
def stack(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``stack`` inserts the new dim; the others concatenate their inputs made at least 1-d
    (``hstack``: along dim 0 when the first is then 1-d, else dim 1), 2-d (``vstack``), 3-d
    (``dstack``) as eager does, or (``column_stack``) 0-d and 1-d inputs made columns."""
    parts = args.tensors("tensors")
    shape = args.out_shape
    name = args.name
    if name == "stack":
        dim = norm_dim(int(args.static("dim", 0)), len(shape))
        shaped = [reshape(ctx, p, p.shape[:dim] + (1,) + p.shape[dim:]) for p in parts]
        return concat(ctx, shaped, dim, args.out_dtype, shape)
    if name == "column_stack":
        shaped = [reshape(ctx, p, (p.numel, 1)) if p.rank <= 1 else p for p in parts]
        return concat(ctx, shaped, 1, args.out_dtype, shape)
    rank = {"hstack": 1, "vstack": 2, "row_stack": 2, "dstack": 3}[name]
    shaped = [atleast(ctx, p, rank) for p in parts]
    dim = {"hstack": 0 if shaped and shaped[0].rank == 1 else 1, "vstack": 0, "row_stack": 0, "dstack": 2}[name]
    return concat(ctx, shaped, dim, args.out_dtype, shape)


@lowering("aten::split.Tensor", "aten::split_with_sizes", "aten::split.sizes", "aten::chunk",
          "aten::unsafe_split.Tensor", "aten::unsafe_chunk", "aten::tensor_split.sections",
          "aten::tensor_split.indices")
def split(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    """Consecutive pieces sized by the result types; ``tensor_split`` at indices starts piece
    ``i`` at ``x[indices[i-1]:]`` as eager slices it (a negative index counts from the end,
    then clamps to the dim), whatever the previous piece's end was."""
    x = args.tensor("self")
    dim = norm_dim(int(args.static("dim", 0)), x.rank)
    indices = args.get_ints("indices", []) if args.name == "tensor_split" and args.has("indices") else None
    out: list[TensorValue] = []
    start = 0
    for i in range(len(args.op.results)):
        length = args.result_shape(i)[dim]
        if indices is not None and i > 0:
            start = slice_bounds(x.shape[dim], indices[i - 1], None, 1)[0]
        out.append(slice_dim(ctx, x, dim, start, 1, length))
        start += length
    return out


@lowering("aten::unbind.int")
def unbind(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    from ziggurat.backends.cpu.lowering.views import select

    x = args.tensor("self")
    dim = norm_dim(int(args.static("dim", 0)), x.rank)
    return [select(ctx, x, dim, i) for i in range(x.shape[dim])]


@lowering("aten::meshgrid", "aten::meshgrid.indexing")
def meshgrid(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    parts = args.tensors("tensors")
    indexing = args.static("indexing", "ij")
    out: list[TensorValue] = []
    n = len(parts)
    for i, p in enumerate(parts):
        shape = args.result_shape(i)
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape = [1] * n
        view_shape[pos] = p.numel
        out.append(expand(ctx, reshape(ctx, p, view_shape), shape))
    return out


@lowering("aten::repeat_interleave.self_int")
def repeat_interleave(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    r = int(args.static("repeats"))
    dim = args.static("dim")
    if dim is None:
        x = reshape(ctx, x, (x.numel,))
        dim = 0
    dim = norm_dim(int(dim), x.rank)
    if r < 1:
        raise NotLowerable("repeat_interleave with no repeats")

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        out[dim] = out[dim] // r
        return out

    return map_tensor(ctx, x, args.out_shape, x.dtype, index_map)
