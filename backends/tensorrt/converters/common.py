"""Building blocks the converters share: TensorRT's rules made easy to respect.

Every helper inserts ``trt`` ops through the :class:`ConversionContext` and names
them after the torch op being converted (plus a suffix).  ``elementwise`` and
``select`` equalize ranks with shuffles (TensorRT broadcasts only over size-1
dims of equal-rank inputs) and cast to one compute dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import Scalar
from ziggurat.dialects.trt.shapes import DYNAMIC
from ziggurat.dialects.trt import (
    ActivationOp,
    ActivationType,
    CastOp,
    ElementWiseOp,
    ElementWiseOperation,
    GatherOp,
    ReduceOp,
    ReduceOperation,
    SelectOp,
    ShuffleOp,
    SliceOp,
    UnaryOp,
    UnaryOperation,
    mask_from_axes,
)
from ziggurat.ir.types import element_type

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
TRT_DTYPES = (*FLOAT_DTYPES, torch.int32, torch.int64, torch.int8, torch.bool)


def normalize_dim(ctx: ConversionContext, dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise ctx.error(f"dim {dim} is out of range for rank {rank}")
    return dim + rank if dim < 0 else dim


def normalize_dims(ctx: ConversionContext, dims: Sequence[int], rank: int) -> list[int]:
    return sorted({normalize_dim(ctx, d, rank) for d in dims})


# -- types and shapes -------------------------------------------------------------------------------


def cast(ctx: ConversionContext, x: SSAValue, dtype: torch.dtype, suffix: str = "cast") -> SSAValue:
    x = ctx.tensor(x)
    if ctx.dtype(x) == dtype:
        return x
    if dtype not in TRT_DTYPES:
        raise ctx.error(f"TensorRT has no {dtype}")
    return ctx.add(CastOp(x, element_type(dtype), name=ctx.name(suffix))).output


def reshape(ctx: ConversionContext, x: SSAValue, shape: Sequence[int], suffix: str = "reshape") -> SSAValue:
    x = ctx.tensor(x)
    if tuple(shape) == ctx.shape(x, dynamic=True):
        return x
    return ctx.add(ShuffleOp(x, name=ctx.name(suffix), reshape_dims=list(shape), zero_is_placeholder=False)).output


def reshape_to_result(ctx: ConversionContext, x: SSAValue, suffix: str = "result shape") -> SSAValue:
    """``x`` reshaped to the op's result shape.  With dynamic dims, ``x`` must already have the
    result's shape (the layers that made it keep the dynamic dims where the result has them)."""
    target = ctx.shape(ctx.op.results[0], dynamic=True)
    if DYNAMIC in target and ctx.shape(x, dynamic=True) == target:
        return ctx.tensor(x)
    return reshape(ctx, x, ctx.result_shape(), suffix)


def transpose(ctx: ConversionContext, x: SSAValue, perm: Sequence[int], suffix: str = "transpose") -> SSAValue:
    x = ctx.tensor(x)
    if list(perm) == list(range(len(perm))):
        return x
    return ctx.add(ShuffleOp(x, name=ctx.name(suffix), first_transpose=list(perm))).output


def unsqueeze_to_rank(ctx: ConversionContext, x: SSAValue, rank: int, suffix: str = "broadcast") -> SSAValue:
    """Prepend size-1 dims up to ``rank`` (numpy broadcasting's alignment)."""
    x = ctx.tensor(x)
    shape = ctx.shape(x, dynamic=True)
    if len(shape) >= rank:
        return x
    return insert_dims(ctx, x, range(rank - len(shape)), suffix)


def insert_dims(ctx: ConversionContext, x: SSAValue, dims: Sequence[int], suffix: str = "unsqueeze") -> SSAValue:
    """Insert size-1 dims at the given output positions.  With dynamic dims: the unit dims are
    appended (every input dim copied by a 0 in place) and moved into position by the shuffle's
    second transpose, so no size is inferred."""
    x = ctx.tensor(x)
    shape = list(ctx.shape(x, dynamic=True))
    if DYNAMIC not in shape:
        for d in sorted(dims):
            shape.insert(d, 1)
        return reshape(ctx, x, shape, suffix)
    rank, extra = len(shape), len(dims)
    order: list[int] = list(range(rank))
    for k, d in enumerate(sorted(dims)):
        order.insert(d, rank + k)
    return ctx.add(ShuffleOp(x, name=ctx.name(suffix), reshape_dims=[0] * rank + [1] * extra,
                             second_transpose=order, zero_is_placeholder=True)).output


