"""What every ``trt`` layer op shares: its ``name``, static tensor types, verifier plumbing.

Every op mirrors one nvinfer1 layer.  It carries ``name`` (a ``StringAttr``
property: the node info of the torch op it came from), which the emitter gives
to ``ILayer.name`` and which every verifier message quotes, so a broken layer
points back at its source line.
"""

from __future__ import annotations

import abc
from contextvars import ContextVar
from collections.abc import Iterable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, prop_def, traits_def
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.trt.shapes import DYNAMIC, Shape, ShapeError
from ziggurat.ir.types import fits_shape

FLOAT_TYPES: tuple[Attribute, ...] = (f32, f16, bf16)
INT_TYPES: tuple[Attribute, ...] = (i32, i64, i8)
#: The element types a ``trt`` tensor may have (TensorRT's DataType minus the 4/8-bit floats).
ELEMENT_TYPES: tuple[Attribute, ...] = (*FLOAT_TYPES, *INT_TYPES, i1)
INDEX_TYPES: tuple[Attribute, ...] = (i32, i64)


def type_name(element: Attribute) -> str:
    """``f32`` / ``i1`` ... for messages."""
    if isinstance(element, Float32Type):
        return "f32"
    if isinstance(element, Float16Type):
        return "f16"
    if isinstance(element, BFloat16Type):
        return "bf16"
    if isinstance(element, IntegerType):
        return f"i{element.width.data}"
    return str(element)


def tensor_of(shape: Sequence[int], element: Attribute) -> TensorType[Attribute]:
    """``tensor<...>``; a negative size (``shapes.DYNAMIC``) is a ``?`` dim."""
    return TensorType(element, [DYNAMIC_INDEX if d < 0 else d for d in shape])


def shape_of(value: SSAValue) -> Shape:
    """The sizes of ``value``'s tensor type, a ``?`` dim as ``shapes.DYNAMIC`` (-1, as in nvinfer1)."""
    ty = value.type
    assert isinstance(ty, TensorType)
    return tuple(DYNAMIC if d < 0 else d for d in ty.get_shape())


def element_of(value: SSAValue) -> Attribute:
    ty = value.type
    assert isinstance(ty, TensorType)
    return ty.get_element_type()


def i64_array(values: Iterable[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def f32_array(values: Iterable[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(f32, [float(v) for v in values])


def f64_array(values: Iterable[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(f64, [float(v) for v in values])


def _values(attr: DenseArrayBase) -> tuple[int, ...] | tuple[float, ...]:
    # What `get_values` does; its overloads cover one element kind at a time, and these
    # properties are declared with any element type.
    return attr.elt_type.unpack(attr.data.data, len(attr))


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in _values(attr))


def floats(attr: DenseArrayBase) -> tuple[float, ...]:
    return tuple(float(v) for v in _values(attr))


def opt_ints(attr: DenseArrayBase | None, default: Sequence[int]) -> tuple[int, ...]:
    return tuple(default) if attr is None else ints(attr)


def f32_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), f32)


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), i64)


def mask_attr(mask: int) -> IntegerAttr:
    """An axes bitmask, as TensorRT's ``uint32_t`` (printed as ``i32``)."""
    return IntegerAttr(int(mask), i32)


def bool_attr(value: bool) -> IntegerAttr:
    return BoolAttr.from_bool(bool(value))


#: set while ``specialize.py`` infers result types from concrete input shapes
INFERRING: ContextVar[bool] = ContextVar("trt_inferring_result_types", default=False)


def _refines(new: TensorType[Attribute], old: Attribute) -> bool:
    """Whether ``new`` is ``old`` with some dynamic dims made static."""
    if not isinstance(old, TensorType) or new.get_element_type() != old.get_element_type():
        return False
    return fits_shape(new.get_shape(), old.get_shape())


class TrtLayerOp(IRDLOperation, abc.ABC):
    """Base of every ``trt`` op: one nvinfer1 layer."""

    layer_name = prop_def(StringAttr, prop_name="name")

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    #: The nvinfer1 layer class, for messages ("IConvolutionLayer").
    LAYER: ClassVar[str] = "ILayer"
    #: Whether the layer's shape rules (``shapes.py``) are modelled on dynamic (``?``) dims;
    #: the other layers take static shapes only.
    DYNAMIC_DIMS: ClassVar[bool] = False

    @property
    def layer(self) -> str:
        return self.layer_name.data

    def describe(self, message: str) -> str:
        return f"{self.name} ({self.LAYER}) '{self.layer}': {message}"

    def error(self, message: str) -> VerifyException:
        return VerifyException(self.describe(message))

    def verify_(self) -> None:
        for role, values in (("operand", self.operands), ("result", self.results)):
            for i, value in enumerate(values):
                ty = value.type
                if not isinstance(ty, TensorType):
                    raise self.error(f"{role} #{i} must be a ranked tensor, got {ty}")
                if any(d < 0 for d in ty.get_shape()) and not self.DYNAMIC_DIMS:
                    raise self.error(f"{role} #{i} must have a static shape (the layer is not modelled on "
                                     f"dynamic dims), got {ty}")
                if ty.get_element_type() not in ELEMENT_TYPES:
                    raise self.error(
                        f"{role} #{i} has element type {ty.get_element_type()}, TensorRT takes "
                        + ", ".join(type_name(t) for t in ELEMENT_TYPES)
                    )
        try:
            self.verify_layer()
        except ShapeError as e:
            raise self.error(str(e)) from None

    @abc.abstractmethod
    def verify_layer(self) -> None:
        """Check TensorRT's rules for this layer; raise ShapeError or self.error(...)."""

    # -- helpers for verifiers ---------------------------------------------------------
    def expect_elements(self, value: SSAValue, allowed: Sequence[Attribute], what: str) -> None:
        element = element_of(value)
        if element not in allowed:
            raise self.error(
                f"{what} has element type {type_name(element)}, this layer takes "
                + ", ".join(type_name(t) for t in allowed)
            )

    def expect_type(self, value: SSAValue, shape: Sequence[int], element: Attribute, what: str = "result") -> None:
        actual = value.type
        expected = tensor_of(shape, element)
        if INFERRING.get() and actual != expected and _refines(expected, actual):
            Rewriter.replace_value_with_new_type(value, expected)  # specializing: run-time sizes for ``?``
            return
        if actual != expected:
            raise self.error(f"{what} type must be {expected} by the layer's shape rules, declared {actual}")

    def expect_same_elements(self, values: Sequence[SSAValue], what: str) -> Attribute:
        elements = {element_of(v) for v in values}
        if len(elements) != 1:
            raise self.error(
                f"{what} must share one element type, got " + ", ".join(type_name(element_of(v)) for v in values)
            )
        return elements.pop()
