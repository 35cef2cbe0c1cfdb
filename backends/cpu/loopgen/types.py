"""torch dtypes as the element types of the loop level."""

from __future__ import annotations

import torch
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    VectorType,
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

_ELEMENT: dict[torch.dtype, Attribute] = {
    torch.float32: f32, torch.float64: f64, torch.int64: i64, torch.int32: i32, torch.int16: i16,
    torch.int8: i8, torch.bool: i1,
    # storage only (never computed on by kernels; copied bit for bit, converted to and from
    # float32, passed to torch ops)
    torch.float16: f16, torch.bfloat16: bf16, torch.uint8: IntegerType(8, Signedness.UNSIGNED),
}

#: dtypes whose kernels may be vectorized (every lane type is legal LLVM vector code).
VECTOR_DTYPES = frozenset({torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.bfloat16,
                           torch.float16, torch.uint8})
#: The 16-bit floats the CPU backend stores, converts to and from float32 and moves natively
#: (their arithmetic runs in float32: ``widen_half_floats``).
HALF_FLOATS = (torch.bfloat16, torch.float16)
#: dtypes the loop level computes with at all (others run through torch).
LOOP_DTYPES = frozenset(_ELEMENT)


def element(dtype: torch.dtype) -> Attribute:
    try:
        return _ELEMENT[dtype]
    except KeyError:
        raise TypeError(f"the loop level has no element type for {dtype}") from None


def memref(shape: tuple[int, ...], dtype: torch.dtype) -> MemRefType:
    return MemRefType(element(dtype), list(shape))


def value_type(dtype: torch.dtype, width: int | None) -> Attribute:
    """The SSA type of a value of ``dtype``: scalar, or ``vector<width x ...>``."""
    elem = element(dtype)
    return VectorType(elem, [width]) if width else elem


INDEX = IndexType()
