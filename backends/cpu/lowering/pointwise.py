"""Element-wise tensors from element-wise functions, with torch broadcasting."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.ops import Number, cast, const
from ziggurat.backends.cpu.lowering.tensors import Index, LazyValue, TensorValue
from ziggurat.backends.cpu.lowering.values import Value

Operand = TensorValue | Number


def broadcast_index(index: Index, in_shape: Sequence[int], out_shape: Sequence[int]) -> list[IndexExpr]:
    """Subscripts of an ``in_shape`` operand read at ``index`` of ``out_shape`` (right-aligned,
    size-1 dims pinned to 0)."""
    lead = len(out_shape) - len(in_shape)
    if lead < 0:
        raise ValueError(f"cannot broadcast {tuple(in_shape)} to {tuple(out_shape)}")
    out: list[IndexExpr] = []
    for d, n in enumerate(in_shape):
        out.append(IndexExpr.of(0) if n == 1 else IndexExpr.of(index[lead + d]))
    return out


def read(x: Operand, index: Index, out_shape: Sequence[int], dtype: torch.dtype | None = None) -> Value:
    """Operand ``x`` at ``index`` of the broadcast output, cast to ``dtype`` if given."""
    if isinstance(x, TensorValue):
        v = x.load(broadcast_index(index, x.shape, out_shape))
    else:
        v = const(x, dtype or _scalar_dtype(x))
    return cast(v, dtype) if dtype is not None else v


def _scalar_dtype(x: Number) -> torch.dtype:
    if isinstance(x, bool):
        return torch.bool
    if isinstance(x, int):
        return torch.int64
    return torch.float32


def pointwise(ctx: LoweringContext, operands: Sequence[Operand], out_shape: Sequence[int], out_dtype: torch.dtype,
              fn: Callable[..., Value], compute: torch.dtype | None = None) -> LazyValue:
    """``out[i] = fn(*(x[i] for x in operands))``: operands are broadcast to ``out_shape`` and
    cast to ``compute`` (default ``out_dtype``); the result is cast to ``out_dtype``."""
    compute = compute or out_dtype
    shape = tuple(out_shape)

    def element(index: Index) -> Value:
        vals = [read(x, index, shape, compute) for x in operands]
        return cast(fn(*vals), out_dtype)

    return ctx.lazy(shape, out_dtype, element, [x for x in operands if isinstance(x, TensorValue)])


def map_tensor(ctx: LoweringContext, x: TensorValue, out_shape: Sequence[int], out_dtype: torch.dtype,
               index_map: Callable[[Index], Sequence[IndexExpr]]) -> LazyValue:
    """A view: ``out[i] = x[index_map(i)]`` (index arithmetic, no copy)."""
    shape = tuple(out_shape)
    return ctx.lazy(shape, out_dtype, lambda index: cast(x.load(index_map(index)), out_dtype), [x])


def result_dtype(*operands: Operand) -> torch.dtype:
    """torch's type promotion of tensors (with their real ranks: 0-d tensors act as scalars)
    and Python numbers."""
    probes: list[torch.Tensor | Number] = [
        torch.empty(x.shape, dtype=x.dtype, device="meta") if isinstance(x, TensorValue) else x for x in operands
    ]
    first = probes[0]
    if not isinstance(first, torch.Tensor):
        first = torch.tensor(first)
    out = first
    for p in probes[1:]:
        out = torch.empty((1,) if out.dim() else (), dtype=torch.result_type(out, p), device="meta")
    return out.dtype
