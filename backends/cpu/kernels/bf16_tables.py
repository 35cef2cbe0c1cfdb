"""A bf16 activation of a bf16 value as a table of its 65,536 answers, made by eager itself.

Eager applies an activation to a bf16 tensor by widening each element to float32, computing in
float32 and rounding the result to bf16.  A GEMM epilogue whose steps are rounded as eager's
(``Bf16GemmSpec.rounded_steps``) feeds its activation a bf16 value too, so the activation has
only 65,536 possible inputs: :func:`eager_table` asks torch for all of them once, and the
epilogue looks its answers up with ``vpgatherdd`` instead of computing them.  Its results are
then eager's own bits, where the float32 kernels of ``vecmath`` differ from eager's float32
math by a few ulps and so, across a bf16 rounding boundary, by one bf16 ulp (GELU: 20,211 of
1,204,224 elements of a randn*2 batch).

Where: the AMX kernel's epilogues (Intel Sapphire/Emerald Rapids), whose gathers are fast: bf16
-> GELU -> bf16 over 3136x384 elements, 1 thread, Emerald Rapids: 1.09 ms computed, 0.30 ms
looked up (eager 0.57); ConvNeXt's 3136x384x96 GEMM + GELU 3.22 -> 1.81 ms.  Not the
AVX512-BF16 kernel, which Zen 5 runs: there the same GELU GEMM took 1.02-1.06 ms looked up
against 0.89 computed (measured in an earlier stop; README, bf16 GEMMs).

The answers are those of eager's vector loop (the 65,536 inputs fill whole vectors).  Eager's
scalar loop, which takes the last ``numel mod 32`` elements of a tensor, can round one of them a
bf16 ulp the other way: there the table agrees with eager's other elements, not with that one.

The table is a module constant of ``2 * 65,536 + 2`` bytes: the gather reads 4 bytes at
``2 * index`` and keeps the low half, so the last entry needs two bytes after it.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from llvmlite import ir

from ziggurat.backends.cpu.kernels.unary import UNARY_PARAMS, VECMATH_KINDS
from ziggurat.backends.cpu.llvm_ir import I32, I8P, bytes_constant, constant_global, declare
from ziggurat.dialects.torch.eager_half_floats import every_bit_pattern
from ziggurat.backends.cpu.llvm_ir import instr as _i

I16 = ir.IntType(16)
LANES = 16
V16I16 = ir.VectorType(I16, LANES)
V16I32 = ir.VectorType(I32, LANES)

#: The activations with a table: the transcendental, parameterless ones (the piecewise-linear
#: ones are exact in the epilogue already).
TABLED = frozenset(k for k in VECMATH_KINDS if not UNARY_PARAMS[k])


def has_table(unary: str | None) -> bool:
    return unary in TABLED


def eager_activation(unary: str, x: torch.Tensor) -> torch.Tensor:
    """Eager's ``unary`` of ``x``: the reference interpreter's semantics of the post-op."""
    from ziggurat.dialects.fused import UnaryPostOpAttr
    from ziggurat.ir.interpreter.fused_functions import apply_unary

    with torch.no_grad():
        return apply_unary(UnaryPostOpAttr(unary), x)


def table_bytes(answers: torch.Tensor) -> bytes:
    """A table :func:`look_up` reads: the 16-bit ``answers`` for :func:`every_bit_pattern`,
    little-endian, then two zero bytes (its gather reads 4 bytes at twice the index)."""
    return answers.view(torch.int16).numpy().tobytes() + bytes(2)


@lru_cache(maxsize=None)
def eager_table(unary: str) -> bytes:
    """Eager's bf16 ``unary`` of every bf16 bit pattern (:func:`table_bytes`)."""
    if not has_table(unary):
        raise ValueError(f"no bf16 table for the activation {unary!r}")
    return table_bytes(eager_activation(unary, every_bit_pattern(torch.bfloat16)))


def table_global(module: ir.Module, unary: str) -> ir.GlobalVariable:
    """``module``'s constant holding :func:`eager_table` of ``unary`` (made on first use)."""
    table = bytes_constant(eager_table(unary))
    return constant_global(module, f"zig_bf16_table_{unary}", table.type, lambda: table)


def look_up(b: ir.IRBuilder, table: ir.GlobalVariable, x: ir.Value) -> ir.Value:
    """The table's entries for ``x``, 16-bit inputs as their bits (``codegen.bf16.f32_to_bf16``'s
    result: a NaN is ``0xFFFF``, as eager stores it): ``<16 x i16>`` by AVX-512's ``vpgatherdd``,
    ``<8 x i16>`` by AVX2's (each reads 4 bytes at twice the index and keeps the low half), or
    one ``i16`` by a load (a scalar kernel)."""
    ty = x.type  # pyright: ignore[reportAttributeAccessIssue]
    if not isinstance(ty, ir.VectorType):
        entries = b.bitcast(table, I16.as_pointer())
        return b.load(b.gep(entries, [b.zext(x, ir.IntType(64))], inbounds=True), align=1)
    lanes = ty.count
    words_ty = ir.VectorType(I32, lanes)
    base = _i(b.bitcast(table, I8P))
    if lanes == LANES:
        mask_ty = ir.VectorType(ir.IntType(1), LANES)
        gather = declare(b.module, "llvm.x86.avx512.mask.gather.dpi.512", V16I32, [V16I32, I8P, V16I32, mask_ty, I32])
        args = [ir.Constant(V16I32, None), base, b.zext(x, V16I32), ir.Constant(mask_ty, [1] * LANES), ir.Constant(I32, 2)]
    elif lanes == 8:
        scale = ir.IntType(8)
        gather = declare(b.module, "llvm.x86.avx2.gather.d.d.256", words_ty, [words_ty, I8P, words_ty, words_ty, scale])
        args = [ir.Constant(words_ty, None), base, b.zext(x, words_ty), ir.Constant(words_ty, [-1] * 8), ir.Constant(scale, 2)]
    else:
        raise ValueError(f"a table lookup of {lanes} lanes: 16 (avx512), 8 (avx2) or a scalar")
    return b.trunc(b.call(gather, args), ir.VectorType(I16, lanes))  # pyright: ignore[reportReturnType]
