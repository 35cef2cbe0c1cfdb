"""TensorRT converters, one module per op family; importing this package registers them all."""

from ziggurat.backends.tensorrt.converters import (  # noqa: F401
    activation,
    elementwise,
    indexing,
    shape_ops,
    unary,
)
