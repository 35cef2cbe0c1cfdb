"""int8 1x1 convolution on AVX512-VNNI: ``out[n, o, p] = W[o, :] . u[n, :, p]`` per image.

:func:`emit_int8_pointwise` adds one function with the float32 GEMM's C ABI::

    void <symbol>(const float *x, const int8_t *w_packed, float *c,
                  const float *bias, const float *other, void *workspace);

``x`` is the NCHW input, dequantized (``(u - zero_point) * a_scale`` for uint8 ``u``); ``c``,
and ``other`` for a residual, are NCHW with the output's shape.  The weights are the
broadcast operand here, the activations the vector one, so NCHW needs no transpose: the
kernel first requantizes each image's channels into the workspace as VNNI-4 panels of 32
pixels (``[panel][C/4][32 pixels][4 channels]``, uint8), then sums ``vpdpbusd(acc, pixels,
weights)`` in int32 for rows of 8 output channels by 32 pixels, and runs the epilogue in
float32: the zero point's correction and the scales per output channel (the table of
``pack_int8.epilogue_table``), the bias, the activation, the residual.  The packed weight
(``pack_int8.pack_quantized_pointwise``) is the table, then ``W`` row-major with its rows
padded to a multiple of 8 and its channels to a multiple of 4, zeros.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels.gemm import gc_paused
from ziggurat.backends.cpu.kernels.gemm_int8 import (
    MAX_K,
    V16F,
    V16I8,
    V16I32,
    V64I8,
    masked_load,
    masked_store,
    quantize_u8,
    splat_i32,
)
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError, checked_epilogue, checked_positive, spec_symbol
from ziggurat.backends.cpu.kernels.unary import emit_unary
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32P, I8P, I32, VOID, declare, for_range, gep, i64
from ziggurat.backends.cpu.llvm_ir import instr as _i
from ziggurat.backends.cpu.threads import default_threads, emit_parallel_for
from ziggurat.dialects.fused.pack_int8 import K_GROUP, ROW_BLOCK, padded_k, table_floats

PIXELS = 32  # pixels per panel (two 16-lane vectors)


@dataclass(frozen=True)
class Int8PointwiseSpec:
    """A 1x1 convolution of ``batch`` images of ``cin`` channels x ``pixels`` to ``cout``."""

    batch: int
    cout: int
    cin: int
    pixels: int
    a_scale: float
    a_zero_point: int
    threads: int | None = None
    bias: bool = False
    unary: str | None = None
    unary_params: Mapping[str, float | None] | tuple[tuple[str, float | None], ...] = ()
    binary: str | None = None
    alpha: float = 1.0
    binary_first: bool = False
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        for what in ("batch", "cout", "cin", "pixels"):
            checked_positive("Int8PointwiseSpec", what, getattr(self, what))
        if self.cin > MAX_K:
            raise GemmSpecError(f"Int8PointwiseSpec: {self.cin} input channels > {MAX_K} could overflow the int32 sums")
        s(self, "threads", default_threads() if self.threads is None else checked_positive("Int8PointwiseSpec", "threads", self.threads))
        if not (isinstance(self.a_scale, float) and math.isfinite(self.a_scale) and self.a_scale > 0):
            raise GemmSpecError(f"Int8PointwiseSpec.a_scale must be a positive finite float, got {self.a_scale!r}")
        if not isinstance(self.a_zero_point, int) or not 0 <= self.a_zero_point <= 255:
            raise GemmSpecError(f"Int8PointwiseSpec.a_zero_point must be a uint8, got {self.a_zero_point!r}")
        params, alpha = checked_epilogue("Int8PointwiseSpec", self.unary, self.unary_params, self.binary, self.alpha)
        s(self, "unary_params", params)
        s(self, "alpha", alpha)
        if self.binary_first and (self.binary is None or self.unary is None):
            s(self, "binary_first", False)

    @property
    def symbol(self) -> str:
        return self.name if self.name is not None else spec_symbol("zig_int8_pointwise_", self)

    @property
    def panels(self) -> int:
        return -(-self.pixels // PIXELS)

    @property
    def panel_bytes(self) -> int:
        return padded_k(self.cin) * PIXELS

    @property
    def workspace_bytes(self) -> int:
        return self.batch * self.panels * self.panel_bytes + 64

    @property
    def flops(self) -> int:
        return 2 * self.batch * self.cout * self.cin * self.pixels


def emit_int8_pointwise(module: ir.Module, spec: Int8PointwiseSpec) -> ir.Function:
    if not isinstance(spec, Int8PointwiseSpec):
        raise GemmSpecError(f"emit_int8_pointwise expects an Int8PointwiseSpec, got {type(spec).__name__}")
    if spec.symbol in module.globals:
        raise GemmSpecError(f"module already has a symbol named {spec.symbol!r}")
    with gc_paused():
        return _Emitter(module, spec).emit()


class _Emitter:
    def __init__(self, module: ir.Module, spec: Int8PointwiseSpec) -> None:
        self.module = module
        self.spec = spec
        self.vec = VecOps(module, Isa.AVX512)
        self.kp = padded_k(spec.cin)
        self.row_groups = -(-spec.cout // ROW_BLOCK)

    def emit(self) -> ir.Function:
        s = self.spec
        fn = ir.Function(self.module, ir.FunctionType(VOID, [F32P] * 6), name=s.symbol)
        for arg in fn.args[:3]:
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        x, c, bias, other = fn.args[0], fn.args[2], fn.args[3], fn.args[4]
        operand = _i(b.bitcast(fn.args[1], I8P))
        table = _i(b.bitcast(operand, F32P))
        weights = gep(b, operand, 4 * table_floats(s.cout))
        ws = _i(b.bitcast(fn.args[5], I8P))
        emit_parallel_for(self.module, b, s.batch * s.panels, self._pack_panel, s.threads or 1,
                          captures=[x, ws], name=f"{s.symbol}.quantize")
        emit_parallel_for(self.module, b, s.batch * s.panels * self.row_groups, self._task, s.threads or 1,
                          captures=[ws, weights, c, table, bias, other], name=f"{s.symbol}.tasks")
        b.ret_void()
        return fn

    def _lanes_mask(self, b: ir.IRBuilder, left: ir.Value) -> ir.Value:
        """Lanes ``< left`` (an i64, clamped by the compare) as a 16 x i1 mask."""
        lanes = ir.Constant(V16I32, list(range(16)))
        narrow = _i(b.trunc(_i(b.select(_i(b.icmp_signed("<", left, i64(16))), left, i64(16))), I32))
        return _i(b.icmp_signed("<", lanes, splat_i32(b, narrow)))

    # -- phase 1: an image's 32 pixels -> uint8 VNNI-4 panel --------------------------------------
    def _pack_panel(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                    caps: list[ir.Value]) -> None:
        del tid
        s, vec = self.spec, self.vec
        x, ws = caps
        load = declare(self.module, "llvm.masked.load.v16f32.p0v16f32", V16F, [V16F.as_pointer(), I32,
                                                                                ir.VectorType(ir.IntType(1), 16), V16F])
        concat = ir.Constant(ir.VectorType(I32, 32), list(range(32)))
        order = ir.Constant(ir.VectorType(I32, 64), [(j % 2) * 16 + p + (32 if j >= 2 else 0)
                                                     for p in range(16) for j in range(4)])
        zero8 = ir.Constant(V16I8, None)
        with for_range(b, begin, end, name="panel") as t:
            image = llvm_ir.udiv(b, t, i64(s.panels))
            panel = llvm_ir.urem(b, t, i64(s.panels))
            p0 = llvm_ir.mul(b, panel, i64(PIXELS))
            left = llvm_ir.sub(b, i64(s.pixels), p0)
            masks = [self._lanes_mask(b, llvm_ir.sub(b, left, i64(16 * h))) for h in range(2)]
            src = gep(b, x, llvm_ir.add(b, llvm_ir.mul(b, image, i64(s.cin * s.pixels)), p0))
            dst = gep(b, ws, llvm_ir.mul(b, t, i64(s.panel_bytes)))
            with for_range(b, 0, self.kp // K_GROUP, name="g") as g:
                for h in range(2):
                    rows: list[ir.Value] = []
                    for j in range(K_GROUP):
                        ch = llvm_ir.add(b, llvm_ir.mul(b, g, i64(K_GROUP)), i64(j))
                        ok = _i(b.icmp_signed("<", ch, i64(s.cin)))
                        # channels past cin read nothing (their weights are zero): mask all lanes off
                        mask = _i(b.select(ok, masks[h], ir.Constant(ir.VectorType(ir.IntType(1), 16), [0] * 16)))
                        chc = _i(b.select(ok, ch, i64(0)))
                        ptr = gep(b, src, llvm_ir.add(b, llvm_ir.mul(b, chc, i64(s.pixels)), i64(16 * h)))
                        v = _i(b.call(load, [_i(b.bitcast(ptr, V16F.as_pointer())), I32(4), mask, vec.zero()]))
                        q = quantize_u8(self.module, b, vec, v, s.a_scale, s.a_zero_point)
                        rows.append(_i(b.select(ok, q, zero8)))
                    lo = _i(b.shuffle_vector(rows[0], rows[1], concat))
                    hi = _i(b.shuffle_vector(rows[2], rows[3], concat))
                    packed = _i(b.shuffle_vector(lo, hi, order))
                    at = gep(b, dst, llvm_ir.add(b, llvm_ir.mul(b, g, i64(PIXELS * K_GROUP)), i64(64 * h)))
                    b.store(packed, _i(b.bitcast(at, V64I8.as_pointer())), align=1)

    # -- phase 2: 8 output channels x 32 pixels --------------------------------------------------
    def _task(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        del tid
        s = self.spec
        ws, weights, c, table, bias, other = caps
        rem = s.cout % ROW_BLOCK
        with for_range(b, begin, end, name="task") as t:
            group = llvm_ir.urem(b, t, i64(self.row_groups))
            image_panel = llvm_ir.udiv(b, t, i64(self.row_groups))
            image = llvm_ir.udiv(b, image_panel, i64(s.panels))
            panel = llvm_ir.urem(b, image_panel, i64(s.panels))
            args = (image, panel, llvm_ir.mul(b, group, i64(ROW_BLOCK)), gep(b, ws, llvm_ir.mul(b, image_panel, i64(s.panel_bytes))),
                    weights, c, table, bias, other)
            if not rem:
                self._rows(b, ROW_BLOCK, *args)
            elif self.row_groups == 1:
                self._rows(b, rem, *args)
            else:
                last = _i(b.icmp_signed("==", group, i64(self.row_groups - 1)))
                with b.if_else(last) as (then, otherwise):
                    with then:
                        self._rows(b, rem, *args)
                    with otherwise:
                        self._rows(b, ROW_BLOCK, *args)

    def _rows(self, b: ir.IRBuilder, rows: int, image: ir.Value, panel: ir.Value, o0: ir.Value, pixels: ir.Value,
              weights: ir.Value, c: ir.Value, table: ir.Value, bias: ir.Value, other: ir.Value) -> None:
        s = self.spec
        dp = declare(self.module, "llvm.x86.avx512.vpdpbusd.512", V16I32, [V16I32, V64I8, V64I8])
        w_rows = gep(b, weights, llvm_ir.mul(b, o0, i64(self.kp)))
        i32p = I32.as_pointer()

        def step(accs: list[ir.Value], g: ir.Value) -> list[ir.Value]:
            at = gep(b, pixels, llvm_ir.mul(b, g, i64(PIXELS * K_GROUP)))
            pv = [_i(b.load(_i(b.bitcast(gep(b, at, 64 * h), V64I8.as_pointer())), align=1)) for h in range(2)]
            out = list(accs)
            for i in range(rows):
                word = _i(b.load(_i(b.bitcast(gep(b, w_rows, llvm_ir.add(b, i64(i * self.kp), llvm_ir.mul(b, g, i64(K_GROUP)))), i32p)), align=1))
                wv = _i(b.bitcast(splat_i32(b, word), V64I8))
                for h in range(2):
                    out[i * 2 + h] = _i(b.call(dp, [out[i * 2 + h], pv[h], wv]))
            return out

        zero = ir.Constant(V16I32, None)
        accs = llvm_ir.counted_loop(b, 0, self.kp // K_GROUP, [zero] * (2 * rows), step, name="g")
        self._epilogue(b, rows, image, panel, o0, accs, c, table, bias, other)

    def _epilogue(self, b: ir.IRBuilder, rows: int, image: ir.Value, panel: ir.Value, o0: ir.Value,
                  accs: list[ir.Value], c: ir.Value, table: ir.Value, bias: ir.Value, other: ir.Value) -> None:
        s, vec = self.spec, self.vec
        columns = table_floats(s.cout) // 3
        p0 = llvm_ir.mul(b, panel, i64(PIXELS))
        left = llvm_ir.sub(b, i64(s.pixels), p0)
        masks = [self._lanes_mask(b, llvm_ir.sub(b, left, i64(16 * h))) for h in range(2)]
        params = dict(s.unary_params)
        image_base = llvm_ir.mul(b, image, i64(s.cout * s.pixels))
        for i in range(rows):
            o = llvm_ir.add(b, o0, i64(i))
            zc = splat_i32(b, _i(b.bitcast(_i(b.load(gep(b, table, o))), I32)))
            sc = vec.splat(b, _i(b.load(gep(b, table, llvm_ir.add(b, o, i64(columns))))))
            bv = vec.splat(b, _i(b.load(gep(b, bias, o)))) if s.bias else None
            row_base = llvm_ir.add(b, image_base, llvm_ir.add(b, llvm_ir.mul(b, o, i64(s.pixels)), p0))
            for h in range(2):
                at = llvm_ir.add(b, row_base, i64(16 * h))
                y = llvm_ir.fmul(b, _i(b.sitofp(_i(b.sub(accs[i * 2 + h], zc)), V16F)), sc)
                if bv is not None:
                    y = llvm_ir.fadd(b, y, bv)
                if s.binary is not None and s.binary_first:
                    y = self._binary(b, y, other, at, masks[h])
                if s.unary is not None:
                    y = emit_unary(b, vec, s.unary, y, params)
                if s.binary is not None and not s.binary_first:
                    y = self._binary(b, y, other, at, masks[h])
                masked_store(self.module, b, y, gep(b, c, at), masks[h])

    def _binary(self, b: ir.IRBuilder, y: ir.Value, other: ir.Value, at: ir.Value, mask: ir.Value) -> ir.Value:
        s = self.spec
        o = masked_load(self.module, b, gep(b, other, at), mask)
        if s.alpha != 1.0:
            o = llvm_ir.fmul(b, o, self.vec.const(s.alpha))
        return llvm_ir.fadd(b, y, o) if s.binary == "add" else llvm_ir.fsub(b, y, o)


__all__ = ["Int8PointwiseSpec", "emit_int8_pointwise"]
