"""TensorRT converters, one module per op family; importing this package registers them all."""

from ziggurat.backends.tensorrt.converters import activation, elementwise, unary  # noqa: F401
