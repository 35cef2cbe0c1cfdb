"""The ``trt`` dialect: one op per nvinfer1 layer, emitted through the TensorRT Python API."""

from __future__ import annotations

from xdsl.ir import Dialect

from ziggurat.dialects.trt.enums import ENUM_ATTRIBUTES
from ziggurat.dialects.trt.layout import (
    ConcatenationOp,
    GatherOp,
    GridSampleOp,
    PaddingOp,
    ResizeOp,
    ScatterOp,
    ShuffleOp,
    SliceOp,
)
from ziggurat.dialects.trt.linear import ConvolutionOp, DeconvolutionOp, EinsumOp, MatrixMultiplyOp
from ziggurat.dialects.trt.pointwise import (
    ActivationOp,
    CastOp,
    ElementWiseOp,
    IdentityOp,
    ScaleOp,
    SelectOp,
    UnaryOp,
)
from ziggurat.dialects.trt.quantization import DequantizeOp, QuantizeOp
from ziggurat.dialects.trt.reduction import (
    CumulativeOp,
    NormalizationOp,
    PoolingOp,
    ReduceOp,
    SoftMaxOp,
    TopKOp,
)
from ziggurat.dialects.trt.sources import ConstantOp, FillOp, ShapeOp

TRT_OPS = (
    ActivationOp,
    UnaryOp,
    ElementWiseOp,
    SelectOp,
    ScaleOp,
    IdentityOp,
    CastOp,
    QuantizeOp,
    DequantizeOp,
    ConvolutionOp,
    DeconvolutionOp,
    MatrixMultiplyOp,
    EinsumOp,
    PoolingOp,
    ReduceOp,
    SoftMaxOp,
    NormalizationOp,
    TopKOp,
    CumulativeOp,
    ShuffleOp,
    ConcatenationOp,
    SliceOp,
    GatherOp,
    ScatterOp,
    GridSampleOp,
    PaddingOp,
    ResizeOp,
    ConstantOp,
    ShapeOp,
    FillOp,
)

TRT = Dialect("trt", list(TRT_OPS), list(ENUM_ATTRIBUTES))
