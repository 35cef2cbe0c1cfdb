"""Per-layer reference implementations of TensorRT's documented semantics (on CPU, in torch)."""

from ziggurat.ir.interpreter.trt_layers import layout, linear, pointwise, quantization, reduction, sources  # noqa: F401
from ziggurat.ir.interpreter.trt_layers.common import (
    HANDLERS,
    LayerExecutionError,
    LayerResultError,
    ResultTypes,
    execute_layer,
    result_types,
)

__all__ = ["HANDLERS", "LayerExecutionError", "LayerResultError", "ResultTypes", "execute_layer", "result_types"]
