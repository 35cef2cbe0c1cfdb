"""Reference semantics of IQuantizeLayer and IDequantizeLayer, in float32.

Quantize divides by the scale (TensorRT's documented ``input / scale``), rounds half to even and
saturates to int8; NaN becomes 0, as the GPU's float -> integer conversion gives (the ``cast``
layer's model).  Dequantize multiplies the int8 value by the scale."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ziggurat.dialects.trt.quantization import DequantizeOp, QuantizationLayerOp, QuantizeOp
from ziggurat.ir.interpreter.trt_layers.common import layer, result_dtype


def _scale(op: QuantizationLayerOp, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The float32 scale, shaped to broadcast against ``x`` along ``op``'s axis."""
    scale = scale.to(torch.float32)
    axis = op.axis_value
    if axis is None:
        return scale
    shape = [1] * x.dim()
    shape[axis] = scale.numel()
    return scale.reshape(shape)


def quantize(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """``saturate_int8(round_half_even(x / scale))``, NaN -> 0."""
    q = torch.round(x.to(torch.float32) / scale)
    return q.nan_to_num(nan=0.0).clamp(-128, 127).to(torch.int8)


@layer(QuantizeOp)
def _quantize(op: QuantizeOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x, scale = args
    return [quantize(x, _scale(op, x, scale))]


@layer(DequantizeOp)
def _dequantize(op: DequantizeOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    q, scale = args
    return [(q.to(torch.float32) * _scale(op, q, scale)).to(result_dtype(op.output))]
