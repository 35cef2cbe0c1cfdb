"""The mapping between torch dtypes/tensors and xDSL builtin types.

Tensors are builtin ranked tensor types with static shapes (``tensor<1x3x224x224xf32>``).
Scalars that are not compile-time constants are ``i64`` (int), ``f64`` (float)
and ``i1`` (bool), as TorchScript's ``int``/``float``/``bool``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

ui8 = IntegerType(8, Signedness.UNSIGNED)

_DTYPE_TO_ELEMENT: dict[torch.dtype, Attribute] = {
    torch.float32: f32,
    torch.float16: f16,
    torch.bfloat16: bf16,
    torch.float64: f64,
    torch.int64: i64,
    torch.int32: i32,
    torch.int16: i16,
    torch.int8: i8,
    torch.uint8: ui8,
    torch.bool: i1,
}
_ELEMENT_TO_DTYPE: dict[Attribute, torch.dtype] = {v: k for k, v in _DTYPE_TO_ELEMENT.items()}

#: The dtypes every level claims to support (the others import but may fall back).
SUPPORTED_DTYPES: tuple[torch.dtype, ...] = tuple(_DTYPE_TO_ELEMENT)


class UnsupportedTypeError(TypeError):
    """A torch dtype or xDSL type that has no counterpart on the other side."""


def element_type(dtype: torch.dtype) -> Attribute:
    """The xDSL element type of a torch dtype (``torch.float32`` -> ``f32``)."""
    try:
        return _DTYPE_TO_ELEMENT[dtype]
    except KeyError:
        raise UnsupportedTypeError(
            f"dtype {dtype} is not supported; supported: "
            + ", ".join(str(d).removeprefix("torch.") for d in SUPPORTED_DTYPES)
        ) from None


def torch_dtype(element: Attribute) -> torch.dtype:
    """The torch dtype of an xDSL element type (``f32`` -> ``torch.float32``)."""
    try:
        return _ELEMENT_TO_DTYPE[element]
    except KeyError:
        raise UnsupportedTypeError(f"element type {element} has no torch dtype") from None


def tensor_type(shape: Sequence[int], dtype: torch.dtype) -> TensorType[Attribute]:
    """``tensor<AxBxdtype>`` for a static shape."""
    return TensorType(element_type(dtype), list(shape))


def tensor_type_of(value: torch.Tensor) -> TensorType[Attribute]:
    """The ranked tensor type of a concrete (or meta) torch tensor."""
    return tensor_type(tuple(value.shape), value.dtype)


def scalar_type_of(value: object) -> Attribute:
    """The builtin type of a TorchScript scalar: ``i1`` bool, ``i64`` int, ``f64`` float."""
    if isinstance(value, bool):
        return i1
    if isinstance(value, int):
        return i64
    if isinstance(value, float):
        return f64
    raise UnsupportedTypeError(f"no scalar type for {type(value).__name__} value {value!r}")


def shape_of(tensor_ty: Attribute) -> tuple[int, ...]:
    """The static shape of a tensor type."""
    if not isinstance(tensor_ty, TensorType):
        raise UnsupportedTypeError(f"expected a tensor type, got {tensor_ty}")
    return tuple(tensor_ty.get_shape())


def dtype_of(tensor_ty: Attribute) -> torch.dtype:
    """The torch dtype of a tensor type's elements."""
    if not isinstance(tensor_ty, TensorType):
        raise UnsupportedTypeError(f"expected a tensor type, got {tensor_ty}")
    return torch_dtype(tensor_ty.get_element_type())


def is_float_element(element: Attribute) -> bool:
    return isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)


def parse_type_list(text: str) -> list[TensorType[Attribute]]:
    """Parse ``'tensor<1x3xf32>,tensor<5xi64>'`` (``--input-types``) into tensor types."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    ctx = Context()
    ctx.load_dialect(Builtin)
    parser = Parser(ctx, "(" + text + ")")
    types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    result: list[TensorType[Attribute]] = []
    for ty in types:
        if not isinstance(ty, TensorType):
            raise UnsupportedTypeError(f"--input-types: expected tensor types, got {ty}")
        result.append(ty)
    return result


def format_type(ty: Attribute) -> str:
    """The MLIR text of a type (``tensor<1x3xf32>``)."""
    import io

    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out).print_attribute(ty)
    return out.getvalue()


def example_tensor(ty: TensorType[Attribute]) -> torch.Tensor:
    """A deterministic example tensor of the given type (for shape inference runs)."""
    dtype = torch_dtype(ty.get_element_type())
    shape = tuple(ty.get_shape())
    gen = torch.Generator().manual_seed(0)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    return torch.randint(0, 4, shape, generator=gen).to(dtype)
