"""The operand values on which the bf16 dot-product instructions differ from eager.

``tdpbf16ps`` (AMX) and ``vdpbf16ps`` (AVX512-BF16) read a bf16 subnormal (``|x| < 2**-126``)
as zero.  A subnormal's product with an ordinary value is below any tolerance (under
``2**-62`` for a factor under ``2**64``), but with an infinity it is an infinity where the
kernels give ``0 * inf = NaN``, and with a huge factor a value they drop (fuzz seed 134, program
102: ``bmm`` of a ``-9.2e-41`` by ``-inf``, eager ``inf``, the kernels ``NaN``).

So a GEMM whose one operand may hold a subnormal while the other may hold a magnitude of at
least ``2**64`` (infinities and NaNs included) gets an exact path: the kernel scans its run-time
operands when it is called and, only when both kinds are there, computes the products with
float32 FMAs of the converted values (exact for subnormals) instead of the bf16 instructions.
A constant operand (a weight) is classified at compile time: weights that hold neither kind,
which is all of them in practice, make the scan and the exact path disappear.
"""

from __future__ import annotations

import torch
from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.backends.cpu.llvm_ir import I1, I32, I64, for_range, gep, i64, masked_load
from ziggurat.backends.cpu.llvm_ir import instr as _i

#: An operand read at run time: the kernel scans it when it is called.
SCAN = -1
#: The operand holds a bf16 subnormal.
SUBNORMAL = 1
#: The operand holds a magnitude of at least 2**64, an infinity or a NaN.
HUGE = 2

_EXPONENT = 0x7F80
_MANTISSA = 0x007F
_HUGE_FIELD = (127 + 64) << 7  # the exponent field of 2**64
LANES = 32

I16 = ir.IntType(16)
V16 = ir.VectorType(I16, LANES)
V1 = ir.VectorType(I1, LANES)


#: Elements :func:`specials_of` classifies at a time: its temporaries stay a few MB (over a whole
#: tensor in int32 they were ~7x its size: 0.5 GB for GPT-2's tied LM head, the compile's peak).
SPECIALS_CHUNK = 1 << 20


def specials_of(t: torch.Tensor) -> int:
    """The :data:`SUBNORMAL` and :data:`HUGE` bits of a bf16 tensor's values."""
    if t.dtype != torch.bfloat16:
        raise TypeError(f"specials_of expects a bf16 tensor, got {t.dtype}")
    bits = t.contiguous().view(-1).view(torch.int16)
    found = 0
    for start in range(0, bits.numel(), SPECIALS_CHUNK):
        chunk = bits[start:start + SPECIALS_CHUNK]
        exponent = chunk & _EXPONENT  # the fields are non-negative in int16
        if not found & SUBNORMAL and bool(((exponent == 0) & ((chunk & _MANTISSA) != 0)).any()):
            found |= SUBNORMAL
        if not found & HUGE and bool((exponent >= _HUGE_FIELD).any()):
            found |= HUGE
        if found == SUBNORMAL | HUGE:
            break
    return found


def checked_specials(owner: str, name: str, v: object) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not SCAN <= v <= SUBNORMAL | HUGE:
        raise GemmSpecError(f"{owner}.{name} must be {SCAN} (scanned at run time) or a mask of "
                         f"{SUBNORMAL} (subnormal) and {HUGE} (huge), got {v!r}")
    return v


def may_hold(specials: int, kind: int) -> bool:
    return specials == SCAN or bool(specials & kind)


def needs_exact_path(a: int, b: int) -> bool:
    """Whether operands of these classes may meet a subnormal with a huge value."""
    return (may_hold(a, SUBNORMAL) and may_hold(b, HUGE)) or (may_hold(a, HUGE) and may_hold(b, SUBNORMAL))


def emit_scan(b: ir.IRBuilder, base: ir.Value, batches: int, batch_stride: int, rows: int, row_stride: int,
              cols: int) -> ir.Value:
    """The :data:`SUBNORMAL` | :data:`HUGE` bits (an ``i64``) of the bf16 elements
    ``base[t*batch_stride + r*row_stride + c]`` for ``t < batches``, ``r < rows``, ``c < cols``,
    32 lanes at a time (the last ones of a row masked: nothing past ``cols`` is read)."""
    acc = [b.alloca(V1, name=f"scan.{kind}") for kind in ("sub", "huge")]
    for slot in acc:
        b.store(ir.Constant(V1, None), slot)
    exponent_mask, mantissa_mask = llvm_ir.splat_constant(V16, _EXPONENT), llvm_ir.splat_constant(V16, _MANTISSA)
    zero, huge = ir.Constant(V16, None), llvm_ir.splat_constant(V16, _HUGE_FIELD)

    def classify(v: ir.Value) -> None:
        exponent = _i(b.and_(v, exponent_mask))
        sub = _i(b.and_(_i(b.icmp_unsigned("==", exponent, zero)),
                        _i(b.icmp_unsigned("!=", _i(b.and_(v, mantissa_mask)), zero))))
        big = _i(b.icmp_unsigned(">=", exponent, huge))
        for slot, found in zip(acc, (sub, big), strict=True):
            b.store(_i(b.or_(_i(b.load(slot)), found)), slot)

    full, tail = divmod(cols, LANES)
    tail_mask = ir.Constant(V1, [1 if i < tail else 0 for i in range(LANES)])
    with for_range(b, 0, batches * rows, name="scan.row") as row:
        t, r = llvm_ir.udiv(b, row, i64(rows)), llvm_ir.urem(b, row, i64(rows))
        start = gep(b, base, llvm_ir.add(b, llvm_ir.mul(b, t, i64(batch_stride)), llvm_ir.mul(b, r, i64(row_stride))))
        if full:
            with for_range(b, 0, full, name="scan.col") as j:
                ptr = _i(b.bitcast(gep(b, start, llvm_ir.mul(b, j, i64(LANES))), V16.as_pointer()))
                classify(_i(b.load(ptr, align=2)))
        if tail:
            classify(masked_load(b, gep(b, start, full * LANES), tail_mask, V16, 2))
    bits = [_i(b.zext(_i(b.icmp_unsigned("!=", _i(b.bitcast(_i(b.load(slot)), I32)), ir.Constant(I32, 0))), I64))
            for slot in acc]
    return _i(b.or_(bits[0], _i(b.shl(bits[1], i64(1)))))
