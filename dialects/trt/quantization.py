"""Explicit quantization: IQuantizeLayer and IDequantizeLayer (TensorRT's Q/DQ layers).

TensorRT runs a convolution or matrix multiply in int8 where both of its inputs come from a
dequantize (of an int8 activation and of int8 weights): the Q/DQ pairs of a network say where
int8 is exact.  Both layers take a build-time scale, a scalar (per tensor) or a vector along
``axis`` (per channel); zero points are 0, as TensorRT requires for int8.

    quantize:   q = saturate_int8(round_half_even(input / scale)), NaN -> 0
    dequantize: y = q * scale
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i8
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from ziggurat.dialects.trt.base import (
    FLOAT_TYPES,
    TrtLayerOp,
    element_of,
    i64_attr,
    shape_of,
    tensor_of,
    type_name,
)
from ziggurat.dialects.trt.shapes import DYNAMIC
from ziggurat.dialects.trt.sources import ConstantOp


class QuantizationLayerOp(TrtLayerOp):
    """What IQuantizeLayer and IDequantizeLayer share: the input, the scale weights, ``axis``."""

    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    output = result_def(TensorType)
    #: the dim a per-channel scale runs along; absent for a per-tensor (0-D) scale
    axis = opt_prop_def(IntegerAttr)

    assembly_format = "$input `,` $scale attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, scale: SSAValue, output: Attribute, *, name: str,
                 axis: int | None = None) -> None:
        properties: dict[str, Attribute] = {"name": StringAttr(name)}
        if axis is not None:
            properties["axis"] = i64_attr(axis)
        super().__init__(operands=[input, scale], result_types=[tensor_of(shape_of(input), output)],
                         properties=properties)

    @property
    def axis_value(self) -> int | None:
        return None if self.axis is None else self.axis.value.data

    def verify_scale(self, element: Attribute) -> None:
        """The scale: build-time weights of ``element``, 0-D, or 1-D along ``axis``."""
        if not isinstance(self.scale.owner, ConstantOp):
            raise self.error("scale must be build-time weights (a trt.constant), not a run-time tensor")
        if element_of(self.scale) != element:
            raise self.error(f"scale has element type {type_name(element_of(self.scale))}, "
                             f"it must be {type_name(element)}")
        shape, scale = shape_of(self.input), shape_of(self.scale)
        axis = self.axis_value
        if axis is None:
            if scale != ():
                raise self.error(f"a per-tensor scale is 0-D, got shape {list(scale)} (set axis for a per-channel one)")
            return
        if not 0 <= axis < len(shape):
            raise self.error(f"axis {axis} is out of range for an input of rank {len(shape)}")
        if shape[axis] == DYNAMIC:
            raise self.error(f"the per-channel axis {axis} must have a static size")
        if scale != (shape[axis],):
            raise self.error(f"a per-channel scale along axis {axis} has shape [{shape[axis]}], got {list(scale)}")


@irdl_op_definition
class QuantizeOp(QuantizationLayerOp):
    """IQuantizeLayer (``add_quantize``): float -> int8, ``round(input / scale)`` to the nearest
    even, saturated; NaN becomes 0."""

    name = "trt.quantize"
    LAYER: ClassVar[str] = "IQuantizeLayer"

    def __init__(self, input: SSAValue, scale: SSAValue, *, name: str, axis: int | None = None) -> None:
        super().__init__(input, scale, i8, name=name, axis=axis)

    def verify_layer(self) -> None:
        self.expect_elements(self.input, FLOAT_TYPES, "input")
        self.verify_scale(element_of(self.input))
        self.expect_type(self.output, shape_of(self.input), i8)


@irdl_op_definition
class DequantizeOp(QuantizationLayerOp):
    """IDequantizeLayer (``add_dequantize``): int8 -> the scale's float type, ``input * scale``."""

    name = "trt.dequantize"
    LAYER: ClassVar[str] = "IDequantizeLayer"

    def __init__(self, input: SSAValue, scale: SSAValue, *, name: str, axis: int | None = None) -> None:
        super().__init__(input, scale, element_of(scale), name=name, axis=axis)

    def verify_layer(self) -> None:
        self.expect_elements(self.input, (i8,), "input")
        self.expect_elements(self.scale, FLOAT_TYPES, "scale")
        self.verify_scale(element_of(self.scale))
        self.expect_type(self.output, shape_of(self.input), element_of(self.scale))
