"""int8 GEMM on AVX512-VNNI (``vpdpbusd``) or AMX-INT8 (``tdpbusd``): uint8 activations times int8
weights, int32 sums.

:func:`emit_int8_gemm` adds one externally visible function with the float32 GEMM's C ABI::

    void <symbol>(const float *a, const int8_t *b_packed, float *c,
                  const float *bias, const float *other, void *workspace [, int64_t m]);

(``m`` with ``spec.m_runtime``: at most the spec's ``m``, for which the workspace is sized; a
range build's dynamic batch or sequence.)

``a`` holds dequantized activations, ``(u - zero_point) * a_scale`` for uint8 ``u`` (what a
PT2E ``quantize -> dequantize`` pair computes).  The kernel first requantizes them into the
workspace (``u = round(a / a_scale) + zero_point``: exact, as ``a`` is an integer times the
scale), one row of ``ldq`` bytes per row of A, then computes ``sum_k u[i, k] * B[k, j]`` in
int32 with ``vpdpbusd`` over the packed ``B`` (``dialects/fused/pack_int8.py``: the epilogue
table, then panels of 4 k per lane).  The epilogue subtracts the zero point's correction,
scales by ``a_scale * w_scale[j]`` and adds the bias in one float64 FMA (the sum, both scales,
their product and the bias are exact there; the FMA rounds once, at 2**-53), rounds to float32
once, applies the post-ops in float32 (the last may be PT2E's quantize -> dequantize pair of
the output, ``requantize``, as eager computes it: :func:`requantize_f32`) and stores float32.
So the product is the real-number value of the quantized operands correctly rounded to
float32 (but where a float64 rounding lands it on a float32 tie, about 2**-28 of the time);
eager's ``linear`` of the dequantized operands rounds each operand and every partial sum,
and a float32 epilogue (``sum * float32(a_scale * w_scale)``) was a float32 ulp off now and
then, which a following quantizer turned into a quantum (fuzz seed 41, program 90).

Tasks are (32-column panel, group of up to 8 rows), panel-major, run in parallel; a task
holds 16 int32 accumulators in registers over the whole K, and at each k prefetches the next
panel's two lines into L2 (a model's weights come cold from memory: 128x2304x768 over 64 MB of
weights, 1 thread, 861 -> 948-981 GOP/s; no change with the weights in cache).  With ``a_conv`` A is the implicit
im2col of a convolution over an NHWC input: the requantizing pass gathers each output pixel's
taps into its row (a tap in the padding is the zero point), so a KxK convolution is this GEMM.

With ``kernel="amx"`` the tasks are (32-column panel, block of up to 32 rows) instead: the
block's sums come from AMX tiles into a 32x32 int32 scratch on the task's stack
(:mod:`~ziggurat.backends.cpu.kernels.gemm_int8_amx`), and the same epilogue then runs over
each group of 8 rows with its accumulators read from there.  Both kernels sum the same
integers exactly, so their outputs are the same bits.  The AMX entry's symbol ends in
``amx.AMX_SYMBOL_SUFFIX``: loading its object code asks the OS for the tile state first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels.gemm import gc_paused
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_int8_amx import BLOCK as AMX_BLOCK
from ziggurat.backends.cpu.kernels.gemm_int8_amx import AmxBlockProducts
from ziggurat.backends.cpu.kernels.gemm_spec import (
    GemmSpecError,
    checked_dequantization,
    checked_epilogue,
    checked_leading_dims,
    checked_other_strides,
    checked_positive,
    checked_quantized_output,
    spec_symbol,
)
from ziggurat.backends.cpu.kernels.quantized_lanes import (
    dequantized_u8,
    load_u8,
    masked_load,
    masked_load_u8,
    masked_store,
    masked_store_u8,
    quantize_u8,
    quantized_bytes,
    requantize_f32,
    store_u8,
)
from ziggurat.backends.cpu.kernels.staged_epilogue import staged_rows, stages
from ziggurat.backends.cpu.kernels.unary import emit_unary
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32, F32P, I8P, I32, I64, VOID, declare, for_range, gep, i64, splat
from ziggurat.backends.cpu.llvm_ir import instr as _i
from ziggurat.backends.cpu.vecmath.builder import f32_round as _f32
from ziggurat.dialects.fused.pack_int8 import K_GROUP, PANEL, padded_k, panels, table_floats
from ziggurat.backends.cpu.threads import default_threads, emit_parallel_for

I8 = ir.IntType(8)
V16F = ir.VectorType(F32, 16)
V16D = ir.VectorType(ir.DoubleType(), 16)
V16I32 = ir.VectorType(I32, 16)
V16I8 = ir.VectorType(I8, 16)
V64I8 = ir.VectorType(I8, 64)
ROW_GROUP = 8  # rows of accumulators a task holds (2 vectors each)
#: A's bytes past which the kernel runs row blocks (each requantized or gathered, then multiplied
#: by every panel while it is in the core's cache) instead of requantizing all of A first.
BLOCKED_A_BYTES = 1 << 21
#: the bytes of A one row block holds (its rows: at most 256, a multiple of ROW_GROUP)
BLOCK_BYTES = 384 << 10
#: fewer rows per block (a K past 3072) re-read B more often than two phases re-read A
#: (ResNet-50's last 3x3 convolutions, K = 4608: 0.85-0.97x as row blocks)
MIN_BLOCK_ROWS = 128
#: ``K * 255 * 128`` must fit an int32 sum.
MAX_K = 65536
KERNELS = ("vnni", "amx")


def int8_kernel_available(isa: Isa) -> bool:
    """Whether code for ``isa`` on this host may take the kernel: avx512 and AVX512-VNNI."""
    from ziggurat.backends.cpu.isa import isa_has

    return isa == Isa.AVX512 and isa_has(isa, "avx512vnni")


@dataclass(frozen=True)
class Int8GemmSpec:
    """``C[i, j] = epilogue(a_scale * w_scale[j] * sum_k (u[i, k] - zp) * B[k, j] + bias[j])``."""

    m: int
    n: int
    k: int
    a_scale: float
    a_zero_point: int
    lda: int | None = None
    ldc: int | None = None
    threads: int | None = None
    unary: str | None = None
    unary_params: Mapping[str, float | None] | tuple[tuple[str, float | None], ...] = ()
    binary: str | None = None
    alpha: float = 1.0
    other_strides: tuple[int, int] | None = None
    binary_first: bool = False
    bias: bool = False
    #: A as the implicit im2col of a convolution over an NHWC float32 input:
    #: ``(H, W, C, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)``; row ``i`` is the output pixel
    #: ``(i // (OH*OW), i // OW % OH, i % OW)``, column ``k`` the tap ``k // C`` (row-major over
    #: kh x kw) of channel ``k % C``; taps in the padding read 0.0.
    a_conv: tuple[int, ...] | None = None
    #: ``(scale, zero_point, quant_min, quant_max)``: the output quantized and dequantized per
    #: tensor after the other post-ops (``#fused.requantize``).
    requantize: tuple[float, int, int, int] | None = None
    #: A holds the uint8 values themselves (``lda`` in bytes; a convolution's NHWC input too): the
    #: first phase copies them instead of requantizing floats.
    a_u8: bool = False
    #: C receives the requantized uint8 values (``requantize``'s quantize without its dequantize;
    #: ``ldc`` in bytes), not floats.
    store_u8: bool = False
    #: With ``a_conv``: the input is NCHW, not NHWC (a few channels, as a model's RGB input: each
    #: tap gathers its ``C`` channels, one plane apart, instead of copying a transposed input)
    a_nchw: bool = False
    #: ``(scale, zero_point)``: the binary post-op's ``other`` holds uint8 values ``q``, read as
    #: ``(q - zero_point) * scale`` in float32 (the dequantize eager computed).
    other_quantization: tuple[float, int] | None = None
    #: ``m`` is the call's last argument, at most the spec's (a convolution's: a multiple of
    #: ``OH * OW``, its batch times the pixels of an image)
    m_runtime: bool = False
    #: the schedule: row blocks (True), all of A requantized first and then (panel, row group)
    #: tasks (False), or by size (None: row blocks where A is past ``BLOCKED_A_BYTES`` and has
    #: two blocks per thread; with ``m_runtime`` decided at each call)
    blocked: bool | None = None
    #: the products' instructions: ``"vnni"`` (``vpdpbusd``, 8-row groups in registers) or
    #: ``"amx"`` (``tdpbusd`` tiles over 32-row blocks, :mod:`.gemm_int8_amx`); the same int32
    #: sums, so the same bits
    kernel: str = "vnni"
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        for what in ("m", "n", "k"):
            checked_positive("Int8GemmSpec", what, getattr(self, what))
        if self.k > MAX_K:
            raise GemmSpecError(f"Int8GemmSpec: K={self.k} > {MAX_K} could overflow the int32 sums")
        lda, ldc = checked_leading_dims("Int8GemmSpec", self.lda, self.ldc, self.k, self.n)
        s(self, "lda", lda)
        s(self, "ldc", ldc)
        s(self, "threads", default_threads() if self.threads is None else checked_positive("Int8GemmSpec", "threads", self.threads))
        if not (isinstance(self.a_scale, float) and math.isfinite(self.a_scale) and self.a_scale > 0):
            raise GemmSpecError(f"Int8GemmSpec.a_scale must be a positive finite float, got {self.a_scale!r}")
        if not isinstance(self.a_zero_point, int) or not 0 <= self.a_zero_point <= 255:
            raise GemmSpecError(f"Int8GemmSpec.a_zero_point must be a uint8, got {self.a_zero_point!r}")
        params, alpha = checked_epilogue("Int8GemmSpec", self.unary, self.unary_params, self.binary, self.alpha)
        s(self, "unary_params", params)
        s(self, "alpha", alpha)
        s(self, "other_strides", checked_other_strides("Int8GemmSpec", self.binary, self.other_strides, self.n))
        if self.binary_first and (self.binary is None or self.unary is None):
            s(self, "binary_first", False)
        if self.a_conv is not None:
            conv = tuple(self.a_conv)
            if len(conv) != 13 or not all(isinstance(v, int) and v >= 0 for v in conv):
                raise GemmSpecError(f"Int8GemmSpec.a_conv must be 13 non-negative ints, got {self.a_conv!r}")
            _, _, c, kh, kw, sh, sw, _, _, dh, dw, oh, ow = conv
            if min(c, kh, kw, sh, sw, dh, dw, oh, ow) < 1 or self.k != c * kh * kw or self.m % (oh * ow):
                raise GemmSpecError(f"Int8GemmSpec.a_conv {conv} does not fit m={self.m}, k={self.k}")
            s(self, "a_conv", conv)
        if self.a_nchw and (self.a_conv is None or self.a_conv[2] > 16):
            raise GemmSpecError("Int8GemmSpec.a_nchw takes a convolution of at most 16 input channels")
        s(self, "requantize", checked_quantized_output("Int8GemmSpec", self.requantize, self.store_u8))
        if self.other_quantization is not None and self.binary is None:
            raise GemmSpecError("Int8GemmSpec.other_quantization needs a binary post-op")
        s(self, "other_quantization", checked_dequantization("Int8GemmSpec.other_quantization", self.other_quantization))
        if self.kernel not in KERNELS:
            raise GemmSpecError(f"Int8GemmSpec.kernel must be one of {KERNELS}, got {self.kernel!r}")

    @property
    def symbol(self) -> str:
        return self.name if self.name is not None else spec_symbol("zig_int8_gemm_", self)

    @property
    def entry_symbol(self) -> str:
        """The entry function's name (:func:`~ziggurat.backends.cpu.kernels.amx.entry_symbol`)."""
        return amx.entry_symbol(self.symbol, self.kernel)

    @property
    def ldq(self) -> int:
        """Bytes per requantized row of A in the workspace: K rounded up to 16, for the AMX
        kernel at the stride its tile loads read best (:func:`~ziggurat.backends.cpu.kernels.amx.tile_row_stride`;
        the VNNI kernel reads A 4 bytes a row at a time)."""
        row = -(-self.k // 16) * 16
        return amx.tile_row_stride(row) if self.kernel == "amx" else row

    @property
    def planar_byte_rows(self) -> bool:
        """``a_nchw`` taps gathered as rows of bytes (``dw == 1``, ``C <= 4``, ``kw <= 16``): a
        row of ``kw`` taps is ``kw`` consecutive bytes of each of the ``C`` planes."""
        if self.a_conv is None or not self.a_nchw:
            return False
        _, _, c, _, kw, _, _, _, _, _, dw, _, _ = self.a_conv
        return dw == 1 and c <= 4 and kw <= 16

    @property
    def planes_quantized_first(self) -> bool:
        """A float32 NCHW input of a few channels (an RGB stem) whose taps the byte gather takes:
        its planes are quantized to uint8 once, vectorized, into the workspace past A, and then
        gathered as bytes (``a_u8``'s rows of taps), where each tap's ``C`` channels were quantized
        as they were gathered: a 7x7/2 stem over a 224x224 float32 RGB image (12544x64x147, AMX,
        1 thread, Emerald Rapids, the two kernels alternated in one process) 2.85 -> 1.15 ms.
        (A model whose input pair is stored as uint8, ResNet-50's, takes ``a_u8`` already.)"""
        return self.planar_byte_rows and not self.a_u8

    @property
    def planes_offset(self) -> int:
        """Where the quantized planes start in the workspace (64-byte aligned, past A's rows)."""
        return -(-(self.m * self.ldq + 64) // 64) * 64

    @property
    def workspace_bytes(self) -> int:
        if self.planes_quantized_first:
            assert self.a_conv is not None
            h, w, c, oh, ow = self.a_conv[0], self.a_conv[1], self.a_conv[2], self.a_conv[11], self.a_conv[12]
            images = -(-self.m // (oh * ow))
            return self.planes_offset + images * c * h * w + 64
        return self.m * self.ldq + 64

    @property
    def block_rows(self) -> int:
        """Rows of A per row block (``blocked``)."""
        return max(ROW_GROUP, min(256, BLOCK_BYTES // self.ldq // ROW_GROUP * ROW_GROUP))

    def blocked_at(self, m: int) -> bool:
        """Whether a call of ``m`` rows runs row blocks."""
        if self.blocked is not None:
            return self.blocked
        return m * self.ldq > BLOCKED_A_BYTES and self.block_rows >= MIN_BLOCK_ROWS \
            and m >= 2 * (self.threads or 1) * self.block_rows

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k


def emit_int8_gemm(module: ir.Module, spec: Int8GemmSpec) -> ir.Function:
    if not isinstance(spec, Int8GemmSpec):
        raise GemmSpecError(f"emit_int8_gemm expects an Int8GemmSpec, got {type(spec).__name__}")
    if spec.entry_symbol in module.globals:
        raise GemmSpecError(f"module already has a symbol named {spec.entry_symbol!r}")
    with gc_paused():
        return _Emitter(module, spec).emit()


class _Emitter:
    def __init__(self, module: ir.Module, spec: Int8GemmSpec) -> None:
        self.module = module
        self.spec = spec
        self.vec = VecOps(module, Isa.AVX512)
        self.lda: int = spec.lda if spec.lda is not None else spec.k
        self.ldc: int = spec.ldc if spec.ldc is not None else spec.n
        self.groups = padded_k(spec.k) // K_GROUP
        self.row_groups = -(-spec.m // ROW_GROUP)
        self.tiles = AmxBlockProducts(module, spec.symbol, spec.k, spec.ldq) if spec.kernel == "amx" else None

    def emit(self) -> ir.Function:
        s = self.spec
        fn = ir.Function(self.module, ir.FunctionType(VOID, [F32P] * 6 + [I64] * s.m_runtime), name=s.entry_symbol)
        for arg in fn.args[:3]:
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        a, c, bias, other = fn.args[0], fn.args[2], fn.args[3], fn.args[4]
        operand = _i(b.bitcast(fn.args[1], I8P))
        table = _i(b.bitcast(operand, F32P))
        bp = gep(b, operand, 4 * table_floats(s.n))
        ws = _i(b.bitcast(fn.args[5], I8P))
        rows: int | ir.Value = fn.args[6] if s.m_runtime else s.m
        if s.planes_quantized_first:
            a = self._quantize_planes(b, a, ws, rows)
        if not s.m_runtime:
            if s.blocked_at(s.m):
                self._blocked(b, a, ws, bp, c, table, bias, other, i64(s.m))
            else:
                self._two_phases(b, a, ws, bp, c, table, bias, other, s.m)
        elif s.blocked is not None or s.block_rows < MIN_BLOCK_ROWS:
            (self._blocked if s.blocked else self._two_phases)(b, a, ws, bp, c, table, bias, other, fn.args[6])
        else:  # the schedule a static call of this m takes (blocked_at)
            rows = fn.args[6]
            big = _i(b.and_(_i(b.icmp_signed(">", llvm_ir.mul(b, rows, i64(s.ldq)), i64(BLOCKED_A_BYTES))),
                            _i(b.icmp_signed(">=", rows, i64(2 * (s.threads or 1) * s.block_rows)))))
            with b.if_else(big) as (then, otherwise):
                with then:
                    self._blocked(b, a, ws, bp, c, table, bias, other, rows)
                with otherwise:
                    self._two_phases(b, a, ws, bp, c, table, bias, other, rows)
        b.ret_void()
        return fn

    def _phase1(self) -> Any:
        s = self.spec
        if s.a_conv is None:
            return self._quantize_rows
        return self._gather_planes if s.a_nchw else self._gather_rows

    def _two_phases(self, b: ir.IRBuilder, a: ir.Value, ws: ir.Value, bp: ir.Value, c: ir.Value, table: ir.Value,
                    bias: ir.Value, other: ir.Value, rows: int | ir.Value) -> None:
        """All of A requantized (or gathered) into the workspace, then (panel, row group) tasks,
        panel-major: few rows still split the columns over the threads."""
        s = self.spec
        if self.tiles is not None:
            self._amx_two_phases(b, a, ws, bp, c, table, bias, other, rows)
            return
        groups: int | ir.Value = self.row_groups
        if not isinstance(rows, int):
            groups = llvm_ir.udiv(b, llvm_ir.add(b, rows, i64(ROW_GROUP - 1)), i64(ROW_GROUP))
        emit_parallel_for(self.module, b, rows, self._phase1(), s.threads or 1, captures=[a, ws],
                          name=f"{s.symbol}.quantize")
        tasks = panels(s.n) * groups if isinstance(groups, int) else llvm_ir.mul(b, groups, i64(panels(s.n)))
        captures = [ws, bp, c, table, bias, other] + ([rows, groups] if not isinstance(rows, int) else [])
        emit_parallel_for(self.module, b, tasks, self._task, s.threads or 1, captures=captures,
                          name=f"{s.symbol}.tasks")

    def _blocked(self, b: ir.IRBuilder, a: ir.Value, ws: ir.Value, bp: ir.Value, c: ir.Value, table: ir.Value,
                 bias: ir.Value, other: ir.Value, rows: ir.Value) -> None:
        """Row blocks of ``block_rows``: each task requantizes (or gathers) its rows, then runs every
        panel over them while they are in its cache; A is read from memory once."""
        s = self.spec
        rb = s.block_rows
        blocks = llvm_ir.udiv(b, llvm_ir.add(b, rows, i64(rb - 1)), i64(rb))
        emit_parallel_for(self.module, b, blocks, self._block_task, s.threads or 1,
                          captures=[a, ws, bp, c, table, bias, other, rows], name=f"{s.symbol}.blocks")

    def _block_task(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                    caps: list[ir.Value]) -> None:
        s = self.spec
        a, ws, bp, c, table, bias, other, rows = caps
        rb = s.block_rows
        cs = self._amx_scratch(b) if self.tiles is not None else None
        with for_range(b, begin, end, name="block") as block:
            r0 = llvm_ir.mul(b, block, i64(rb))
            r1 = llvm_ir.add(b, r0, i64(rb))
            r1 = _i(b.select(_i(b.icmp_signed("<", rows, r1)), rows, r1))
            self._phase1()(b, r0, r1, tid, [a, ws])
            if cs is not None:
                self._amx_row_block(b, r0, r1, rows, cs, ws, bp, c, table, bias, other)
            else:
                g0 = llvm_ir.udiv(b, r0, i64(ROW_GROUP))
                g1 = llvm_ir.udiv(b, llvm_ir.add(b, r1, i64(ROW_GROUP - 1)), i64(ROW_GROUP))
                with for_range(b, 0, panels(s.n), name="panel") as panel:
                    with for_range(b, g0, g1, name="group") as group:
                        self._panel_group(b, panel, group, ws, bp, c, table, bias, other, rows)

    # -- phase 1: A -> uint8 ------------------------------------------------------------------
    def _quantize_rows(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                       caps: list[ir.Value]) -> None:
        del tid
        s, vec = self.spec, self.vec
        a, ws = caps
        full, tail = s.k // 16, s.k % 16

        if s.a_u8:
            a = _i(b.bitcast(a, I8P))

        def one(row_a: ir.Value, row_q: ir.Value, kk: ir.Value | int, lanes: int | None) -> None:
            src = gep(b, row_a, llvm_ir.mul(b, kk, i64(16)) if not isinstance(kk, int) else kk * 16)
            if s.a_u8:
                q = load_u8(self.module, b, src, lanes)
            else:
                q = quantize_u8(self.module, b, vec, vec.load(b, src, lanes), s.a_scale, s.a_zero_point)
            store_u8(self.module, b, q, gep(b, row_q, llvm_ir.mul(b, kk, i64(16)) if not isinstance(kk, int) else kk * 16))

        with for_range(b, begin, end, name="qrow") as row:
            row_a = gep(b, a, llvm_ir.mul(b, row, i64(self.lda)))
            row_q = gep(b, ws, llvm_ir.mul(b, row, i64(s.ldq)))
            if full:
                with for_range(b, 0, full, name="qk") as kk:
                    one(row_a, row_q, kk, None)
            if tail:
                one(row_a, row_q, full, tail)

    def _gather_rows(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                     caps: list[ir.Value]) -> None:
        """Implicit im2col (``a_conv``): each row's taps, ``C`` channels each, quantized from the
        NHWC input; a tap in the padding is the zero point (the quantized 0.0)."""
        del tid
        s, vec = self.spec, self.vec
        assert s.a_conv is not None
        h, w, c, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = s.a_conv
        x, ws = caps
        if s.a_u8:
            x = _i(b.bitcast(x, I8P))
        zp_bytes = self._zero_point_bytes(16)

        def run(src: ir.Value | None, dst: ir.Value, count: int) -> None:
            """``count`` floats from ``src`` quantized into ``dst`` (None: the zero point)."""
            full, tail = count // 16, count % 16

            def one(cc: ir.Value | int, lanes: int | None) -> None:
                off = llvm_ir.mul(b, cc, i64(16)) if not isinstance(cc, int) else cc * 16
                if src is None:
                    q = zp_bytes
                elif s.a_u8:
                    q = load_u8(self.module, b, gep(b, src, off), lanes)
                else:
                    q = quantize_u8(self.module, b, vec, vec.load(b, gep(b, src, off), lanes), s.a_scale, s.a_zero_point)
                # the next tap's bytes (or the next row's) are not this one's to write
                store_u8(self.module, b, q, gep(b, dst, off), lanes)

            if full:
                with for_range(b, 0, full, name="qc") as cc:
                    one(cc, None)
            if tail:
                one(full, tail)

        with for_range(b, begin, end, name="qrow") as row:
            image, oy, ox, row_q = self._output_pixel(b, row, ws)
            ix0 = llvm_ir.add(b, llvm_ir.mul(b, ox, i64(sw)), i64(-pw))
            for i in range(kh):
                iy = llvm_ir.add(b, llvm_ir.mul(b, oy, i64(sh)), i64(i * dh - ph))
                line = llvm_ir.mul(b, llvm_ir.add(b, llvm_ir.mul(b, image, i64(h)), iy), i64(w))

                def taps() -> None:
                    for j in range(kw):
                        ix = llvm_ir.add(b, ix0, i64(j * dw))
                        dst = gep(b, row_q, (i * kw + j) * c)
                        with b.if_else(_i(b.and_(_inside(b, iy, h), _inside(b, ix, w)))) as (then, otherwise):
                            with then:
                                run(gep(b, x, llvm_ir.mul(b, llvm_ir.add(b, line, ix), i64(c))), dst, c)
                            with otherwise:
                                run(None, dst, c)

                if dw != 1 or kw == 1:
                    taps()
                    continue
                # a row of taps is kw*C consecutive floats of the NHWC input when it is all inside
                whole = _i(b.and_(_inside(b, iy, h), _i(b.and_(_inside(b, ix0, w), _inside(b, llvm_ir.add(b, ix0, i64(kw - 1)), w)))))
                with b.if_else(whole) as (then, otherwise):
                    with then:
                        run(gep(b, x, llvm_ir.mul(b, llvm_ir.add(b, line, ix0), i64(c))), gep(b, row_q, i * kw * c), kw * c)
                    with otherwise:
                        taps()

    def _zero_point_bytes(self, count: int) -> ir.Constant:
        """``count`` bytes of the input's zero point (the quantized 0.0: a tap in the padding)."""
        zp = self.spec.a_zero_point
        return ir.Constant(ir.VectorType(I8, count), [zp - 256 if zp > 127 else zp] * count)

    def _output_pixel(self, b: ir.IRBuilder, row: ir.Value, ws: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
        """Row ``row`` of the implicit im2col: its image, output row and column, and its bytes in ``ws``."""
        s = self.spec
        assert s.a_conv is not None
        oh, ow = s.a_conv[11], s.a_conv[12]
        image = llvm_ir.udiv(b, row, i64(oh * ow))
        oy = llvm_ir.urem(b, llvm_ir.udiv(b, row, i64(ow)), i64(oh))
        ox = llvm_ir.urem(b, row, i64(ow))
        return image, oy, ox, gep(b, ws, llvm_ir.mul(b, row, i64(s.ldq)))

    def _quantize_planes(self, b: ir.IRBuilder, a: ir.Value, ws: ir.Value, rows: int | ir.Value) -> ir.Value:
        """The images of a call (``rows`` output pixels) quantized to uint8 as :func:`quantize_u8`
        does each element, a plane row at a time, into the workspace past A; returns them (as
        the ``F32P`` the phases capture) for the byte gather."""
        s = self.spec
        assert s.a_conv is not None
        h, w, c, oh, ow = s.a_conv[0], s.a_conv[1], s.a_conv[2], s.a_conv[11], s.a_conv[12]
        planes = gep(b, ws, s.planes_offset)
        images: int | ir.Value = -(-rows // (oh * ow)) if isinstance(rows, int) else \
            llvm_ir.udiv(b, llvm_ir.add(b, rows, i64(oh * ow - 1)), i64(oh * ow))
        plane_rows = images * c * h if isinstance(images, int) else llvm_ir.mul(b, images, i64(c * h))
        emit_parallel_for(self.module, b, plane_rows, self._quantize_plane_rows, s.threads or 1, captures=[a, planes],
                          name=f"{s.symbol}.planes")
        return _i(b.bitcast(planes, F32P))

    def _quantize_plane_rows(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                             caps: list[ir.Value]) -> None:
        del tid
        s, vec = self.spec, self.vec
        assert s.a_conv is not None
        w = s.a_conv[1]
        x, planes = caps
        planes = _i(b.bitcast(planes, I8P))
        with for_range(b, begin, end, name="prow") as row:
            src = gep(b, x, llvm_ir.mul(b, row, i64(w)))
            dst = gep(b, planes, llvm_ir.mul(b, row, i64(w)))
            for j in range(0, w, 16):  # a tail stores its bytes only: the next row's follow
                lanes = min(16, w - j)
                q = quantize_u8(self.module, b, vec, vec.load(b, gep(b, src, j), lanes), s.a_scale, s.a_zero_point)
                store_u8(self.module, b, q, gep(b, dst, j), lanes)

    def _gather_planes(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                       caps: list[ir.Value]) -> None:
        """Implicit im2col of an NCHW input (``a_nchw``, ``C <= 16``): each tap's ``C`` channels,
        one plane apart, into one vector (quantized as :func:`quantize_u8`, or bytes), stored as
        the tap's ``C`` bytes; a tap in the padding is the zero point."""
        del tid
        s, vec = self.spec, self.vec
        assert s.a_conv is not None
        h, w, c, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = s.a_conv
        x, ws = caps
        elem = I8 if s.a_u8 or s.planes_quantized_first else F32
        x = _i(b.bitcast(x, elem.as_pointer()))
        zp_bytes = self._zero_point_bytes(16)

        if s.planar_byte_rows and elem == I8:
            self._gather_plane_rows(b, begin, end, x, ws)
            return
        with for_range(b, begin, end, name="qrow") as row:
            image, oy, ox, row_q = self._output_pixel(b, row, ws)
            planes = gep(b, x, llvm_ir.mul(b, image, i64(c * h * w)))
            for i in range(kh):
                iy = llvm_ir.add(b, llvm_ir.mul(b, oy, i64(sh)), i64(i * dh - ph))
                for j in range(kw):
                    ix = llvm_ir.add(b, llvm_ir.mul(b, ox, i64(sw)), i64(j * dw - pw))
                    dst = gep(b, row_q, (i * kw + j) * c)
                    with b.if_else(_i(b.and_(_inside(b, iy, h), _inside(b, ix, w)))) as (then, otherwise):
                        with then:
                            at = gep(b, planes, llvm_ir.add(b, llvm_ir.mul(b, iy, i64(w)), ix))
                            lanes: ir.Value = ir.Constant(ir.VectorType(elem, 16), None)
                            for ch in range(c):
                                lanes = _i(b.insert_element(lanes, _i(b.load(gep(b, at, ch * h * w))), I32(ch)))
                            q = lanes if s.a_u8 else quantize_u8(self.module, b, vec, lanes, s.a_scale, s.a_zero_point)
                            store_u8(self.module, b, q, dst, c)
                        with otherwise:
                            store_u8(self.module, b, zp_bytes, dst, c)

    def _gather_plane_rows(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, x: ir.Value, ws: ir.Value) -> None:
        """``a_nchw`` of uint8 values, ``C <= 4``, ``kw <= 16``, ``dw == 1``: a row of ``kw`` taps is ``kw`` consecutive
        bytes of each of the ``C`` planes, loaded (masked to the columns inside the image; the
        others read as the zero point), interleaved channel-minor by one shuffle and stored as the
        row's ``kw * C`` bytes.  A KxK stem over an RGB input stored 3 bytes per tap before."""
        s = self.spec
        assert s.a_conv is not None
        h, w, c, kh, kw, sh, sw, ph, pw, dh, _, oh, ow = s.a_conv
        lanes, width = 16, 64
        zp_lanes, zp_wide = self._zero_point_bytes(lanes), self._zero_point_bytes(width)
        taps = ir.Constant(ir.VectorType(I64, lanes), [j if j < kw else -(1 << 40) for j in range(lanes)])
        # channel-minor: byte j*c + ch of the row is tap j of plane ch (the planes concatenated)
        order = [(t % c) * lanes + t // c if t < kw * c else 0 for t in range(width)]

        with for_range(b, begin, end, name="qrow") as row:
            image, oy, ox, row_q = self._output_pixel(b, row, ws)
            planes = gep(b, x, llvm_ir.mul(b, image, i64(c * h * w)))
            ix0 = llvm_ir.add(b, llvm_ir.mul(b, ox, i64(sw)), i64(-pw))
            cols = _i(b.add(splat(b, ix0, ir.VectorType(I64, lanes)), taps))
            inside = _i(b.and_(_i(b.icmp_signed(">=", cols, ir.Constant(ir.VectorType(I64, lanes), [0] * lanes))),
                               _i(b.icmp_signed("<", cols, ir.Constant(ir.VectorType(I64, lanes), [w] * lanes)))))
            for i in range(kh):
                iy = llvm_ir.add(b, llvm_ir.mul(b, oy, i64(sh)), i64(i * dh - ph))
                dst = gep(b, row_q, i * kw * c)
                with b.if_else(_inside(b, iy, h)) as (then, otherwise):
                    with then:
                        # masked-off lanes are not read: the address may lie before the plane
                        start = llvm_ir.add(b, llvm_ir.mul(b, iy, i64(w)), ix0)
                        loaded = [masked_load_u8(self.module, b, gep(b, planes, llvm_ir.add(b, start, i64(ch * h * w))),
                                                 inside, zp_lanes) for ch in range(c)]
                        while len(loaded) < 4:
                            loaded.append(zp_lanes)
                        low = _i(b.shuffle_vector(loaded[0], loaded[1], ir.Constant(ir.VectorType(I32, 32), list(range(32)))))
                        high = _i(b.shuffle_vector(loaded[2], loaded[3], ir.Constant(ir.VectorType(I32, 32), list(range(32)))))
                        whole = _i(b.shuffle_vector(low, high, ir.Constant(ir.VectorType(I32, width), list(range(width)))))
                        row_bytes = _i(b.shuffle_vector(whole, whole, ir.Constant(ir.VectorType(I32, width), order)))
                        store_u8(self.module, b, row_bytes, dst, kw * c)
                    with otherwise:
                        store_u8(self.module, b, zp_wide, dst, kw * c)

    # -- phase 2: products and epilogue --------------------------------------------------------
    def _task(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        """(panel, row group) tasks, ``caps``: the operands, and the call's rows and row groups
        where they are run-time values."""
        del tid
        ws, bp, c, table, bias, other = caps[:6]
        runtime = len(caps) > 6
        with for_range(b, begin, end, name="task") as t:
            groups = caps[7] if runtime else i64(self.row_groups)
            panel = llvm_ir.udiv(b, t, groups)
            group = llvm_ir.urem(b, t, groups)
            self._panel_group(b, panel, group, ws, bp, c, table, bias, other, caps[6] if runtime else None)

    def _panel_group(self, b: ir.IRBuilder, panel: ir.Value, group: ir.Value, ws: ir.Value, bp: ir.Value,
                     c: ir.Value, table: ir.Value, bias: ir.Value, other: ir.Value, rows: ir.Value | None) -> None:
        """One panel of 32 columns over one group of up to 8 rows; ``rows``: the call's rows at run
        time (None: the spec's)."""
        row0 = llvm_ir.mul(b, group, i64(ROW_GROUP))
        b_panel = gep(b, bp, llvm_ir.mul(b, panel, i64(self.groups * PANEL * K_GROUP)))
        col0 = llvm_ir.mul(b, panel, i64(PANEL))
        self._by_row_count(b, group, row0, rows,
                           lambda count: self._rows(b, count, row0, ws, b_panel, c, table, bias, other, col0))

    def _by_row_count(self, b: ir.IRBuilder, group: ir.Value, row0: ir.Value, rows: ir.Value | None,
                      run: Callable[[int], None]) -> None:
        """``run(count)`` for the rows of group ``group`` (first row ``row0``), a compile-time
        count: the group's rows left of ``rows`` (run time: a switch over 1 .. ROW_GROUP) or of
        the spec's ``m`` (None: the last group's remainder)."""
        rem = self.spec.m % ROW_GROUP
        if rows is not None:  # the rows left, at most a group's: a switch over 1 .. ROW_GROUP
            left = llvm_ir.sub(b, rows, row0)
            done = b.append_basic_block("rows.done")
            full = b.append_basic_block("rows.full")
            switch = b.switch(left, full)
            for count in range(1, ROW_GROUP):
                block = b.append_basic_block(f"rows.{count}")
                switch.add_case(i64(count), block)
                b.position_at_end(block)
                run(count)
                b.branch(done)
            b.position_at_end(full)
            run(ROW_GROUP)
            b.branch(done)
            b.position_at_end(done)
        elif not rem:
            run(ROW_GROUP)
        elif self.row_groups == 1:
            run(rem)
        else:
            last = _i(b.icmp_signed("==", group, i64(self.row_groups - 1)))
            with b.if_else(last) as (then, otherwise):
                with then:
                    run(rem)
                with otherwise:
                    run(ROW_GROUP)

    # -- phase 2 on AMX: 32-row blocks of tiles, the same epilogue -------------------------------
    def _amx_two_phases(self, b: ir.IRBuilder, a: ir.Value, ws: ir.Value, bp: ir.Value, c: ir.Value,
                        table: ir.Value, bias: ir.Value, other: ir.Value, rows: int | ir.Value) -> None:
        """:meth:`_two_phases` with (panel, 32-row block) tasks, panel-major."""
        s = self.spec
        blocks: int | ir.Value = -(-s.m // AMX_BLOCK)
        if not isinstance(rows, int):
            blocks = llvm_ir.udiv(b, llvm_ir.add(b, rows, i64(AMX_BLOCK - 1)), i64(AMX_BLOCK))
        emit_parallel_for(self.module, b, rows, self._phase1(), s.threads or 1, captures=[a, ws],
                          name=f"{s.symbol}.quantize")
        tasks = panels(s.n) * blocks if isinstance(blocks, int) else llvm_ir.mul(b, blocks, i64(panels(s.n)))
        captures = [ws, bp, c, table, bias, other] + ([rows, blocks] if not isinstance(rows, int) else [])
        emit_parallel_for(self.module, b, tasks, self._amx_task, s.threads or 1, captures=captures,
                          name=f"{s.symbol}.tasks")

    def _amx_task(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        """(panel, 32-row block) tasks, ``caps`` as :meth:`_task`'s."""
        del tid
        ws, bp, c, table, bias, other = caps[:6]
        rows = caps[6] if len(caps) > 6 else None
        cs = self._amx_scratch(b)
        with for_range(b, begin, end, name="task") as t:
            blocks = caps[7] if rows is not None else i64(-(-self.spec.m // AMX_BLOCK))
            panel = llvm_ir.udiv(b, t, blocks)
            row0 = llvm_ir.mul(b, llvm_ir.urem(b, t, blocks), i64(AMX_BLOCK))
            self._amx_panel_block(b, panel, row0, rows if rows is not None else i64(self.spec.m), rows, cs,
                                  ws, bp, c, table, bias, other)

    def _amx_row_block(self, b: ir.IRBuilder, r0: ir.Value, r1: ir.Value, rows: ir.Value, cs: ir.Value, ws: ir.Value,
                       bp: ir.Value, c: ir.Value, table: ir.Value, bias: ir.Value, other: ir.Value) -> None:
        """Rows ``r0 .. r1`` of a row block (``blocked``), requantized: every panel over its
        32-row blocks (the last may be shorter)."""
        blocks = llvm_ir.udiv(b, llvm_ir.add(b, llvm_ir.sub(b, r1, r0), i64(AMX_BLOCK - 1)), i64(AMX_BLOCK))
        with for_range(b, 0, panels(self.spec.n), name="panel") as panel:
            with for_range(b, 0, blocks, name="block32") as block:
                row0 = llvm_ir.add(b, r0, llvm_ir.mul(b, block, i64(AMX_BLOCK)))
                self._amx_panel_block(b, panel, row0, r1, rows, cs, ws, bp, c, table, bias, other)

    def _amx_scratch(self, b: ir.IRBuilder) -> ir.Value:
        """A block's int32 sums, ``AMX_BLOCK x AMX_BLOCK`` on the task's stack (allocated where
        the task function starts, before its loops)."""
        scratch = b.alloca(ir.ArrayType(I32, AMX_BLOCK * AMX_BLOCK), name="sums")
        scratch.align = 64  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's __init__ sets None
        return _i(b.bitcast(scratch, I32.as_pointer()))

    def _amx_panel_block(self, b: ir.IRBuilder, panel: ir.Value, row0: ir.Value, row_end: ir.Value,
                         rows: ir.Value | None, cs: ir.Value, ws: ir.Value, bp: ir.Value, c: ir.Value,
                         table: ir.Value, bias: ir.Value, other: ir.Value) -> None:
        """The rows ``row0 .. min(row0 + 32, row_end)`` of one panel: their sums by tiles into
        ``cs``, then the epilogue over each group of 8 rows, its ``accs`` read from ``cs``
        (``rows``: the call's rows at run time, None: the spec's, as :meth:`_panel_group`)."""
        assert self.tiles is not None
        s = self.spec
        b_panel = gep(b, bp, llvm_ir.mul(b, panel, i64(self.groups * PANEL * K_GROUP)))
        col0 = llvm_ir.mul(b, panel, i64(PANEL))
        left = llvm_ir.sub(b, row_end, row0)
        left = _i(b.select(_i(b.icmp_signed("<", left, i64(AMX_BLOCK))), left, i64(AMX_BLOCK)))
        self.tiles.emit(b, left, gep(b, ws, llvm_ir.mul(b, row0, i64(s.ldq))), b_panel, cs, s.m)
        g0 = llvm_ir.udiv(b, row0, i64(ROW_GROUP))
        g1 = llvm_ir.udiv(b, llvm_ir.add(b, llvm_ir.add(b, row0, left), i64(ROW_GROUP - 1)), i64(ROW_GROUP))
        v16p = V16I32.as_pointer()
        with for_range(b, g0, g1, name="group") as group:
            row0_g = llvm_ir.mul(b, group, i64(ROW_GROUP))
            sums = gep(b, cs, llvm_ir.mul(b, llvm_ir.sub(b, row0_g, row0), i64(AMX_BLOCK)))

            def run(count: int) -> None:
                accs = [_i(b.load(_i(b.bitcast(gep(b, sums, i * AMX_BLOCK + 16 * h), v16p)), align=64))
                        for i in range(count) for h in range(2)]
                self._epilogue(b, count, row0_g, accs, c, table, bias, other, col0)

            self._by_row_count(b, group, row0_g, rows, run)

    def _rows(self, b: ir.IRBuilder, rows: int, row0: ir.Value, ws: ir.Value, b_panel: ir.Value, c: ir.Value,
              table: ir.Value, bias: ir.Value, other: ir.Value, col0: ir.Value) -> None:
        s = self.spec
        dp = declare(self.module, "llvm.x86.avx512.vpdpbusd.512", V16I32, [V16I32, V64I8, V64I8])
        q_rows = gep(b, ws, llvm_ir.mul(b, row0, i64(s.ldq)))
        panel_bytes = self.groups * PANEL * K_GROUP
        v64p = V64I8.as_pointer()
        i32p = I32.as_pointer()

        def step(accs: list[ir.Value], g: ir.Value) -> list[ir.Value]:
            bk = gep(b, b_panel, llvm_ir.mul(b, g, i64(PANEL * K_GROUP)))
            bv = [_i(b.load(_i(b.bitcast(gep(b, bk, 64 * h), v64p)), align=1)) for h in range(2)]
            for h in range(2):  # the next panel's lines at this k into L2: weights come cold from memory
                llvm_ir.prefetch(self.module, b, gep(b, bk, panel_bytes + 64 * h), locality=2)
            out = list(accs)
            for i in range(rows):
                at = gep(b, q_rows, llvm_ir.add(b, i64(i * s.ldq), llvm_ir.mul(b, g, i64(K_GROUP))))
                word = _i(b.load(_i(b.bitcast(at, i32p)), align=1))
                av = _i(b.bitcast(splat(b, word, V16I32), V64I8))
                for h in range(2):
                    out[i * 2 + h] = _i(b.call(dp, [out[i * 2 + h], av, bv[h]]))
            return out

        zero = ir.Constant(V16I32, None)
        accs = llvm_ir.counted_loop(b, 0, self.groups, [zero] * (2 * rows), step, name="g")
        self._epilogue(b, rows, row0, accs, c, table, bias, other, col0)

    def _epilogue(self, b: ir.IRBuilder, rows: int, row0: ir.Value, accs: list[ir.Value], c: ir.Value,
                  table: ir.Value, bias: ir.Value, other: ir.Value, col0: ir.Value) -> None:
        s, vec = self.spec, self.vec
        np_ = panels(s.n) * PANEL
        lanes = ir.Constant(V16I32, list(range(16)))
        cols = llvm_ir.sub(b, i64(s.n), col0)
        masks: list[ir.Value] = []
        zc: list[ir.Value] = []
        sc: list[ir.Value] = []
        bias_v: list[ir.Value | None] = []
        a_scale = ir.Constant(V16D, [_f32(s.a_scale)] * 16)
        fma_d = declare(self.module, "llvm.fma.v16f64", V16D, [V16D, V16D, V16D])
        for h in range(2):
            left = _i(b.trunc(llvm_ir.sub(b, cols, i64(16 * h)), I32))
            masks.append(_i(b.icmp_signed("<", lanes, splat(b, left, V16I32))))
            col = llvm_ir.add(b, col0, i64(16 * h))
            zc.append(_i(b.bitcast(vec.load(b, gep(b, table, col)), V16I32)))
            # a_scale * w_scale[j] in float64: exact (24-bit significands)
            w_scale = _i(b.fpext(vec.load(b, gep(b, table, llvm_ir.add(b, col, i64(2 * np_)))), V16D))
            sc.append(_i(b.fmul(w_scale, a_scale)))
            bias_v.append(_i(b.fpext(masked_load(self.module, b, gep(b, bias, col), masks[h]), V16D)) if s.bias else None)
        params = dict(s.unary_params)
        rs, ocs = s.other_strides if s.other_strides is not None else (0, 1)
        if s.other_quantization is not None:
            other = _i(b.bitcast(other, I8P))
        if s.store_u8:
            c = _i(b.bitcast(c, I8P))
        cols_h = [llvm_ir.add(b, col0, i64(16 * h)) for h in range(2)]

        def row_of(i: int | ir.Value) -> ir.Value:
            return llvm_ir.add(b, row0, i if isinstance(i, ir.Value) else i64(i))

        def scaled(i: int, h: int) -> ir.Value:
            total = _i(b.sitofp(_i(b.sub(accs[i * 2 + h], zc[h])), V16D))
            bh = bias_v[h]
            xd = _i(b.call(fma_d, [total, sc[h], bh])) if bh is not None else _i(b.fmul(total, sc[h]))
            x = _i(b.fptrunc(xd, V16F))
            if s.binary is not None and s.binary_first:
                x = self._binary(b, x, other, row_of(i), cols_h[h], rs, ocs, masks[h])
            return x

        def activation(x: ir.Value) -> ir.Value:
            return x if s.unary is None else emit_unary(b, vec, s.unary, x, params)

        def post(x: ir.Value, i: int | ir.Value, h: int) -> ir.Value:
            if s.binary is not None and not s.binary_first:
                x = self._binary(b, x, other, row_of(i), cols_h[h], rs, ocs, masks[h])
            return x

        def store(x: ir.Value, i: int | ir.Value, h: int) -> None:
            dst = gep(b, c, llvm_ir.add(b, llvm_ir.mul(b, row_of(i), i64(self.ldc)), cols_h[h]))
            if s.store_u8:
                assert s.requantize is not None
                masked_store_u8(self.module, b, quantized_bytes(self.module, b, vec, x, s.requantize), dst, masks[h])
                return
            if s.requantize is not None:
                x = requantize_f32(self.module, b, vec, x, s.requantize)
            masked_store(self.module, b, x, dst, masks[h])

        xs = [scaled(i, h) for i in range(rows) for h in range(2)]
        if stages(s.unary, 16):  # a transcendental: over a staged tile, as the float32 kernels do
            staged_rows(b, vec, xs, rows, 2, activation, post, store)
            return
        for i in range(rows):
            for h in range(2):
                store(post(activation(xs[i * 2 + h]), i, h), i, h)

    def _binary(self, b: ir.IRBuilder, x: ir.Value, other: ir.Value, row: ir.Value, col: ir.Value,
                rs: int, ocs: int, mask: ir.Value) -> ir.Value:
        s = self.spec
        off = llvm_ir.add(b, llvm_ir.mul(b, row, i64(rs)), col if ocs else i64(0))
        ptr = gep(b, other, off)
        if s.other_quantization is not None:
            if ocs:
                u = masked_load_u8(self.module, b, ptr, mask)
            else:  # one byte for the whole row
                u = splat(b, _i(b.load(ptr)), V16I8)
            o = dequantized_u8(b, self.vec, u, s.other_quantization)
        else:
            o = masked_load(self.module, b, ptr, mask) if ocs else self.vec.splat(b, _i(b.load(ptr)))
        if s.alpha != 1.0:
            o = llvm_ir.fmul(b, o, self.vec.const(s.alpha))
        return llvm_ir.fadd(b, x, o) if s.binary == "add" else llvm_ir.fsub(b, x, o)


def _inside(b: ir.IRBuilder, v: ir.Value, size: int) -> ir.Value:
    """``0 <= v < size``."""
    return _i(b.and_(_i(b.icmp_signed(">=", v, i64(0))), _i(b.icmp_signed("<", v, i64(size)))))


__all__ = ["Int8GemmSpec", "KERNELS", "MAX_K", "emit_int8_gemm", "int8_kernel_available"]
