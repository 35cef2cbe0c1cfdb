"""Contracting layers: convolution, deconvolution, matrix multiply, einsum."""

from __future__ import annotations

from typing import ClassVar

import abc
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)

from ziggurat.dialects.trt.base import (
    FLOAT_TYPES,
    TrtLayerOp,
    element_of,
    i64_array,
    i64_attr,
    ints,
    opt_ints,
    shape_of,
    tensor_of,
)
from ziggurat.dialects.trt.enums import MatrixOperation, MatrixOperationAttr, PaddingMode, PaddingModeAttr
from ziggurat.dialects.trt.shapes import (
    Shape,
    ShapeError,
    convolution_output_shape,
    deconvolution_output_shape,
    einsum_output_shape,
    matrix_multiply_output_shape,
)


class WindowedConvolutionOp(TrtLayerOp, abc.ABC):
    """Shared fields of IConvolutionLayer and IDeconvolutionLayer.

    ``kernel`` and the optional ``bias`` are operands (normally ``trt.constant``
    weights); stride/padding/dilation default to 1/0/1 per spatial dim when absent.
    """

    input = operand_def(TensorType)
    kernel = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)

    num_output_maps = prop_def(IntegerAttr)
    kernel_size = prop_def(DenseArrayBase)
    stride = opt_prop_def(DenseArrayBase)
    pre_padding = opt_prop_def(DenseArrayBase)
    post_padding = opt_prop_def(DenseArrayBase)
    dilation = opt_prop_def(DenseArrayBase)
    num_groups = prop_def(IntegerAttr, default_value=i64_attr(1))
    padding_mode = prop_def(PaddingModeAttr, default_value=PaddingModeAttr(PaddingMode.kEXPLICIT_ROUND_DOWN))

    assembly_format = "$input `,` $kernel (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        kernel: SSAValue,
        bias: SSAValue | None = None,
        *,
        name: str,
        stride: Sequence[int] | None = None,
        pre_padding: Sequence[int] | None = None,
        post_padding: Sequence[int] | None = None,
        dilation: Sequence[int] | None = None,
        num_groups: int = 1,
        padding_mode: PaddingMode = PaddingMode.kEXPLICIT_ROUND_DOWN,
    ) -> None:
        kshape = shape_of(kernel)
        maps = self._maps_from_kernel(kshape, num_groups)
        props: dict[str, object] = {
            "name": StringAttr(name),
            "num_output_maps": i64_attr(maps),
            "kernel_size": i64_array(kshape[2:]),
            "num_groups": i64_attr(num_groups),
            "padding_mode": PaddingModeAttr(padding_mode),
        }
        n = len(kshape) - 2
        for key, value, default in (
            ("stride", stride, [1] * n),
            ("pre_padding", pre_padding, [0] * n),
            ("post_padding", post_padding, [0] * n),
            ("dilation", dilation, [1] * n),
        ):
            if value is not None and list(value) != default:
                props[key] = i64_array(value)
        out = self._output_shape(
            shape_of(input), kshape, maps, kshape[2:], stride or [1] * n, pre_padding or [0] * n,
            post_padding or [0] * n, dilation or [1] * n, num_groups, padding_mode,
        )
        super().__init__(
            operands=[input, kernel, [bias] if bias is not None else []],
            result_types=[tensor_of(out, element_of(input))],
            properties=props,  # pyright: ignore[reportArgumentType]
        )

    @staticmethod
    @abc.abstractmethod
    def _maps_from_kernel(kernel_shape: Shape, num_groups: int) -> int: ...

    @staticmethod
    @abc.abstractmethod
    def _output_shape(
        input_shape: Shape, kernel_shape: Shape, num_output_maps: int, kernel_size: Sequence[int],
        stride: Sequence[int], pre: Sequence[int], post: Sequence[int], dilation: Sequence[int],
        num_groups: int, padding_mode: str,
    ) -> Shape: ...

    # -- parameter values with TensorRT's defaults -------------------------------------------
    @property
    def spatial_rank(self) -> int:
        return len(ints(self.kernel_size))

    def stride_values(self) -> tuple[int, ...]:
        return opt_ints(self.stride, [1] * self.spatial_rank)

    def pre_padding_values(self) -> tuple[int, ...]:
        return opt_ints(self.pre_padding, [0] * self.spatial_rank)

    def post_padding_values(self) -> tuple[int, ...]:
        return opt_ints(self.post_padding, [0] * self.spatial_rank)

    def dilation_values(self) -> tuple[int, ...]:
        return opt_ints(self.dilation, [1] * self.spatial_rank)

    def verify_layer(self) -> None:
        self.expect_elements(self.input, FLOAT_TYPES, "input")
        element = self.expect_same_elements([self.input, self.kernel], "input and kernel")
        maps = self.num_output_maps.value.data
        out = self._output_shape(
            shape_of(self.input), shape_of(self.kernel), maps, ints(self.kernel_size),
            self.stride_values(), self.pre_padding_values(), self.post_padding_values(),
            self.dilation_values(), self.num_groups.value.data, self.padding_mode.data,
        )
        if self.bias is not None:
            if shape_of(self.bias) != (maps,):
                raise ShapeError(f"bias must have shape [{maps}], got {list(shape_of(self.bias))}")
            if element_of(self.bias) != element:
                raise ShapeError("bias must have the input's element type")
        self.expect_type(self.output, out, element)


