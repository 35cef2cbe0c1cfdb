"""Layers that produce tensors without a data input: constant, shape, fill."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    StringAttr,
    TensorType,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import ConstantLike, Pure

from ziggurat.dialects.trt.base import (
    FLOAT_TYPES,
    INDEX_TYPES,
    TrtLayerOp,
    element_of,
    f64_array,
    floats,
    shape_of,
    tensor_of,
    type_name,
)
from ziggurat.dialects.trt.enums import FillOperation, FillOperationAttr
from ziggurat.dialects.trt.shapes import ShapeError

WeightsAttr = DenseIntOrFPElementsAttr | DenseResourceAttr


@irdl_op_definition
class ConstantOp(TrtLayerOp):
    """IConstantLayer: build-time weights, as ``dense<...>`` or ``dense_resource<...>``."""

    name = "trt.constant"
    LAYER: ClassVar[str] = "IConstantLayer"

    T: ClassVar = VarConstraint("T", AnyAttr())
    output = result_def(T)
    weights = prop_def(
        ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr()))
        | ParamAttrConstraint(DenseResourceAttr, (AnyAttr(), T))
    )

    traits = traits_def(Pure(), ConstantLike())
    assembly_format = "attr-dict $weights"

    def __init__(self, weights: WeightsAttr, *, name: str) -> None:
        super().__init__(
            result_types=[weights.type],
            properties={"name": StringAttr(name), "weights": weights},
        )

    def verify_layer(self) -> None:
        ty = self.weights.type
        if not isinstance(ty, TensorType):
            raise ShapeError(f"weights must be a tensor, got {ty}")


@irdl_op_definition
class ShapeOp(TrtLayerOp):
    """IShapeLayer: the input's dims as a 1-D i64 (TensorRT 10) or i32 (TensorRT 8) tensor."""

    name = "trt.shape"
    LAYER: ClassVar[str] = "IShapeLayer"

    input = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, *, name: str, element: Attribute = i64) -> None:
        super().__init__(
            operands=[input],
            result_types=[tensor_of([len(shape_of(input))], element)],
            properties={"name": StringAttr(name)},
        )

    def verify_layer(self) -> None:
        self.expect_elements(self.output, INDEX_TYPES, "result")
        self.expect_type(self.output, [len(shape_of(self.input))], element_of(self.output))


@irdl_op_definition
class FillOp(TrtLayerOp):
    """IFillLayer with static dims (the result type), ``alpha`` and ``beta``.

    kLINSPACE: out[i0, ..., in] = alpha + sum_k beta[k] * i_k (one beta per dim);
    kRANDOM_UNIFORM: uniform in [alpha, beta[0]]; kRANDOM_NORMAL: mean alpha, std beta[0].
    """

    name = "trt.fill"
    LAYER: ClassVar[str] = "IFillLayer"

    output = result_def(TensorType)
    op = prop_def(FillOperationAttr)
    alpha = prop_def(FloatAttr)
    beta = prop_def(DenseArrayBase)

    traits = traits_def()
    assembly_format = "$op attr-dict `:` type($output)"

    def __init__(
        self, op: FillOperation, shape: Sequence[int], element: Attribute, *, name: str, alpha: float, beta: Sequence[float]
    ) -> None:
        super().__init__(
            result_types=[tensor_of(shape, element)],
            properties={
                "name": StringAttr(name),
                "op": FillOperationAttr(op),
                "alpha": FloatAttr(float(alpha), f64),
                "beta": f64_array(beta),
            },
        )

    def beta_values(self) -> tuple[float, ...]:
        return floats(self.beta)

    def verify_layer(self) -> None:
        rank = len(shape_of(self.output))
        op = self.op.data
        element = element_of(self.output)
        if op == FillOperation.kLINSPACE:
            allowed = (*FLOAT_TYPES[:1], i32, i64)
            if len(self.beta_values()) != rank:
                raise ShapeError(f"kLINSPACE needs one beta (delta) per dim: {rank}, got {len(self.beta_values())}")
        else:
            allowed = FLOAT_TYPES
            if len(self.beta_values()) != 1:
                raise ShapeError(f"{op} takes one beta value, got {len(self.beta_values())}")
        if element not in allowed:
            raise ShapeError(f"{op} cannot produce {type_name(element)}")
