"""``torch.literal`` constants: one-element ones are inlined as numbers, the rest are weight buffers."""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.ops import const
from ziggurat.backends.cpu.lowering.tensors import BufferValue, LazyValue, TensorValue
from ziggurat.dialects.torch import LiteralOp
from ziggurat.ir.types import dtype_of, shape_of


def literal_value(ctx: LoweringContext, op: LiteralOp) -> TensorValue:
    shape, dtype = shape_of(op.result.type), dtype_of(op.result.type)
    tensor = op.tensor()
    if tensor.numel() == 1 and dtype in (torch.float32, torch.int64, torch.int32, torch.bool):
        scalar = tensor.reshape(()).item()
        return LazyValue(shape, dtype, lambda idx, v=scalar: const(v, dtype), ())
    name = op.result.name_hint or "weight"
    buf = ctx.constant(tensor, name, op.value)
    return BufferValue(buf)


def weight_tensor(tv: TensorValue) -> torch.Tensor | None:
    """The tensor of a constant buffer (for prepacking), if ``tv`` is one."""
    buf = tv.buffer
    if buf is not None and buf.role == "constant" and buf.tensor is not None:
        return buf.tensor
    return None
