"""Encoding of static (compile-time) schema arguments as xDSL attributes, and back.

| schema type            | attribute                          | Python value        |
|------------------------|------------------------------------|---------------------|
| int, SymInt            | ``3 : i64``                        | int                 |
| float                  | ``1.0e-05 : f64``                  | float               |
| bool                   | ``true``                           | bool                |
| Scalar                 | one of the three above             | int / float / bool  |
| int[], SymInt[N]       | ``array<i64: 1, 1>``               | list[int]           |
| float[]                | ``array<f64: 0.5>``                | list[float]         |
| bool[]                 | ``array<i1: true>``                | list[bool]          |
| str                    | ``"tanh"``                         | str                 |
| ScalarType             | ``f32`` (a type)                   | torch.dtype         |
| Layout/Device/MemFormat| ``"strided"`` / ``"cpu"`` / ...    | torch object        |

An optional argument that is ``None`` has no property at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, TypeAttribute

from ziggurat.dialects.torch.schema import (
    LAYOUT_CODES,
    MEMORY_FORMAT_CODES,
    SCALAR_TYPE_CODES,
    ArgKind,
    ArgSpec,
)
from ziggurat.ir.types import UnsupportedTypeError, element_type, torch_dtype

StaticValue = (
    int | float | bool | str | list[int] | list[float] | list[bool] | torch.dtype
    | torch.layout | torch.device | torch.memory_format | None
)


class StaticArgumentError(ValueError):
    """A value that cannot be the static argument the schema asks for."""


def _scalar_attr(value: object) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    raise StaticArgumentError(f"expected a number, got {type(value).__name__} {value!r}")


def _as_list(value: object, length: int | None) -> list[object]:
    if isinstance(value, list | tuple):
        return list(value)  # pyright: ignore[reportUnknownArgumentType]
    if length is not None:  # "int[2] stride=1" broadcasts a scalar
        return [value] * length
    raise StaticArgumentError(f"expected a list, got {value!r}")


def _dtype_of(value: object) -> torch.dtype:
    if isinstance(value, torch.dtype):
        return value
    if isinstance(value, int) and value in SCALAR_TYPE_CODES:
        return SCALAR_TYPE_CODES[value]
    raise StaticArgumentError(f"expected a dtype, got {value!r}")


def encode(spec: ArgSpec, value: object) -> Attribute | None:
    """The attribute holding ``value`` for argument ``spec`` (None for an absent optional)."""
    if value is None:
        if spec.optional or spec.kind == ArgKind.GENERATOR:
            return None
        raise StaticArgumentError(f"argument '{spec.name}' ({spec.type_text}) cannot be None")
    match spec.kind:
        case ArgKind.INT:
            if isinstance(value, bool) or not isinstance(value, int):
                raise StaticArgumentError(f"argument '{spec.name}' expects int, got {value!r}")
            return IntegerAttr(value, i64)
        case ArgKind.FLOAT:
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise StaticArgumentError(f"argument '{spec.name}' expects float, got {value!r}")
            return FloatAttr(float(value), f64)
        case ArgKind.BOOL:
            return BoolAttr.from_bool(bool(value))
        case ArgKind.SCALAR:
            return _scalar_attr(value)
        case ArgKind.INT_LIST:
            items = _as_list(value, spec.length)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
                raise StaticArgumentError(f"argument '{spec.name}' expects int[], got {value!r}")
            return DenseArrayBase.from_list(i64, [int(v) for v in items])  # pyright: ignore
        case ArgKind.FLOAT_LIST:
            items = _as_list(value, spec.length)
            return DenseArrayBase.from_list(f64, [float(v) for v in items])  # pyright: ignore
        case ArgKind.BOOL_LIST:
            items = _as_list(value, spec.length)
            return DenseArrayBase.from_list(i1, [int(bool(v)) for v in items])
        case ArgKind.STR:
            return StringAttr(str(value))
        case ArgKind.SCALAR_TYPE:
            dtype = _dtype_of(value)
            try:
                return element_type(dtype)
            except UnsupportedTypeError:
                return StringAttr(str(dtype).removeprefix("torch."))
        case ArgKind.LAYOUT:
            layout = LAYOUT_CODES.get(value, value) if isinstance(value, int) else value
            return StringAttr(str(layout).removeprefix("torch."))
        case ArgKind.DEVICE:
            return StringAttr(str(value))
        case ArgKind.MEMORY_FORMAT:
            fmt = MEMORY_FORMAT_CODES.get(value, value) if isinstance(value, int) else value
            return StringAttr(str(fmt).removeprefix("torch."))
        case ArgKind.GENERATOR:
            raise StaticArgumentError(f"argument '{spec.name}': a Generator cannot be compiled")
        case _:
            raise StaticArgumentError(
                f"argument '{spec.name}' of type {spec.type_text} has no static encoding"
            )


def _decode_scalar(attr: Attribute) -> int | float | bool:
    if isinstance(attr, IntegerAttr):
        value = attr.value.data  # pyright: ignore[reportUnknownMemberType]
        ty = attr.type  # pyright: ignore[reportUnknownMemberType]
        if isinstance(ty, IntegerType) and ty.width.data == 1:
            return bool(value)
        return int(value)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)  # pyright: ignore[reportUnknownMemberType]
    raise StaticArgumentError(f"expected a number attribute, got {attr}")


def _string(spec: ArgSpec, attr: Attribute) -> str:
    if not isinstance(attr, StringAttr):
        raise StaticArgumentError(f"argument '{spec.name}' expects a string, got {attr}")
    return attr.data


def _torch_constant(spec: ArgSpec, name: str, kind: type) -> Any:
    """``torch.<name>`` when it is a ``kind`` (a dtype, layout or memory format)."""
    value = getattr(torch, name, None)
    if not isinstance(value, kind):
        raise StaticArgumentError(f"argument '{spec.name}' ({spec.type_text}): '{name}' is not a torch "
                                  f"{kind.__name__}")
    return value


def decode(spec: ArgSpec, attr: Attribute | None) -> StaticValue:
    """The Python value of a static argument's attribute (None when absent)."""
    if attr is None:
        return None
    match spec.kind:
        case ArgKind.INT | ArgKind.FLOAT | ArgKind.BOOL | ArgKind.SCALAR:
            value = _decode_scalar(attr)
            if spec.kind == ArgKind.FLOAT:
                return float(value)
            return value
        case ArgKind.INT_LIST | ArgKind.FLOAT_LIST | ArgKind.BOOL_LIST:
            if not isinstance(attr, DenseArrayBase):
                raise StaticArgumentError(f"argument '{spec.name}' expects an array, got {attr}")
            values: Sequence[int | float] = attr.get_values()  # pyright: ignore
            if spec.kind == ArgKind.BOOL_LIST:
                return [bool(v) for v in values]
            if spec.kind == ArgKind.INT_LIST:
                return [int(v) for v in values]
            return [float(v) for v in values]
        case ArgKind.STR:
            return _string(spec, attr)
        case ArgKind.SCALAR_TYPE:
            if isinstance(attr, StringAttr):
                return _torch_constant(spec, attr.data, torch.dtype)
            if isinstance(attr, TypeAttribute):
                try:
                    return torch_dtype(attr)
                except UnsupportedTypeError as e:
                    raise StaticArgumentError(f"argument '{spec.name}': {e}") from None
            raise StaticArgumentError(f"argument '{spec.name}' expects a dtype, got {attr}")
        case ArgKind.LAYOUT:
            return _torch_constant(spec, _string(spec, attr), torch.layout)
        case ArgKind.DEVICE:
            try:
                return torch.device(_string(spec, attr))
            except RuntimeError:
                raise StaticArgumentError(f"argument '{spec.name}' expects a device, got {attr}") from None
        case ArgKind.MEMORY_FORMAT:
            return _torch_constant(spec, _string(spec, attr), torch.memory_format)
        case _:
            raise StaticArgumentError(f"argument '{spec.name}' has no static decoding")


def encodable(spec: ArgSpec) -> bool:
    """Whether a schema argument can be a static property of a generated op."""
    return spec.kind not in (ArgKind.OTHER, ArgKind.TENSOR, ArgKind.TENSOR_LIST)
