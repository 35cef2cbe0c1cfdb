"""Vectors of quantized values in LLVM IR: PT2E's per-tensor quantize and dequantize as eager
computes them in float32, and uint8 loads and stores (whole, or the first lanes of a vector).

Shared by the int8 GEMM (``gemm_int8.py``: its first phase, its epilogue) and the depthwise
convolution (``depthwise.py``: a ``ui8`` input, a quantized output).  Every float32 step is the
one ``decompose-quantize`` writes, so a kernel using them computes eager's values bit for bit.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32, I1, I8, I32, VOID, declare
from ziggurat.backends.cpu.llvm_ir import instr as _i
from ziggurat.backends.cpu.vecmath.builder import f32_round as _f32

V16F = ir.VectorType(F32, 16)
V16I1 = ir.VectorType(I1, 16)

#: ``(scale, zero_point, quant_min, quant_max)`` of a per-tensor quantizer
Quantizer = tuple[float, int, int, int]


def first_lanes(count: int, lanes: int) -> ir.Constant:
    """The mask of a ``count``-lane vector's first ``lanes`` lanes."""
    return ir.Constant(ir.VectorType(I1, count), [1 if i < lanes else 0 for i in range(count)])


def quantized_f32(module: ir.Module, b: ir.IRBuilder, vec: VecOps, x: ir.Value, quantizer: Quantizer) -> ir.Value:
    """PT2E's ``quantize_per_tensor`` of a float32 vector, each step the float32 operation eager's
    computes (``decompose-quantize``): ``t = round(x * float32(1 / scale)) + zero_point`` (half to
    even), ``clamp(t, quant_min, quant_max)``, 0 where ``t`` is NaN: the integers, as floats."""
    scale, zero_point, low, high = quantizer
    ty = x.type  # pyright: ignore[reportAttributeAccessIssue]
    assert isinstance(ty, ir.VectorType)
    rnd = declare(module, f"llvm.roundeven.v{ty.count}f32", ty, [ty])
    t = llvm_ir.fadd(b, _i(b.call(rnd, [llvm_ir.fmul(b, x, vec.const(_f32(1.0 / scale)))])), vec.const(_f32(zero_point)))
    q = vec.min(b, vec.max(b, t, vec.const(_f32(low))), vec.const(_f32(high)))
    return _i(b.select(_i(b.fcmp_unordered("uno", t, t)), ir.Constant(ty, None), q))


def requantize_f32(module: ir.Module, b: ir.IRBuilder, vec: VecOps, x: ir.Value, quantizer: Quantizer) -> ir.Value:
    """PT2E's ``quantize_per_tensor -> dequantize_per_tensor``: :func:`quantized_f32`, then
    ``(q - zero_point) * float32(scale)``."""
    scale, zero_point = quantizer[:2]
    q = quantized_f32(module, b, vec, x, quantizer)
    return llvm_ir.fmul(b, llvm_ir.fsub(b, q, vec.const(_f32(zero_point))), vec.const(_f32(scale)))


def quantized_bytes(module: ir.Module, b: ir.IRBuilder, vec: VecOps, x: ir.Value, quantizer: Quantizer) -> ir.Value:
    """:func:`quantized_f32` of ``x`` (into a range of uint8 values) as a vector of bytes (exact)."""
    n = x.type.count  # pyright: ignore[reportAttributeAccessIssue]
    q = quantized_f32(module, b, vec, x, quantizer)
    return _i(b.trunc(_i(b.fptosi(q, ir.VectorType(I32, n))), ir.VectorType(I8, n)))


def quantize_u8(module: ir.Module, b: ir.IRBuilder, vec: VecOps, x: ir.Value, a_scale: float,
                zero_point: int) -> ir.Value:
    """Dequantized floats back to their uint8 values: ``round(x / a_scale) + zero_point`` (as
    ``x * float32(1 / a_scale)``, exact for ``x`` an integer times the scale), clamped."""
    return quantized_bytes(module, b, vec, x, (a_scale, zero_point, 0, 255))


