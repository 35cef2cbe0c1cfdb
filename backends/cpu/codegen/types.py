"""xDSL types of the loop level as LLVM types (bool buffers hold one byte per element)."""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute

from ziggurat.backends.cpu.llvm_ir import F32, F64, I1, I8, I64


class CodegenError(RuntimeError):
    """Loop IR the code generator cannot translate (a bug in an earlier stage)."""


def scalar_type(attr: Attribute) -> ir.Type:
    if isinstance(attr, Float32Type):
        return F32
    if isinstance(attr, Float64Type):
        return F64
    if isinstance(attr, Float16Type | BFloat16Type):
        return ir.IntType(16)  # 16-bit floats are only copied and converted: their bits as i16
    if isinstance(attr, IndexType):
        return I64
    if isinstance(attr, IntegerType):
        return ir.IntType(attr.width.data)
    raise CodegenError(f"no LLVM type for {attr}")


def llvm_type(attr: Attribute) -> ir.Type:
    if isinstance(attr, VectorType):
        shape = attr.get_shape()
        return ir.VectorType(scalar_type(attr.element_type), shape[0])  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(attr, MemRefType):
        return storage_type(attr.element_type).as_pointer()  # pyright: ignore[reportUnknownArgumentType]
    return scalar_type(attr)


def storage_type(attr: Attribute) -> ir.Type:
    """How one element of a buffer is stored (``i1`` as a byte)."""
    t = scalar_type(attr)
    return I8 if t == I1 else t


def element_bytes(attr: Attribute) -> int:
    t = storage_type(attr)
    if isinstance(t, ir.IntType):
        return max(1, t.width // 8)
    return 8 if t == F64 else 4
