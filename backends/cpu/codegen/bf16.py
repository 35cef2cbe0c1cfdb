"""Conversions between float32 and bfloat16, whose LLVM form here is its bits as ``i16``
(``types.scalar_type``), as integer arithmetic on those bits: exact on every host, vectorizable
on AVX2 and AVX-512 alike, and bit for bit what torch's ``c10::BFloat16`` conversions do.

* bf16 -> f32 is exact: the 16 bits become the high half of the float's.
* f32 -> bf16 rounds to nearest, ties to even (``bits + 0x7FFF + ((bits >> 16) & 1)``, then
  the high half), so that values past the largest bf16 become infinities as in torch; a NaN
  becomes ``0xFFFF``, as in eager's vectorized conversion (``cvtfp32_bf16``, used for every
  size; c10's scalar one gives ``0x7FC0``): the formula would carry some NaN payloads into the
  sign bit or into an infinity.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F32, splat_constant, value_type

I16 = ir.IntType(16)
I32 = ir.IntType(32)


def _like(ty: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.VectorType(elem, ty.count) if isinstance(ty, ir.VectorType) else elem


def bf16_to_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x``: bf16 bits (``i16`` or a vector of them) -> float32."""
    ty = value_type(x)
    wide = b.zext(x, _like(ty, I32))
    high = b.shl(wide, splat_constant(_like(ty, I32), 16))
    return b.bitcast(high, _like(ty, F32))  # pyright: ignore[reportReturnType]  # llvmlite: decorated IRBuilder ops infer as None


def _rounded_bits(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Type, ir.Value]:
    """``x``'s float32 bits with bf16's round to nearest even applied to the high half (the low
    half left as garbage), and their integer type."""
    ity = _like(value_type(x), I32)
    bits = b.bitcast(x, ity)
    lsb = b.and_(b.lshr(bits, splat_constant(ity, 16)), splat_constant(ity, 1))
    return ity, b.add(b.add(bits, splat_constant(ity, 0x7FFF)), lsb)  # pyright: ignore[reportReturnType]


def f32_to_bf16(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x``: float32 (or a vector) -> bf16 bits, rounded to nearest even."""
    ty = value_type(x)
    ity, rounded = _rounded_bits(b, x)
    high = b.trunc(b.lshr(rounded, splat_constant(ity, 16)), _like(ty, I16))
    nan = b.fcmp_unordered("uno", x, x)
    return b.select(nan, splat_constant(_like(ty, I16), 0xFFFF), high)


def round_f32_to_bf16(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x`` rounded to bf16 (nearest even), as float32: ``bf16_to_f32(f32_to_bf16(x))`` for
    every non-NaN ``x``, with a NaN kept as it is, on 32-bit lanes (no packing to 16 bits)."""
    ity, rounded = _rounded_bits(b, x)
    high = b.and_(rounded, splat_constant(ity, -65536))
    nan = b.fcmp_unordered("uno", x, x)
    return b.select(nan, x, b.bitcast(high, value_type(x)))  # pyright: ignore[reportReturnType]