def dequantized_u8(b: ir.IRBuilder, vec: VecOps, u: ir.Value, quantization: tuple[float, int]) -> ir.Value:
    """Bytes ``q`` as eager's ``dequantize_per_tensor``: ``(float32(q) - zero_point) * scale``."""
    scale, zero_point = quantization
    n = u.type.count  # pyright: ignore[reportAttributeAccessIssue]
    wide = _i(b.zext(u, ir.VectorType(I32, n)))
    return llvm_ir.fmul(b, llvm_ir.fsub(b, _i(b.sitofp(wide, ir.VectorType(F32, n))), vec.const(_f32(zero_point))),
                        vec.const(_f32(scale)))


def masked_load_u8(module: ir.Module, b: ir.IRBuilder, ptr: ir.Value, mask: ir.Value,
                   passthru: ir.Value | None = None) -> ir.Value:
    """The bytes at ``ptr`` where ``mask`` is set (the others are not read: ``passthru``'s, or 0)."""
    n = mask.type.count  # pyright: ignore[reportAttributeAccessIssue]
    ty, mty = ir.VectorType(I8, n), ir.VectorType(I1, n)
    fn = declare(module, f"llvm.masked.load.v{n}i8.p0v{n}i8", ty, [ty.as_pointer(), I32, mty, ty])
    fill = passthru if passthru is not None else ir.Constant(ty, None)
    return _i(b.call(fn, [_i(b.bitcast(ptr, ty.as_pointer())), I32(1), mask, fill]))


def masked_store_u8(module: ir.Module, b: ir.IRBuilder, x: ir.Value, ptr: ir.Value, mask: ir.Value) -> None:
    """The bytes of ``x`` where ``mask`` is set (``llvm_ir.masked_store``: one lane stored as a byte)."""
    llvm_ir.masked_store(b, x, ptr, mask, 1)


def load_u8(module: ir.Module, b: ir.IRBuilder, ptr: ir.Value, lanes: int | None, width: int = 16) -> ir.Value:
    """``width`` bytes at ``ptr`` (the first ``lanes``, the rest 0)."""
    ty = ir.VectorType(I8, width)
    if lanes is None or lanes >= width:
        return _i(b.load(_i(b.bitcast(ptr, ty.as_pointer())), align=1))
    return masked_load_u8(module, b, ptr, first_lanes(width, lanes))


def store_u8(module: ir.Module, b: ir.IRBuilder, u: ir.Value, ptr: ir.Value, lanes: int | None = None) -> None:
    """The bytes ``u`` at ``ptr`` (the first ``lanes`` only: the next bytes are not theirs)."""
    n = u.type.count  # pyright: ignore[reportAttributeAccessIssue]
    if lanes is None or lanes >= n:
        b.store(u, _i(b.bitcast(ptr, ir.VectorType(I8, n).as_pointer())), align=1)
    else:
        masked_store_u8(module, b, u, ptr, first_lanes(n, lanes))


def store_quantized_u8(module: ir.Module, b: ir.IRBuilder, vec: VecOps, x: ir.Value, quantizer: Quantizer,
                       ptr: ir.Value, lanes: int) -> None:
    """The quantized integers of ``x`` (:func:`quantized_f32`; a range of uint8 values) as bytes."""
    store_u8(module, b, quantized_bytes(module, b, vec, x, quantizer), ptr, lanes)


def masked_load(module: ir.Module, b: ir.IRBuilder, ptr: ir.Value, mask: ir.Value) -> ir.Value:
    """16 floats at ``ptr`` where ``mask`` is set (the others 0, not read)."""
    fn = declare(module, "llvm.masked.load.v16f32.p0v16f32", V16F, [V16F.as_pointer(), I32, V16I1, V16F])
    return _i(b.call(fn, [_i(b.bitcast(ptr, V16F.as_pointer())), I32(4), mask, ir.Constant(V16F, None)]))


def masked_store(module: ir.Module, b: ir.IRBuilder, x: ir.Value, ptr: ir.Value, mask: ir.Value) -> None:
    fn = declare(module, "llvm.masked.store.v16f32.p0v16f32", VOID, [V16F, V16F.as_pointer(), I32, V16I1])
    b.call(fn, [x, _i(b.bitcast(ptr, V16F.as_pointer())), I32(4), mask])


__all__ = ["Quantizer", "dequantized_u8", "first_lanes", "load_u8", "masked_load", "masked_load_u8", "masked_store",
           "masked_store_u8", "quantize_u8", "quantized_bytes", "quantized_f32", "requantize_f32", "store_quantized_u8",
           "store_u8"]
