"""Element-by-element layers: activation, unary, elementwise, select, scale, identity, cast."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
)

from ziggurat.dialects.trt.base import (
    FLOAT_TYPES,
    INT_TYPES,
    TrtLayerOp,
    element_of,
    f32_attr,
    i64_attr,
    shape_of,
    tensor_of,
    type_name,
)
from ziggurat.dialects.trt.enums import (
    ActivationType,
    ActivationTypeAttr,
    ElementWiseOperation,
    ElementWiseOperationAttr,
    ScaleMode,
    ScaleModeAttr,
    UnaryOperation,
    UnaryOperationAttr,
)
from ziggurat.dialects.trt.shapes import broadcast_shapes

_LOGICAL = (ElementWiseOperation.kAND, ElementWiseOperation.kOR, ElementWiseOperation.kXOR)
_COMPARISON = (ElementWiseOperation.kEQUAL, ElementWiseOperation.kGREATER, ElementWiseOperation.kLESS)
_SIGNED_OK = (UnaryOperation.kABS, UnaryOperation.kNEG, UnaryOperation.kSIGN)
_PREDICATES = (UnaryOperation.kISINF, UnaryOperation.kISNAN)


@irdl_op_definition
class ActivationOp(TrtLayerOp):
    """IActivationLayer: ``type`` with its ``alpha``/``beta`` parameters."""

    name = "trt.activation"
    LAYER: ClassVar[str] = "IActivationLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)
    type = prop_def(ActivationTypeAttr)
    alpha = prop_def(FloatAttr, default_value=f32_attr(0.0))
    beta = prop_def(FloatAttr, default_value=f32_attr(0.0))

    assembly_format = "$type $input attr-dict `:` type($input) `->` type($output)"

    def __init__(
        self, input: SSAValue, type: ActivationType, *, name: str, alpha: float = 0.0, beta: float = 0.0
    ) -> None:
        super().__init__(
            operands=[input],
            result_types=[input.type],
            properties={
                "name": StringAttr(name),
                "type": ActivationTypeAttr(type),
                "alpha": f32_attr(alpha),
                "beta": f32_attr(beta),
            },
        )

    @property
    def activation(self) -> ActivationType:
        return self.type.data

    def verify_layer(self) -> None:
        self.expect_elements(self.input, FLOAT_TYPES, "input")
        self.expect_type(self.output, shape_of(self.input), element_of(self.input))


@irdl_op_definition
class UnaryOp(TrtLayerOp):
    """IUnaryLayer."""

    name = "trt.unary"
    LAYER: ClassVar[str] = "IUnaryLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)
    op = prop_def(UnaryOperationAttr)

    assembly_format = "$op $input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, op: UnaryOperation, *, name: str) -> None:
        element = i1 if op in _PREDICATES else element_of(input)
        super().__init__(
            operands=[input],
            result_types=[tensor_of(shape_of(input), element)],
            properties={"name": StringAttr(name), "op": UnaryOperationAttr(op)},
        )

    def verify_layer(self) -> None:
        op = self.op.data
        if op == UnaryOperation.kNOT:
            allowed: tuple[Attribute, ...] = (i1,)
        elif op in _SIGNED_OK:
            allowed = (*FLOAT_TYPES, *INT_TYPES)
        else:
            allowed = FLOAT_TYPES
        self.expect_elements(self.input, allowed, f"input of {op}")
        element = i1 if op in _PREDICATES else element_of(self.input)
        self.expect_type(self.output, shape_of(self.input), element)


@irdl_op_definition
class ElementWiseOp(TrtLayerOp):
    """IElementWiseLayer: equal ranks, broadcast over size-1 dims only."""

    name = "trt.elementwise"
    LAYER: ClassVar[str] = "IElementWiseLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    op = prop_def(ElementWiseOperationAttr)

    assembly_format = "$op $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, op: ElementWiseOperation, *, name: str) -> None:
        shape = broadcast_shapes(shape_of(lhs), shape_of(rhs))
        element = i1 if op in _COMPARISON else element_of(lhs)
        super().__init__(
            operands=[lhs, rhs],
            result_types=[tensor_of(shape, element)],
            properties={"name": StringAttr(name), "op": ElementWiseOperationAttr(op)},
        )

    def verify_layer(self) -> None:
        op = self.op.data
        element = self.expect_same_elements([self.lhs, self.rhs], "both inputs")
        if op in _LOGICAL:
            if element != i1:
                raise self.error(f"{op} takes bool (i1) inputs, got {type_name(element)}")
        elif element == i1 and op not in (ElementWiseOperation.kEQUAL,):
            raise self.error(f"{op} does not take bool (i1) inputs")
        shape = broadcast_shapes(shape_of(self.lhs), shape_of(self.rhs))
        self.expect_type(self.output, shape, i1 if op in _COMPARISON else element)


@irdl_op_definition
class SelectOp(TrtLayerOp):
    """ISelectLayer: ``condition ? then : else`` with TensorRT broadcasting."""

    name = "trt.select"
    LAYER: ClassVar[str] = "ISelectLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    condition = operand_def(TensorType)
    then_input = operand_def(TensorType)
    else_input = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "$condition `,` $then_input `,` $else_input attr-dict `:` functional-type(operands, results)"

    def __init__(self, condition: SSAValue, then_input: SSAValue, else_input: SSAValue, *, name: str) -> None:
        shape = broadcast_shapes(shape_of(condition), shape_of(then_input), shape_of(else_input))
        super().__init__(
            operands=[condition, then_input, else_input],
            result_types=[tensor_of(shape, element_of(then_input))],
            properties={"name": StringAttr(name)},
        )

    def verify_layer(self) -> None:
        self.expect_elements(self.condition, (i1,), "condition")
        element = self.expect_same_elements([self.then_input, self.else_input], "then and else inputs")
        shape = broadcast_shapes(shape_of(self.condition), shape_of(self.then_input), shape_of(self.else_input))
        self.expect_type(self.output, shape, element)


@irdl_op_definition
class ScaleOp(TrtLayerOp):
    """IScaleLayer: ``(input * scale + shift) ^ power`` with build-time coefficients.

    ``kUNIFORM`` takes one coefficient, ``kCHANNEL`` one per ``channel_axis``
    element, ``kELEMENTWISE`` one per element of the dims from ``channel_axis``
    on.  Coefficients are 1-D tensors defined by ``trt.constant`` ops.
    """

    name = "trt.scale"
    LAYER: ClassVar[str] = "IScaleLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    shift = opt_operand_def(TensorType)
    scale = opt_operand_def(TensorType)
    power = opt_operand_def(TensorType)
    output = result_def(TensorType)
    mode = prop_def(ScaleModeAttr)
    channel_axis = prop_def(IntegerAttr, default_value=i64_attr(1))

    irdl_options = (AttrSizedOperandSegments(as_property=True), *TrtLayerOp.irdl_options)

    assembly_format = (
        "$mode $input (`shift` `(` $shift^ `:` type($shift) `)`)? (`scale` `(` $scale^ `:` type($scale) `)`)? "
        "(`power` `(` $power^ `:` type($power) `)`)? attr-dict `:` type($input) `->` type($output)"
    )

    def __init__(
        self,
        input: SSAValue,
        mode: ScaleMode,
        *,
        name: str,
        shift: SSAValue | None = None,
        scale: SSAValue | None = None,
        power: SSAValue | None = None,
        channel_axis: int = 1,
    ) -> None:
        super().__init__(
            operands=[input, [shift] if shift else [], [scale] if scale else [], [power] if power else []],
            result_types=[input.type],
            properties={
                "name": StringAttr(name),
                "mode": ScaleModeAttr(mode),
                "channel_axis": i64_attr(channel_axis),
            },
        )

    def coefficient_count(self) -> int:
        shape = shape_of(self.input)
        axis = self.channel_axis.value.data
        mode = self.mode.data
        if mode == ScaleMode.kUNIFORM:
            return 1
        if mode == ScaleMode.kCHANNEL:
            return shape[axis]
        count = 1
        for d in shape[axis:]:
            count *= d
        return count

    def verify_layer(self) -> None:
        from ziggurat.dialects.trt.sources import ConstantOp

        self.expect_elements(self.input, FLOAT_TYPES, "input")
        rank = len(shape_of(self.input))
        axis = self.channel_axis.value.data
        if not 0 <= axis < rank:
            raise self.error(f"channel_axis {axis} is out of range for rank {rank}")
        count = self.coefficient_count()
        for what, value in (("shift", self.shift), ("scale", self.scale), ("power", self.power)):
            if value is None:
                continue
            if not isinstance(value.owner, ConstantOp):
                raise self.error(f"{what} must be build-time weights (a trt.constant), got {value}")
            if shape_of(value) != (count,):
                raise self.error(f"{self.mode.data} {what} needs {count} coefficients, got shape {list(shape_of(value))}")
            if element_of(value) != element_of(self.input):
                raise self.error(f"{what} must have the input's element type")
        self.expect_type(self.output, shape_of(self.input), element_of(self.input))


@irdl_op_definition
class IdentityOp(TrtLayerOp):
    """IIdentityLayer: a copy (same type)."""

    name = "trt.identity"
    LAYER: ClassVar[str] = "IIdentityLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, *, name: str) -> None:
        super().__init__(operands=[input], result_types=[input.type], properties={"name": StringAttr(name)})

    def verify_layer(self) -> None:
        self.expect_type(self.output, shape_of(self.input), element_of(self.input))


@irdl_op_definition
class CastOp(TrtLayerOp):
    """ICastLayer: convert to the result's element type (``to_type``)."""

    name = "trt.cast"
    LAYER: ClassVar[str] = "ICastLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, to_type: Attribute, *, name: str) -> None:
        super().__init__(
            operands=[input],
            result_types=[tensor_of(shape_of(input), to_type)],
            properties={"name": StringAttr(name)},
        )

    @property
    def to_type(self) -> Attribute:
        return element_of(self.output)

    def verify_layer(self) -> None:
        self.expect_type(self.output, shape_of(self.input), element_of(self.output))
