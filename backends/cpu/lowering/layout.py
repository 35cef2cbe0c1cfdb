"""Storage order of realized activations: channels-last where the data already is.

Convolutions write channels-last (NHWC) buffers and hand out NCHW views of them.  A value
computed from such buffers (a residual add that did not fuse into a GEMM epilogue, a
pooling window, a normalization) is realized channels-last too, so that its kernel loads
and stores contiguous channel vectors and the next convolution reads it in place; the
NCHW tensor the graph sees is again a view.  Only graph outputs and ops that need a
contiguous logical layout pay for a transposition, at the boundary.
"""

from __future__ import annotations

from collections.abc import Callable

from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Var, flat_index
from ziggurat.backends.cpu.lowering.tensors import BufferValue, Index, LazyValue, TensorValue
from ziggurat.backends.cpu.lowering.values import Load, ReduceRef, Value, walk
from ziggurat.backends.cpu.lowering.views import permute


def channels_last_perm(rank: int) -> list[int]:
    """``[N, C, *sp] -> [N, *sp, C]``."""
    return [0, *range(2, rank), 1]


def channels_first_perm(rank: int) -> list[int]:
    return [0, rank - 1, *range(1, rank - 1)]


def _is_image(shape: tuple[int, ...]) -> bool:
    return len(shape) in (3, 4, 5) and shape[1] > 1 and shape[-1] > 1


def prefers_channels_last(value: TensorValue) -> bool:
    """The value's element loads mostly move by one element per channel (they read
    channels-last buffers) rather than per column.  A load that does not move along the
    columns at all (a per-channel or per-row statistic broadcast over them: a LayerNorm's mean
    over ``[N, T, D]``) tells nothing about the order and is not counted: counted, BERT's
    embedding LayerNorm, whose only non-constant loads are the token ids and its per-token
    statistics, was stored ``[1, 768, T]`` and every later residual add read it a row apart per
    lane (bf16 BERT: 3.0 ms of add + LayerNorm kernels)."""
    if not _is_image(value.shape) or not value.dtype.is_floating_point:
        return False
    vars_, root = value.trace()
    if isinstance(value, LazyValue):
        value.clear_memo()
    channel, column = vars_[1], vars_[-1]
    last = first = 0
    for node in _loads(root):
        flat = flat_index(node.subs, node.buffer.shape)
        if flat.coeff(column) == 0:
            continue
        if flat.coeff(channel) == 1:
            last += 1
        elif flat.coeff(column) == 1:
            first += 1
    return last > 0 and last >= first


def _loads(root: Value, depth: int = 0) -> list[Load]:
    """The non-constant loads of ``root``, those in the bodies of the reductions it reads included."""
    out: list[Load] = []
    for node in walk(root):
        if isinstance(node, Load) and node.buffer.role != "constant":
            out.append(node)
        elif isinstance(node, ReduceRef) and depth < 4:
            red = node.reduction
            rvars = [IndexExpr.of(Var(f"lr{depth}_{i}", n)) for i, n in enumerate(red.red_shape)]
            out += _loads(red.body(node.out, rvars), depth + 1)
    return out


def is_channels_last(ctx: LoweringContext, x: TensorValue) -> bool:
    """``x`` ([N, C, *sp]) is an affine view with unit channel stride."""
    if not _is_image(x.shape):
        return False
    view = ctx.strided_view(permute(ctx, x, channels_last_perm(x.rank)))
    return view is not None and view[2][-1] == 1


def realize_channels_last(ctx: LoweringContext, shape: tuple[int, ...], dtype: object,
                          element: Callable[[Index], Value], inputs: list[TensorValue], hint: str = "cl") -> TensorValue:
    """``element`` (indexed logically, ``[N, C, *sp]``) computed into a channels-last buffer;
    returns its logical view."""
    rank = len(shape)
    first = channels_first_perm(rank)
    cl_shape = tuple(shape[p] for p in channels_last_perm(rank))

    def cl_element(idx: Index) -> Value:
        return element([IndexExpr.of(idx[p]) for p in first])

    buf = ctx.realize(ctx.lazy(cl_shape, dtype, cl_element, inputs), hint)  # type: ignore[arg-type]
    return permute(ctx, BufferValue(buf), first)


def realize_preferred(ctx: LoweringContext, value: TensorValue, hint: str = "buf") -> TensorValue:
    """``value`` realized in its preferred storage order; returns what the graph should read."""
    if prefers_channels_last(value):
        return realize_channels_last(ctx, value.shape, value.dtype, value.load, [value], hint)
    ctx.realize(value, hint)
    return value
