"""Depthwise convolution on channels-last activations (``ConvSpec.kind == "depthwise"``).

One task is one output row of one block of channels (``nvd`` vectors).  The row is cut
into tiles of ``B`` output pixels whose ``B x nvd`` accumulators live in registers; per
kernel row the tile loads each input pixel it touches once (a stride-1 3x3 tile of 8
pixels reads 10 input vectors for 24 FMAs) and the kernel row's weight vectors once.
Rows of the window that fall into the padding are skipped by a branch per kernel row;
tiles whose window stays inside the row run in a loop without checks, the few edge tiles
are emitted with their (static) position, their padding taps left out at compile time.
The epilogue (bias, activation, residual) runs on the accumulators before the store.

Weights are ``[kh*kw, ceil(C/W)*W]`` (tap-major, channels zero padded to the vector
width: :func:`pack_depthwise_weight`).  Emitted entry (the GEMM library's ABI)::

    void <symbol>(const float *x, const float *w, float *out,
                  const float *bias, const float *other, float *workspace /* unused */);
"""

from __future__ import annotations

import torch
from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.isa import Isa, vector_width
from ziggurat.backends.cpu.kernels.conv_common import apply_epilogue, vector_lanes
from ziggurat.backends.cpu.kernels.conv_spec import ConvSpec, ConvSpecError
from ziggurat.backends.cpu.kernels.gemm import gc_paused
from ziggurat.backends.cpu.kernels.quantized_lanes import dequantized_u8, load_u8, requantize_f32, store_quantized_u8
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.codegen.bf16 import bf16_to_f32, f32_to_bf16
from ziggurat.backends.cpu.llvm_ir import F32P, I1, I8P, I64, VOID, for_range, gep, i64, if_update

I16 = ir.IntType(16)
I16P = I16.as_pointer()

MAX_TILE = 8


def depthwise_supported(isa: Isa) -> bool:
    return isa in (Isa.AVX512, Isa.AVX2)


