"""Per-layer reference implementations of TensorRT's documented semantics (on CPU, in torch)."""

from ziggurat.backends.tensorrt.reference import layout, linear, pointwise, reduction, sources  # noqa: F401
from ziggurat.backends.tensorrt.reference.common import HANDLERS, LayerExecutionError, execute_layer

__all__ = ["HANDLERS", "LayerExecutionError", "execute_layer"]