def slice_dim(
    ctx: ConversionContext, x: SSAValue, dim: int, start: int, size: int, step: int = 1, suffix: str = "slice"
) -> SSAValue:
    x = ctx.tensor(x)
    if DYNAMIC in ctx.shape(x, dynamic=True):
        return _gather_dim(ctx, x, dim, range(start, start + size * step, step), suffix)
    shape = ctx.shape(x)
    starts = [0] * len(shape)
    sizes = list(shape)
    strides = [1] * len(shape)
    starts[dim], sizes[dim], strides[dim] = start, size, step
    if sizes == list(shape) and step == 1 and start == 0:
        return x
    return ctx.add(SliceOp(x, starts, sizes, strides, name=ctx.name(suffix))).output


def _gather_dim(ctx: ConversionContext, x: SSAValue, dim: int, indices: Sequence[int] | int,
                suffix: str) -> SSAValue:
    """The elements at ``indices`` (an int: that one, the dim dropped) along ``dim``, a static dim
    of ``x``, whose other dims may be dynamic: a gather with constant indices (a slice's extent
    would be a run-time size)."""
    (extent,) = ctx.dims(x, [dim])
    picked = torch.tensor(indices if isinstance(indices, int) else list(indices), dtype=torch.int32)
    if bool(((picked < 0) | (picked >= extent)).any()):
        raise ctx.error(f"indices {picked.tolist()} out of range for a dim of size {extent}")
    index = ctx.constant(picked, (suffix + " indices").strip())
    return ctx.add(GatherOp(x, index, name=ctx.name(suffix), axis=dim)).output


def select_dim(ctx: ConversionContext, x: SSAValue, dim: int, index: int, suffix: str = "select") -> SSAValue:
    """``x`` at ``index`` along ``dim``, the dim dropped."""
    x = ctx.tensor(x)
    if DYNAMIC in ctx.shape(x, dynamic=True):
        return _gather_dim(ctx, x, dim, index, suffix)
    shape = list(ctx.shape(x))
    y = slice_dim(ctx, x, dim, index, 1, 1, suffix)
    return reshape(ctx, y, shape[:dim] + shape[dim + 1:], (suffix + " squeeze").strip())


def broadcast_to(ctx: ConversionContext, x: SSAValue, shape: Sequence[int], suffix: str = "expand") -> SSAValue:
    """Materialize numpy broadcasting to ``shape`` (a slice with stride 0 over size-1 dims)."""
    x = unsqueeze_to_rank(ctx, x, len(shape), suffix + " rank")
    current = ctx.shape(x)
    if tuple(current) == tuple(shape):
        return x
    for c, s in zip(current, shape, strict=True):
        if c not in (1, s):
            raise ctx.error(f"cannot broadcast {list(current)} to {list(shape)}")
    strides = [0 if c == 1 and s != 1 else 1 for c, s in zip(current, shape, strict=True)]
    return ctx.add(SliceOp(x, [0] * len(shape), list(shape), strides, name=ctx.name(suffix))).output


# -- dtype promotion -----------------------------------------------------------------------------------


def promote(*items: SSAValue | Scalar, ctx: ConversionContext) -> torch.dtype:
    """torch's type promotion of tensors and Python numbers (dim-0 subtleties aside)."""
    dtypes = [ctx.dtype(i) for i in items if isinstance(i, SSAValue)]
    result = dtypes[0] if dtypes else torch.float32
    for d in dtypes[1:]:
        result = torch.promote_types(result, d)
    for item in items:
        if isinstance(item, bool) or isinstance(item, SSAValue):
            continue
        if isinstance(item, float) and not result.is_floating_point:
            result = torch.get_default_dtype()
        elif isinstance(item, int) and result == torch.bool:
            result = torch.int64
    return result


