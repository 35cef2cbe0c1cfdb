"""The ``trt`` dialect (``from ziggurat.dialects.trt import TRT``).

Ops mirror nvinfer1 layers with their real parameters and verify TensorRT's
documented rules; see ``shapes.py`` for the shape functions they check against.
"""

from ziggurat.dialects.trt.base import TrtLayerOp
from ziggurat.dialects.trt.dialect import TRT, TRT_OPS
from ziggurat.dialects.trt.enums import *  # noqa: F403
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
from ziggurat.dialects.trt.linear import ConvolutionOp, DeconvolutionOp, EinsumOp, MatrixMultiplyOp, WindowedConvolutionOp
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
from ziggurat.dialects.trt.shapes import ShapeError, axes_from_mask, mask_from_axes
from ziggurat.dialects.trt.sources import ConstantOp, FillOp, ShapeOp

__all__ = [
    "TRT",
    "TRT_OPS",
    "TrtLayerOp",
    "ShapeError",
    "axes_from_mask",
    "mask_from_axes",
    # the ops of TRT_OPS, spelled out so static tools see the exported names
    "ActivationOp", "UnaryOp", "ElementWiseOp", "SelectOp", "ScaleOp", "IdentityOp", "CastOp",
    "QuantizeOp", "DequantizeOp",
    "ConvolutionOp", "DeconvolutionOp", "MatrixMultiplyOp", "EinsumOp",
    "PoolingOp", "ReduceOp", "SoftMaxOp", "NormalizationOp", "TopKOp", "CumulativeOp",
    "ShuffleOp", "ConcatenationOp", "SliceOp", "GatherOp", "ScatterOp", "GridSampleOp", "PaddingOp", "ResizeOp",
    "ConstantOp", "ShapeOp", "FillOp",
    "WindowedConvolutionOp",
]
