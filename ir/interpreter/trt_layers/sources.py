"""Reference semantics of constant, shape and fill."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.dialects.trt.enums import FillOperation
from ziggurat.dialects.trt.sources import ConstantOp, FillOp, ShapeOp
from ziggurat.ir.literals import literal_tensor
from ziggurat.ir.interpreter.trt_layers.common import layer, result_dtype, result_shape


@layer(ConstantOp)
def _constant(op: ConstantOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [literal_tensor(op.weights).clone()]


@layer(ShapeOp)
def _shape(op: ShapeOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.tensor(list(args[0].shape), dtype=result_dtype(op.output))]


@layer(FillOp)
def _fill(op: FillOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    shape = result_shape(op.output)
    dtype = result_dtype(op.output)
    alpha = op.alpha.value.data
    beta = op.beta_values()
    kind = op.op.data
    if kind == FillOperation.kLINSPACE:
        y = torch.full(shape, alpha, dtype=torch.float64)
        for dim, delta in enumerate(beta):
            ramp = torch.arange(shape[dim], dtype=torch.float64) * delta
            y = y + ramp.reshape([-1 if i == dim else 1 for i in range(len(shape))])
        return [y.to(dtype)]
    if kind == FillOperation.kRANDOM_UNIFORM:
        return [(torch.rand(shape, dtype=torch.float32) * (beta[0] - alpha) + alpha).to(dtype)]
    return [(torch.randn(shape, dtype=torch.float32) * beta[0] + alpha).to(dtype)]