def pack_depthwise_weight(w: torch.Tensor, width: int) -> torch.Tensor:
    """``w[C, 1, kh, kw]`` -> ``[kh*kw, ceil(C/width)*width]`` (zero padded channels)."""
    c, one, kh, kw = w.shape
    if one != 1:
        raise ConvSpecError(f"pack_depthwise_weight: expected [C, 1, kh, kw], got {tuple(w.shape)}")
    cp = -(-c // width) * width
    out = w.new_zeros((kh * kw, cp))
    out[:, :c] = w.reshape(c, kh * kw).t()
    return out.contiguous()


def unpack_depthwise_weight(packed: torch.Tensor, c: int, kh: int, kw: int) -> torch.Tensor:
    return packed[:, :c].t().reshape(c, 1, kh, kw).contiguous()


def emit_depthwise(module: ir.Module, spec: ConvSpec) -> ir.Function:
    if spec.kind != "depthwise":
        raise ConvSpecError(f"emit_depthwise got a {spec.kind!r} spec")
    assert isinstance(spec.isa, Isa)
    if not depthwise_supported(spec.isa):
        raise ConvSpecError(f"no depthwise convolution kernel for ISA {spec.isa.value}")
    with gc_paused():
        return _DepthwiseEmitter(module, spec).emit()


class _DepthwiseEmitter:
    def __init__(self, module: ir.Module, spec: ConvSpec) -> None:
        self.module = module
        self.spec = spec
        self.vec = VecOps(module, spec.isa)  # type: ignore[arg-type]
        w = self.vec.width
        self.nvec_total = -(-spec.channels // w)
        self.nvd = min(2, self.nvec_total)
        self.blocks = -(-self.nvec_total // self.nvd)
        self.tile = max(1, min(MAX_TILE, 28 // self.nvd - spec.kw - 1))
        self.cp = self.nvec_total * w

    def emit(self) -> ir.Function:
        s = self.spec
        from ziggurat.backends.cpu.threads import emit_parallel_for

        runtime = ["batch"] if s.batch_runtime else []
        fn = ir.Function(self.module, ir.FunctionType(VOID, [F32P] * 6 + [I64] * len(runtime)), name=s.symbol)
        for arg, nm in zip(fn.args, ("x", "w", "c", "bias", "other", "workspace", *runtime)):
            arg.name = nm
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        per_image = s.out_h * self.blocks
        threads = max(1, min(s.threads, s.batch * per_image, s.flops // (1 << 20) or 1))
        if s.batch_runtime:  # a dynamic batch, up to the spec's (the thread count is planned for it)
            tasks: int | ir.Value = llvm_ir.mul(b, fn.args[6], i64(per_image))
            # one thread where a static call of this size would have one (below 2^21 flops)
            flops = llvm_ir.mul(b, fn.args[6], i64(s.flops // s.batch))
            serial_when: ir.Value | None = b.icmp_signed("<", flops, i64(2 << 20))
        else:
            tasks, serial_when = s.batch * per_image, None
        emit_parallel_for(self.module, b, tasks, self._task_body, num_threads=threads,
                          captures=list(fn.args[:5]), name=f"{s.symbol}.par", serial_when=serial_when)
        b.ret_void()
        return fn

    # -- one task: an output row of one channel block -------------------------------------
    def _task_body(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                   caps: list[ir.Value]) -> None:
        s = self.spec
        x, w, c, bias, other = caps
        if s.in_quantization is not None:
            x = llvm_ir.instr(b.bitcast(x, I8P))
        if s.in_bf16:
            x = llvm_ir.instr(b.bitcast(x, I16P))
        if s.store_u8:
            c = llvm_ir.instr(b.bitcast(c, I8P))
        if s.out_bf16:
            c = llvm_ir.instr(b.bitcast(c, I16P))
        with for_range(b, begin, end, name="task") as t:
            blk = llvm_ir.urem(b, t, i64(self.blocks))
            row = llvm_ir.udiv(b, t, i64(self.blocks))  # n*out_h + oy
            n = llvm_ir.udiv(b, row, i64(s.out_h))
            oy = llvm_ir.urem(b, row, i64(s.out_h))
            c0 = llvm_ir.mul(b, blk, i64(self.nvd * self.vec.width))
            iy0 = llvm_ir.sub(b, llvm_ir.mul(b, oy, i64(s.sh)), i64(s.ph))
            ops = _RowOperands(
                x=gep(b, gep(b, x, llvm_ir.mul(b, n, i64(s.in_batch))), llvm_ir.add(b, llvm_ir.mul(b, iy0, i64(s.in_row)), c0)),
                w=gep(b, w, c0),
                c=gep(b, c, llvm_ir.add(b, llvm_ir.mul(b, row, i64(s.out_w * s.ldc)), c0)),
                bias=gep(b, bias, c0) if s.bias else bias,
                other=gep(b, other, llvm_ir.add(b, llvm_ir.mul(b, row, i64(s.out_w * s.other_pixel)), c0)) if s.binary else other,
                rows_ok=[b.icmp_unsigned("<", llvm_ir.add(b, iy0, i64(ky * s.dh)), i64(s.in_h)) for ky in range(s.kh)],
            )
            last_nv = self.nvec_total - (self.blocks - 1) * self.nvd
            last_lanes = s.channels - (self.nvec_total - 1) * self.vec.width
            full = vector_lanes(self.nvd * self.vec.width, self.vec.width)
            tail = [self.vec.width] * (last_nv - 1) + [last_lanes]
            if tail == full:
                self._row(b, ops, full)
            else:
                with b.if_else(b.icmp_unsigned("==", blk, i64(self.blocks - 1))) as (then, otherwise):
                    with then:
                        self._row(b, ops, tail)
                    with otherwise:
                        self._row(b, ops, full)

    def _row(self, b: ir.IRBuilder, ops: _RowOperands, lanes: list[int]) -> None:
        s, bt = self.spec, self.tile
        # Output columns whose whole window lies inside the input row.
        lo = -(-s.pw // s.sw)
        hi = (s.in_w - 1 + s.pw - (s.kw - 1) * s.dw) // s.sw  # last such column
        starts = list(range(0, s.out_w, bt))
        interior = [t for t in starts if t >= lo and t + bt - 1 <= hi]
        if interior:
            first, last = interior[0], interior[-1]
            for t in starts:
                if t < first:
                    self._tile(b, ops, lanes, t, min(bt, s.out_w - t))
            with for_range(b, first // bt, last // bt + 1, name="tile") as ti:
                self._tile(b, ops, lanes, llvm_ir.mul(b, ti, i64(bt)), bt)
            for t in starts:
                if t > last:
                    self._tile(b, ops, lanes, t, min(bt, s.out_w - t))
        else:
            for t in starts:
                self._tile(b, ops, lanes, t, min(bt, s.out_w - t))

    def _tile(self, b: ir.IRBuilder, ops: _RowOperands, lanes: list[int], ox0: int | ir.Value, count: int) -> None:
        """Outputs ``ox0 .. ox0+count-1`` of the row; a static ``ox0`` leaves padding taps out."""
        s, vec = self.spec, self.vec
        wd = vec.width
        nv = len(lanes)
        static = isinstance(ox0, int)
        accs = [vec.zero() for _ in range(count * nv)]
        for ky in range(s.kh):
            # (input column offset j from the tile's first window column) -> [(output o, tap kx)]
            uses: dict[int, list[tuple[int, int]]] = {}
            for o in range(count):
                for kx in range(s.kw):
                    j = o * s.sw + kx * s.dw
                    if static:
                        ix = ox0 * s.sw - s.pw + j  # type: ignore[operator]
                        if not 0 <= ix < s.in_w:
                            continue
                    uses.setdefault(j, []).append((o, kx))
            if not uses:
                continue

            def taps(vals: list[ir.Value], ky: int = ky, uses: dict[int, list[tuple[int, int]]] = uses) -> list[ir.Value]:
                out = list(vals)
                wrow = gep(b, ops.w, ky * s.kw * self.cp)
                kxs = sorted({kx for us in uses.values() for _, kx in us})
                wv = {(kx, v): vec.load(b, gep(b, wrow, kx * self.cp + v * wd)) for kx in kxs for v in range(nv)}
                base = gep(b, ops.x, ky * s.dh * s.in_row)
                col0 = _affine(b, ox0, s.sw, -s.pw)
                for j in sorted(uses):
                    pix = gep(b, base, _affine(b, _affine(b, col0, 1, j), s.in_pixel))
                    xv = [self._load_x(b, gep(b, pix, v * wd), lanes[v]) for v in range(nv)]
                    for o, kx in uses[j]:
                        for v in range(nv):
                            out[o * nv + v] = vec.fma(b, xv[v], wv[(kx, v)], out[o * nv + v])
                return out

            accs = if_update(b, ops.rows_ok[ky], accs, taps, name=f"ky{ky}")
        epi = s.epilogue
        bias_v = [vec.load(b, gep(b, ops.bias, v * wd), lanes[v]) for v in range(nv)] if epi.bias else [None] * nv
        for o in range(count):
            ox = _affine(b, ox0, 1, o)
            cpix = gep(b, ops.c, _affine(b, ox, s.ldc))
            opix = None
            if epi.binary:
                opix = gep(b, ops.other, _affine(b, ox, s.other_pixel))
            for v in range(nv):
                optr = gep(b, opix, v * wd) if opix is not None else None
                y = apply_epilogue(b, vec, epi, accs[o * nv + v], bias_v[v], optr, lanes[v])
                self._store(b, y, gep(b, cpix, v * wd), lanes[v])

    def _load_x(self, b: ir.IRBuilder, ptr: ir.Value, lanes: int) -> ir.Value:
        """An input vector: floats, or bytes dequantized as eager's ``dequantize_per_tensor``."""
        s, vec = self.spec, self.vec
        if s.in_bf16:
            return bf16_to_f32(b, self._halves(b, ptr, lanes, None))
        if s.in_quantization is None:
            return vec.load(b, ptr, lanes)
        return dequantized_u8(b, vec, load_u8(self.module, b, ptr, lanes, vec.width), s.in_quantization)

    def _halves(self, b: ir.IRBuilder, ptr: ir.Value, lanes: int, value: ir.Value | None) -> ir.Value:
        """Load (``value`` None) or store ``lanes`` 16-bit elements at ``ptr`` as a vector of the
        kernel's width (masked past ``lanes``: nothing past them is read or written)."""
        width = self.vec.width
        vty = ir.VectorType(I16, width)
        vptr = llvm_ir.instr(b.bitcast(ptr, vty.as_pointer()))
        mask = ir.Constant(ir.VectorType(I1, width), [1 if i < lanes else 0 for i in range(width)])
        if value is None:
            return llvm_ir.instr(b.load(vptr, align=2)) if lanes >= width else llvm_ir.masked_load(b, vptr, mask, vty, 2)
        if lanes >= width:
            b.store(value, vptr, align=2)
        else:
            llvm_ir.masked_store(b, value, vptr, mask, 2)
        return value

    def _store(self, b: ir.IRBuilder, y: ir.Value, ptr: ir.Value, lanes: int) -> None:
        """An output vector, through the spec's quantize -> dequantize pair, or its quantize into bytes."""
        s, vec = self.spec, self.vec
        if s.out_bf16:  # rounded to bf16 as eager's bf16 convolution rounds its float32 sums
            self._halves(b, ptr, lanes, f32_to_bf16(b, y))
            return
        if s.requantize is None:
            vec.store(b, y, ptr, lanes)
            return
        if s.store_u8:
            store_quantized_u8(self.module, b, vec, y, s.requantize, ptr, lanes)
        else:
            vec.store(b, requantize_f32(self.module, b, vec, y, s.requantize), ptr, lanes)


def _affine(b: ir.IRBuilder, x: int | ir.Value, scale: int, offset: int = 0) -> int | ir.Value:
    """``x * scale + offset``, folded when ``x`` is static."""
    if isinstance(x, int):
        return x * scale + offset
    v = llvm_ir.mul(b, x, i64(scale)) if scale != 1 else x
    return llvm_ir.add(b, v, i64(offset)) if offset else v


class _RowOperands:
    """Pointers of one task: ``x`` at (n, first window row, column 0, c0), ``w`` at channel c0,
    ``c``/``other`` at (n, oy, 0, c0), and per kernel row whether it lies inside the input."""

    def __init__(self, x: ir.Value, w: ir.Value, c: ir.Value, bias: ir.Value, other: ir.Value,
                 rows_ok: list[ir.Value]) -> None:
        self.x, self.w, self.c, self.bias, self.other, self.rows_ok = x, w, c, bias, other, rows_ok


def depthwise_width(isa: Isa) -> int:
    return vector_width(isa, 32)
