"""The mapping between torch dtypes/tensors and xDSL builtin types.

Tensors are builtin ranked tensor types with static shapes (``tensor<1x3x224x224xf32>``).
Scalars that are not compile-time constants are ``i64`` (int), ``f64`` (float)
and ``i1`` (bool), as TorchScript's ``int``/``float``/``bool``.

Besides the dtypes the levels compute natively, every other dtype eager runs imports as a
typed value that only torch computes (the fallback): complex (``complex<f32>``), float8
(``f8E4M3FN``, ...) and quantized (``!torch.quantized<quint8>``).  ``torch_only_reason``
says why such a value has no native lowering.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import torch
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f8E4M3FN,
    f8E4M3FNUZ,
    f8E5M2,
    f8E5M2FNUZ,
    f8E8M0FNU,
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

if TYPE_CHECKING:
    from ziggurat.dialects.torch.quantized_type import QuantizedType

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

#: The dtypes every level claims to support (the others import but may fall back).
SUPPORTED_DTYPES: tuple[torch.dtype, ...] = tuple(_DTYPE_TO_ELEMENT)

#: Complex dtypes and their builtin ``complex<...>`` element types.
COMPLEX_ELEMENTS: dict[torch.dtype, Attribute] = {
    torch.complex32: ComplexType(f16),
    torch.complex64: ComplexType(f32),
    torch.complex128: ComplexType(f64),
}
#: 8-bit float dtypes and their builtin ``f8...`` element types.
FLOAT8_ELEMENTS: dict[torch.dtype, Attribute] = {
    torch.float8_e4m3fn: f8E4M3FN,
    torch.float8_e5m2: f8E5M2,
    torch.float8_e4m3fnuz: f8E4M3FNUZ,
    torch.float8_e5m2fnuz: f8E5M2FNUZ,
}
if hasattr(torch, "float8_e8m0fnu"):  # torch >= 2.7
    FLOAT8_ELEMENTS[torch.float8_e8m0fnu] = f8E8M0FNU
#: Quantized dtypes (their element type is ``!torch.quantized<name>``).
QUANTIZED_DTYPES: tuple[torch.dtype, ...] = (torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4)

#: Dtypes that import as typed values but that only torch computes (the fallback).
TORCH_ONLY_DTYPES: tuple[torch.dtype, ...] = (*COMPLEX_ELEMENTS, *FLOAT8_ELEMENTS, *QUANTIZED_DTYPES)
#: Every dtype a program's tensors may have.
IMPORTABLE_DTYPES: tuple[torch.dtype, ...] = (*SUPPORTED_DTYPES, *TORCH_ONLY_DTYPES)


class UnsupportedTypeError(TypeError):
    """A torch dtype or xDSL type that has no counterpart on the other side."""


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _quantized_type(kind: str) -> QuantizedType:
    # Imported here: the torch dialect package imports this module.
    from ziggurat.dialects.torch.quantized_type import QuantizedType

    return QuantizedType(kind)


@cache
def _tables() -> tuple[dict[torch.dtype, Attribute], dict[Attribute, torch.dtype]]:
    """Both directions of the dtype mapping, every importable dtype included."""
    to_element: dict[torch.dtype, Attribute] = {**_DTYPE_TO_ELEMENT, **COMPLEX_ELEMENTS, **FLOAT8_ELEMENTS}
    for dtype in QUANTIZED_DTYPES:
        to_element[dtype] = _quantized_type(_dtype_name(dtype))
    return to_element, {v: k for k, v in to_element.items()}


def element_type(dtype: torch.dtype) -> Attribute:
    """The xDSL element type of a torch dtype (``torch.float32`` -> ``f32``,
    ``torch.complex64`` -> ``complex<f32>``, ``torch.quint8`` -> ``!torch.quantized<quint8>``)."""
    try:
        return _tables()[0][dtype]
    except KeyError:
        raise UnsupportedTypeError(
            f"dtype {dtype} is not supported; supported: "
            + ", ".join(_dtype_name(d) for d in IMPORTABLE_DTYPES)
        ) from None


def torch_dtype(element: Attribute) -> torch.dtype:
    """The torch dtype of an xDSL element type (``f32`` -> ``torch.float32``)."""
    try:
        return _tables()[1][element]
    except KeyError:
        raise UnsupportedTypeError(f"element type {element} has no torch dtype") from None


def _element_of(ty: Attribute) -> Attribute:
    return ty.get_element_type() if isinstance(ty, TensorType) else ty  # pyright: ignore[reportUnknownVariableType]


def is_complex_element(ty: Attribute) -> bool:
    """A complex element type (or a tensor type of one)."""
    return isinstance(_element_of(ty), ComplexType)


def is_quantized_element(ty: Attribute) -> bool:
    """A ``!torch.quantized<...>`` element type (or a tensor type of one)."""
    element = _element_of(ty)
    return element in _tables()[1] and _tables()[1][element] in QUANTIZED_DTYPES


#: the reason a tensor whose shape is only known at run time runs through torch
DATA_DEPENDENT_SHAPE = "shape depends on the values of the inputs (a data-dependent shape)"


def has_dynamic_dims(ty: Attribute) -> bool:
    """A tensor type with a ``?`` dimension: the size is only known at run time (the result of
    ``nonzero``, ``unique``, ``bincount``... and what is computed from it)."""
    return isinstance(ty, TensorType) and any(d == DYNAMIC_INDEX for d in ty.get_shape())  # pyright: ignore


def fits_shape(shape: Sequence[int], declared: Sequence[int]) -> bool:
    """Whether the concrete ``shape`` is one of ``declared``'s, whose negative (``?``) dims take
    any size."""
    return len(shape) == len(declared) and all(d < 0 or n == d for n, d in zip(shape, declared, strict=True))


def dynamic_tensor_type(rank: int, dtype: torch.dtype) -> TensorType[Attribute]:
    """``tensor<?x?x...xdtype>``: a tensor of known rank and dtype whose sizes are only known at
    run time (rank 0 has no size, so it is static)."""
    return TensorType(element_type(dtype), [DYNAMIC_INDEX] * rank)


def torch_only_reason(ty: Attribute) -> str | None:
    """Why values of type ``ty`` (a tensor or element type) have no native lowering: complex,
    float8 and quantized tensors, and tensors of a data-dependent shape, run through torch only
    (None for any other type)."""
    if has_dynamic_dims(ty):
        return f"a tensor whose {DATA_DEPENDENT_SHAPE}"
    element = _element_of(ty)
    dtype = _tables()[1].get(element)
    if dtype is None or dtype not in TORCH_ONLY_DTYPES:
        return None
    return f"{_dtype_name(dtype)} tensors have no native lowering"


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
    """The static shape of a tensor type (an error for a ``?`` dimension: code that needs sizes
    must not see a tensor of data-dependent shape, which only torch computes)."""
    if not isinstance(tensor_ty, TensorType):
        raise UnsupportedTypeError(f"expected a tensor type, got {tensor_ty}")
    shape = tuple(tensor_ty.get_shape())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if DYNAMIC_INDEX in shape:
        raise UnsupportedTypeError(f"{tensor_ty}: its {DATA_DEPENDENT_SHAPE}")
    return shape  # pyright: ignore[reportUnknownVariableType]


def rank_of(tensor_ty: Attribute) -> int:
    """The rank of a tensor type, static or with ``?`` dimensions."""
    if not isinstance(tensor_ty, TensorType):
        raise UnsupportedTypeError(f"expected a tensor type, got {tensor_ty}")
    return len(tensor_ty.get_shape())  # pyright: ignore[reportUnknownArgumentType]


def dtype_of(tensor_ty: Attribute) -> torch.dtype:
    """The torch dtype of a tensor type's elements."""
    if not isinstance(tensor_ty, TensorType):
        raise UnsupportedTypeError(f"expected a tensor type, got {tensor_ty}")
    return torch_dtype(tensor_ty.get_element_type())


