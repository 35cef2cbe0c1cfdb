"""Conversions between float32 and IEEE half precision (``float16``), whose LLVM form here is
its bits as ``i16`` (``types.scalar_type``), as integer and float32 arithmetic on those bits:
the same code on every ISA (no F16C, no ``__truncsfhf2`` libcall on the scalar ISA),
vectorizable, and bit for bit what eager's conversions give on x86.

* f16 -> f32 is exact. A normal half gets its exponent rebiased by moving its bits into a
  float32 whose exponent is 2^112 too large, then a multiplication by 2^-112 (exact); a
  subnormal half ``m * 2^-24`` is built as ``(2^-1 + m * 2^-24) - 2^-1`` (exact). An infinity
  or NaN stays one, a NaN keeping its payload as ``vcvtph2ps`` does.
* f32 -> f16 rounds to nearest, ties to even, subnormals included: ``|x| * 2^112 * 2^-110``
  turns what is past half's range into an infinity; adding to it a power of two 13 binades
  above it (above half's smallest normal for a subnormal result) leaves half's 11 significant
  bits in the float32 sum, so float32's own rounding of the sum is half's (the method of the
  FP16 library that c10's ``fp16_ieee_from_fp32_value`` uses). A NaN becomes ``sign | 0x7E00 |
  payload >> 13``, as ``vcvtps2ph`` (eager's vectorized conversion, for every size) gives.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F32, splat_constant, value_type

I16 = ir.IntType(16)
I32 = ir.IntType(32)


def _like(ty: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.VectorType(elem, ty.count) if isinstance(ty, ir.VectorType) else elem


def _f32_bits_constant(ty: ir.Type, value: float) -> ir.Constant:
    return splat_constant(_like(ty, F32), value)


def f16_to_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x``: float16 bits (``i16`` or a vector of them) -> float32, exactly."""
    ty = value_type(x)
    ity, fty = _like(ty, I32), _like(ty, F32)
    w = b.shl(b.zext(x, ity), splat_constant(ity, 16))
    sign = b.and_(w, splat_constant(ity, 0x80000000))
    two_w = b.add(w, w)
    # normal, infinity, NaN: exponent and mantissa placed in a float32 2^112 too large
    shifted = b.add(b.lshr(two_w, splat_constant(ity, 4)), splat_constant(ity, 0xE0 << 23))
    normal = b.fmul(b.bitcast(shifted, fty), _f32_bits_constant(ty, 2.0 ** -112))
    # subnormal: the mantissa as the low bits of 0.5's
    magic = b.or_(b.lshr(two_w, splat_constant(ity, 17)), splat_constant(ity, 126 << 23))
    subnormal = b.fsub(b.bitcast(magic, fty), _f32_bits_constant(ty, 0.5))
    is_subnormal = b.icmp_unsigned("<", two_w, splat_constant(ity, 1 << 27))
    magnitude = b.select(is_subnormal, b.bitcast(subnormal, ity), b.bitcast(normal, ity))
    return b.bitcast(b.or_(sign, magnitude), fty)  # pyright: ignore[reportReturnType]  # llvmlite: decorated IRBuilder ops infer as None


def f32_to_f16(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x``: float32 (or a vector) -> float16 bits, rounded to nearest even."""
    ty = value_type(x)
    ity, fty = _like(ty, I32), _like(ty, F32)
    w = b.bitcast(x, ity)
    magnitude = b.bitcast(b.and_(w, splat_constant(ity, 0x7FFFFFFF)), fty)
    base = b.fmul(b.fmul(magnitude, _f32_bits_constant(ty, 2.0 ** 112)), _f32_bits_constant(ty, 2.0 ** -110))
    shl1_w = b.add(w, w)
    sign = b.and_(w, splat_constant(ity, 0x80000000))
    bias = b.and_(shl1_w, splat_constant(ity, 0xFF000000))
    floor = splat_constant(ity, 0x71000000)
    bias = b.select(b.icmp_unsigned("<", bias, floor), floor, bias)
    align = b.bitcast(b.add(b.lshr(bias, splat_constant(ity, 1)), splat_constant(ity, 0x07800000)), fty)
    bits = b.bitcast(b.fadd(align, base), ity)
    exp_bits = b.and_(b.lshr(bits, splat_constant(ity, 13)), splat_constant(ity, 0x7C00))
    mantissa_bits = b.and_(bits, splat_constant(ity, 0x0FFF))
    nonsign = b.add(exp_bits, mantissa_bits)
    nan_bits = b.or_(b.and_(b.lshr(w, splat_constant(ity, 13)), splat_constant(ity, 0x3FF)), splat_constant(ity, 0x7E00))
    is_nan = b.icmp_unsigned(">", shl1_w, splat_constant(ity, 0xFF000000))
    half = b.or_(b.lshr(sign, splat_constant(ity, 16)), b.select(is_nan, nan_bits, nonsign))
    return b.trunc(half, _like(ty, I16))  # pyright: ignore[reportReturnType]  # llvmlite: decorated IRBuilder ops infer as None