@irdl_op_definition
class ConvolutionOp(WindowedConvolutionOp):
    """IConvolutionLayer (``add_convolution_nd``): kernel [K, C/groups, *kernel_size]."""

    name = "trt.convolution"
    LAYER: ClassVar[str] = "IConvolutionLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    @staticmethod
    def _maps_from_kernel(kernel_shape: Shape, num_groups: int) -> int:
        return kernel_shape[0]

    @staticmethod
    def _output_shape(
        input_shape: Shape, kernel_shape: Shape, num_output_maps: int, kernel_size: Sequence[int],
        stride: Sequence[int], pre: Sequence[int], post: Sequence[int], dilation: Sequence[int],
        num_groups: int, padding_mode: str,
    ) -> Shape:
        return convolution_output_shape(
            input_shape, kernel_shape, num_output_maps, kernel_size, stride, pre, post, dilation,
            num_groups, padding_mode,
        )


@irdl_op_definition
class DeconvolutionOp(WindowedConvolutionOp):
    """IDeconvolutionLayer (``add_deconvolution_nd``): kernel [C, K/groups, *kernel_size]."""

    name = "trt.deconvolution"
    LAYER: ClassVar[str] = "IDeconvolutionLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    @staticmethod
    def _maps_from_kernel(kernel_shape: Shape, num_groups: int) -> int:
        return kernel_shape[1] * num_groups

    @staticmethod
    def _output_shape(
        input_shape: Shape, kernel_shape: Shape, num_output_maps: int, kernel_size: Sequence[int],
        stride: Sequence[int], pre: Sequence[int], post: Sequence[int], dilation: Sequence[int],
        num_groups: int, padding_mode: str,
    ) -> Shape:
        return deconvolution_output_shape(
            input_shape, kernel_shape, num_output_maps, kernel_size, stride, pre, post, dilation,
            num_groups, padding_mode,
        )


@irdl_op_definition
class MatrixMultiplyOp(TrtLayerOp):
    """IMatrixMultiplyLayer: op0(input0) * op1(input1), batch dims broadcast over size 1."""

    name = "trt.matrix_multiply"
    LAYER: ClassVar[str] = "IMatrixMultiplyLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input0 = operand_def(TensorType)
    input1 = operand_def(TensorType)
    output = result_def(TensorType)
    op0 = prop_def(MatrixOperationAttr)
    op1 = prop_def(MatrixOperationAttr)

    assembly_format = "$input0 $op0 `,` $input1 $op1 attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input0: SSAValue,
        op0: MatrixOperation,
        input1: SSAValue,
        op1: MatrixOperation,
        *,
        name: str,
    ) -> None:
        shape = matrix_multiply_output_shape(shape_of(input0), op0, shape_of(input1), op1)
        super().__init__(
            operands=[input0, input1],
            result_types=[tensor_of(shape, element_of(input0))],
            properties={
                "name": StringAttr(name),
                "op0": MatrixOperationAttr(op0),
                "op1": MatrixOperationAttr(op1),
            },
        )

    def verify_layer(self) -> None:
        self.expect_elements(self.input0, FLOAT_TYPES, "input0")
        element = self.expect_same_elements([self.input0, self.input1], "both inputs")
        shape = matrix_multiply_output_shape(
            shape_of(self.input0), self.op0.data, shape_of(self.input1), self.op1.data
        )
        self.expect_type(self.output, shape, element)


@irdl_op_definition
class EinsumOp(TrtLayerOp):
    """IEinsumLayer: 1 or 2 inputs, lower-case subscripts, no ellipsis/broadcast/diagonal."""

    name = "trt.einsum"
    LAYER: ClassVar[str] = "IEinsumLayer"

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    equation = prop_def(StringAttr)

    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], equation: str, *, name: str) -> None:
        shape = einsum_output_shape(equation, [shape_of(v) for v in inputs])
        super().__init__(
            operands=[list(inputs)],
            result_types=[tensor_of(shape, element_of(inputs[0]))],
            properties={"name": StringAttr(name), "equation": StringAttr(equation)},
        )

    def verify_layer(self) -> None:
        if not self.inputs:
            raise ShapeError("needs at least one input")
        for v in self.inputs:
            self.expect_elements(v, FLOAT_TYPES, "input")
        element = self.expect_same_elements(list(self.inputs), "inputs")
        shape = einsum_output_shape(self.equation.data, [shape_of(v) for v in self.inputs])
        self.expect_type(self.output, shape, element)