def is_float_element(element: Attribute) -> bool:
    return isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)


def parse_type_list(text: str) -> list[TensorType[Attribute]]:
    """Parse ``'tensor<1x3xf32>,tensor<5xi64>'`` (``--input-types``) into tensor types."""
    from xdsl.parser import Parser

    from ziggurat.ir.context import make_context

    ctx = make_context()  # the torch dialect parses !torch.quantized<...>
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


def _quantize(values: torch.Tensor, scale: float, dtype: torch.dtype) -> torch.Tensor:
    """``values`` quantized per tensor (zero point 0), without torch's deprecation warning
    (these tensors are Ziggurat's own examples, not the user's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(values, scale, 0, dtype)


def example_tensor(ty: TensorType[Attribute]) -> torch.Tensor:
    """A deterministic example tensor of the given type (for shape inference runs); a
    quantized one is per-tensor quantized with scale 0.1 and zero point 0."""
    dtype = torch_dtype(ty.get_element_type())
    shape = tuple(ty.get_shape())
    gen = torch.Generator().manual_seed(0)
    if dtype in QUANTIZED_DTYPES:
        return _quantize(torch.randn(shape, generator=gen), 0.1, dtype)
    if dtype.is_complex:
        return torch.randn(shape, generator=gen, dtype=torch.complex64).to(dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    return torch.randint(0, 4, shape, generator=gen).to(dtype)


def zeros_of(ty: TensorType[Attribute], device: str) -> torch.Tensor:
    """A tensor of type ``ty`` on ``device`` ("meta": no data; "cpu": zeros).  Quantized
    tensors have no meta form: asking one on "meta" is an ``UnsupportedTypeError``."""
    dtype = torch_dtype(ty.get_element_type())
    shape = tuple(ty.get_shape())
    if dtype in QUANTIZED_DTYPES:
        if device == "meta":
            raise UnsupportedTypeError(f"{_dtype_name(dtype)} tensors have no meta form")
        return _quantize(torch.zeros(shape), 1.0, dtype)
    if device == "meta":
        return torch.empty(shape, dtype=dtype, device=device)
    return torch.zeros(shape, dtype=dtype, device=device)