# -- pointwise layers ---------------------------------------------------------------------------------------


def elementwise(
    ctx: ConversionContext,
    a: SSAValue | Scalar,
    b: SSAValue | Scalar,
    op: ElementWiseOperation,
    *,
    dtype: torch.dtype | None = None,
    suffix: str = "",
) -> SSAValue:
    """``a op b`` with torch broadcasting; both sides cast to ``dtype`` (default: promoted)."""
    dtype = dtype or promote(a, b, ctx=ctx)
    ta = a if isinstance(a, SSAValue) else None
    tb = b if isinstance(b, SSAValue) else None
    like = ta if ta is not None else tb
    rank = max(ctx.rank(ctx.tensor(v)) for v in (ta, tb) if v is not None) if like is not None else 0
    lhs = _operand(ctx, a, rank, dtype, suffix)
    rhs = _operand(ctx, b, rank, dtype, suffix)
    return ctx.add(ElementWiseOp(lhs, rhs, op, name=ctx.name(suffix))).output


def _operand(ctx: ConversionContext, v: SSAValue | Scalar, rank: int, dtype: torch.dtype, suffix: str) -> SSAValue:
    if isinstance(v, SSAValue) and not ctx.is_trt(v):
        literal = ctx.literal(v)
        if literal is not None and literal.dim() < rank:  # align a constant's rank at compile time
            shape = [1] * (rank - literal.dim()) + list(literal.shape)
            name = "scalar" if literal.numel() == 1 else "constant"
            return ctx.constant(literal.reshape(shape).to(dtype), (suffix + f" {name}").strip())
    if isinstance(v, SSAValue):
        t = cast(ctx, ctx.tensor(v), dtype, (suffix + " cast").strip())
        return unsqueeze_to_rank(ctx, t, rank, (suffix + " broadcast").strip())
    return ctx.constant(torch.full([1] * rank, v, dtype=dtype), (suffix + " scalar").strip())


def select(ctx: ConversionContext, condition: SSAValue, a: SSAValue | Scalar, b: SSAValue | Scalar,
           *, dtype: torch.dtype, suffix: str = "") -> SSAValue:
    cond = ctx.tensor(condition)
    ranks = [ctx.rank(cond)] + [ctx.rank(ctx.tensor(v)) for v in (a, b) if isinstance(v, SSAValue)]
    rank = max(ranks)
    cond = unsqueeze_to_rank(ctx, cast(ctx, cond, torch.bool, "to bool"), rank, "condition broadcast")
    lhs = _operand(ctx, a, rank, dtype, suffix)
    rhs = _operand(ctx, b, rank, dtype, suffix)
    return ctx.add(SelectOp(cond, lhs, rhs, name=ctx.name(suffix))).output


def unary(ctx: ConversionContext, x: SSAValue, op: UnaryOperation, suffix: str = "") -> SSAValue:
    return ctx.add(UnaryOp(ctx.tensor(x), op, name=ctx.name(suffix))).output


def activation(
    ctx: ConversionContext, x: SSAValue, kind: ActivationType, alpha: float = 0.0, beta: float = 0.0, suffix: str = ""
) -> SSAValue:
    return ctx.add(ActivationOp(ctx.tensor(x), kind, name=ctx.name(suffix), alpha=alpha, beta=beta)).output


def float_input(ctx: ConversionContext, x: SSAValue, suffix: str = "to float") -> SSAValue:
    """``x`` as the op's floating result dtype (int inputs of float ops such as sqrt)."""
    t = ctx.tensor(x)
    target = ctx.result_dtype()
    if not target.is_floating_point:
        target = torch.float32
    return cast(ctx, t, target, suffix)


def reduce(ctx: ConversionContext, x: SSAValue, op: ReduceOperation, dims: Sequence[int], keepdim: bool,
           suffix: str = "") -> SSAValue:
    t = ctx.tensor(x)
    rank = ctx.rank(t)
    if rank == 0:
        return t
    axes = normalize_dims(ctx, dims, rank) if dims else list(range(rank))
    return ctx.add(ReduceOp(t, op, mask_from_axes(axes), name=ctx.name(suffix), keep_dims=keepdim)).output
