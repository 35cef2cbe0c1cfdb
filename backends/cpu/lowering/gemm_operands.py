"""Describing tensors as GEMM operands: batched row-major matrices with strides.

``emit_gemm`` reads ``A[b, i, k]`` at ``a + b*batch_stride + i*lda + k`` (unit stride along
``k``), ``B`` either the same way (``[K, N]``, unit stride along ``n``) or transposed
(``[N, K]``, unit stride along ``k``), and writes ``C`` row-major.  A tensor that is an
affine view with such strides (a transpose, a slice, a broadcast batch) is passed as
is; anything else is first realized contiguously.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ziggurat.backends.cpu.lowering.constants import weight_tensor
from ziggurat.backends.cpu.lowering.context import LoweringContext, contiguous_strides
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.nodes import GemmOperand
from ziggurat.backends.cpu.lowering.ops import cast, const
from ziggurat.backends.cpu.lowering.pointwise import map_tensor
from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.shape_ops import concat
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.values import Buffer
from ziggurat.backends.cpu.lowering.views import expand, reshape


@dataclass(frozen=True)
class MatrixView:
    """``buffer`` holding a ``[batch, rows, cols]`` matrix at ``offset``: element ``(b, r, c)`` at
    ``offset + b*batch_stride + r*row_stride + c*col_stride``; ``transposed`` when the unit
    stride is along the rows (the matrix is stored as its transpose, ``ld = col_stride``)."""

    buffer: Buffer
    offset: int
    batch_stride: int
    row_stride: int
    col_stride: int

    @property
    def transposed(self) -> bool:
        return self.col_stride != 1

    @property
    def ld(self) -> int:
        return self.col_stride if self.transposed else self.row_stride

    @property
    def operand(self) -> GemmOperand:
        return GemmOperand(self.buffer, self.offset)


def _flatten_batch(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """One stride for the flattened batch dims, or None if they do not flatten."""
    dims = [(n, s) for n, s in zip(shape, strides, strict=True) if n != 1]
    if not dims:
        return 0
    for (_, s_outer), (n_inner, s_inner) in zip(dims, dims[1:]):
        if s_outer != s_inner * n_inner:
            return None
    return dims[-1][1]


def expand_batch(ctx: LoweringContext, x: TensorValue, batch: Sequence[int]) -> TensorValue:
    """``x`` ([..., R, C]) broadcast to ``[*batch, R, C]`` (a view)."""
    rows, cols = x.shape[-2:]
    if tuple(x.shape[:-2]) == tuple(batch):
        return x
    lead = len(batch) - (x.rank - 2)
    xb = x.shape[:-2]

    def index_map(idx: Sequence[IndexExpr]) -> list[IndexExpr]:
        out: list[IndexExpr] = []
        for d, n in enumerate(xb):
            out.append(IndexExpr.of(0) if n == 1 else IndexExpr.of(idx[lead + d]))
        return out + [IndexExpr.of(idx[-2]), IndexExpr.of(idx[-1])]

    return map_tensor(ctx, x, (*batch, rows, cols), x.dtype, index_map)


def matrix_view(ctx: LoweringContext, x: TensorValue, batch: Sequence[int], allow_transposed: bool,
                padded_row: int | None = None) -> MatrixView:
    """``x`` broadcast to ``[*batch, R, C]`` as a batched matrix with unit column stride (or
    unit row stride when ``allow_transposed``), realized contiguously if its view does not fit:
    with ``padded_row`` (and no batch), in rows that long, zeros past ``C``."""
    full = expand_batch(ctx, x, batch)
    rows, cols = full.shape[-2:]
    view = ctx.strided_view(full)
    if view is not None:
        buf, off, strides = view
        bstride = _flatten_batch(full.shape[:-2], strides[:-2])
        rs, cs = strides[-2], strides[-1]
        if cols == 1 and rows > 1 and rs == 1 and allow_transposed:
            cs = max(rows, 1)
        elif cols == 1:
            cs = 1
        if rows == 1:
            rs = cols if cs == 1 else 1
        if bstride is not None and bstride >= 0:
            if cs == 1 and rs >= cols:
                return MatrixView(buf, off, bstride, rs, 1)
            if allow_transposed and rs == 1 and cs >= rows:
                return MatrixView(buf, off, bstride, 1, cs)
    if padded_row is not None and padded_row > cols and full.rank == 2:
        zeros = ctx.lazy((rows, padded_row - cols), full.dtype, lambda idx: const(0, full.dtype))
        # two pieces, each its own loop nest: the rows' index arithmetic stays as simple as unpadded
        buf = ctx.realize(concat(ctx, [full, zeros], 1, full.dtype, (rows, padded_row)), "mat")
        return MatrixView(buf, 0, 0, padded_row, 1)
    buf = ctx.realize(full, "mat")
    strides = contiguous_strides(full.shape)
    bstride = strides[-3] if len(strides) > 2 else 0
    return MatrixView(buf, 0, bstride, max(cols, 1), 1)


def residual_view(ctx: LoweringContext, other: TensorValue, batch: Sequence[int], m: int, n: int,
                  out_shape: Sequence[int] | None = None) -> MatrixView:
    """``other`` broadcast to ``[*batch, m, n]`` with any strides (0 broadcasts).  ``out_shape``:
    the op's output shape when the GEMM folds its batch into the rows (``[2, 5, k] @ [k, n]``
    is one ``[10, k] @ [k, n]``); ``other`` broadcasts to that shape first (an ``other`` of
    ``[1, 1, 1]`` read as ``[10, n]`` with its own strides ran past its one element)."""
    full_shape = (*batch, m, n)
    target = tuple(out_shape) if out_shape is not None and math.prod(out_shape) == math.prod(full_shape) \
        else full_shape
    if other.shape != target:
        if other.rank > len(target) or tuple(torch.broadcast_shapes(other.shape, target)) != target:
            raise NotLowerable(f"the GEMM epilogue's operand {list(other.shape)} does not broadcast to "
                               f"{list(target)}")
        other = expand(ctx, other, target)
    full = reshape(ctx, other, full_shape) if target != full_shape else other
    view = ctx.strided_view(full)
    if view is not None:
        buf, off, strides = view
        bstride = _flatten_batch(full.shape[:-2], strides[:-2])
        if bstride is not None and min(strides[-2:]) >= 0:
            return MatrixView(buf, off, bstride, strides[-2], strides[-1])
    buf = ctx.realize(full, "other")
    return MatrixView(buf, 0, m * n, n, 1)


def residual_operand(ctx: LoweringContext, other: TensorValue, batch: Sequence[int], m: int, n: int,
                     out_shape: Sequence[int], kernel: str,
                     dtypes: tuple[torch.dtype, ...]) -> tuple[GemmOperand, int, int, int]:
    """A GEMM kernel's residual operand (``kernel``: its name in errors; ``dtypes``: the element
    types it reads) for :func:`residual_view`, read with a row stride, a column stride of 0 or 1
    and a batch stride (a broadcast residual with any other column stride is realized)."""
    if other.dtype not in dtypes:
        raise NotLowerable(f"a {kernel} GEMM's residual must be one of {', '.join(str(d) for d in dtypes)}, "
                           f"got {other.dtype}")
    view = residual_view(ctx, other, batch, m, n, out_shape)
    if view.col_stride in (0, 1):
        return GemmOperand(view.buffer, view.offset), view.row_stride, view.col_stride, view.batch_stride
    total = math.prod(batch) * m * n
    if other.numel != total:
        raise NotLowerable(f"a {kernel} GEMM's broadcast residual with a column stride other than 0 or 1")
    full = reshape(ctx, other, (total,))
    return GemmOperand(ctx.realize(full, "other")), n, 1, m * n


def float32_bias(ctx: LoweringContext, bias: TensorValue, n: int, kernel: str) -> Buffer:
    """A GEMM epilogue's bias as ``n`` float32 values, one per column (a constant folded at
    compile time, else cast at run time); ``kernel``: the GEMM's name in errors."""
    tensor = weight_tensor(bias)
    if tensor is not None and tensor.numel() in (1, n):
        return ctx.constant(tensor.float().reshape(-1).expand(n).contiguous(), "bias_f32")
    if bias.numel != n:
        raise NotLowerable(f"a {kernel} GEMM's bias of {list(bias.shape)} elements is not one per column ({n})")
    flat = reshape(ctx, bias, (n,)) if bias.shape != (n,) else bias
    f32 = ctx.lazy((n,), torch.float32, lambda idx: cast(flat.load(idx), torch.float32), [flat])  # type: ignore[no-untyped-call]
    return ctx.realize(f32, "bias_f32")
