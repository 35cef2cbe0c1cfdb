"""TensorRT converters, one module per op family; importing this package registers them all."""

from ziggurat.backends.tensorrt.converters import (  # noqa: F401
    activation,
    casts,
    composite,
    convolution,
    creation,
    elementwise,
    fused,
    indexing,
    linear,
    normalization,
    padding_resize,
    pooling,
    quantization,
    reduction,
    shape_ops,
    unary,
)
