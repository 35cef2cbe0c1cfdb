"""Implicit-GEMM convolution on channels-last activations (``ConvSpec.kind == "igemm"``).

``C[m, j] = sum_{s, l} A_s[m][l] * B[s*L + l, j]`` where ``A_s[m]`` points at the input run
of segment ``s`` (``L = seg_len`` floats) of output pixel ``m``, or at a zero page for a
padding tap.  Nothing like an im2col buffer is written: per tile of ``mr`` output pixels the
driver fills a small table of ``segments x mr`` row pointers (on the stack) and the
microkernel streams every segment through the same ``mr x (nvec*W)`` register tile, so
the whole K reduction stays in registers and the epilogue (bias, activation, residual)
runs once before the single store.

Work split: tasks are (column block, row tile) pairs, row tile fastest, so consecutive tasks
of a thread share a block of B panels sized to stay in L2 while the thread walks its row
tiles (the microkernel prefetches B ``PREFETCH_K`` rows ahead for the first, streaming pass);
``emit_parallel_for`` hands each thread a contiguous range of tasks.

Emitted entry (the GEMM library's ABI)::

    void <symbol>(const float *x, const float *b_panels, float *out,
                  const float *bias, const float *other, float *workspace /* unused */);
"""

from __future__ import annotations

from typing import cast

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels.conv_common import (
    apply_epilogue,
    carry_loop,
    epilogue_after_activation,
    epilogue_before_activation,
    vector_lanes,
    zero_page,
    zero_pointer,
)
from ziggurat.backends.cpu.kernels.conv_spec import ConvSpec, ConvSpecError
from ziggurat.backends.cpu.kernels.gemm import gc_paused
from ziggurat.backends.cpu.kernels.gemm_plan import TUNING, cache_sizes, even_block
from ziggurat.backends.cpu.kernels.staged_epilogue import staged_rows, stages
from ziggurat.backends.cpu.kernels.unary import emit_unary
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32P, I64, VOID, for_range, gep, i64, mul_const
from ziggurat.backends.cpu.threads import emit_parallel_for, entry_alloca

#: Register tile (rows = output pixels, vectors of output channels) per ISA.
IGEMM_TILE: dict[Isa, tuple[int, int]] = {Isa.AVX512: (12, 2), Isa.AVX2: (6, 2)}
F32PP = F32P.as_pointer()
#: B rows (K steps) ahead of the FMAs that the microkernel prefetches into L1 (0: none).  The
#: first row tile of a column panel streams B from L3/memory; without it a deep layer with few
#: output pixels (7x7x512, K=4608) waits on B (measured 88 -> 113 GFLOP/s at 1 thread).
PREFETCH_K = 64


def igemm_supported(isa: Isa) -> bool:
    return isa in IGEMM_TILE


def panel_width(isa: Isa) -> int:
    mr, nvec = IGEMM_TILE[isa]
    from ziggurat.backends.cpu.isa import vector_width

    return nvec * vector_width(isa, 32)


def emit_conv_igemm(module: ir.Module, spec: ConvSpec) -> ir.Function:
    if spec.kind != "igemm":
        raise ConvSpecError(f"emit_conv_igemm got a {spec.kind!r} spec")
    isa = spec.isa
    assert isinstance(isa, Isa)
    if not igemm_supported(isa):
        raise ConvSpecError(f"no implicit-GEMM convolution for ISA {isa.value}")
    if spec.nr != panel_width(isa):
        raise ConvSpecError(f"ConvSpec.nr={spec.nr}: the {isa.value} kernel reads {panel_width(isa)}-column panels")
    with gc_paused():
        return _IgemmEmitter(module, spec).emit()


class _IgemmEmitter:
    def __init__(self, module: ir.Module, spec: ConvSpec) -> None:
        self.module = module
        self.spec = spec
        self.vec = VecOps(module, spec.isa)  # type: ignore[arg-type]
        self.mr, self.nvec = IGEMM_TILE[spec.isa]  # type: ignore[index]
        self.tw = self.nvec * self.vec.width
        self.sym = spec.symbol

    # -- microkernel ---------------------------------------------------------------------
    def _microkernel(self, rows: int, cols: int) -> ir.Function:
        s, vec, w = self.spec, self.vec, self.vec.width
        fn = ir.Function(self.module, ir.FunctionType(VOID, [F32PP, F32P, F32P, F32P, F32P]),
                         name=f"{self.sym}.uk{rows}x{cols}")
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        fn.attributes.add("noinline")
        table, bp, c, bias, other = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        lanes = vector_lanes(cols, w)
        nv = len(lanes)
        seg_len, nr, mr = s.seg_len, s.nr, self.mr
        unroll = 4 if seg_len >= 8 else 1
        # Prefetching PREFETCH_K rows ahead pays on long panels; on a short one (a 3-channel
        # stem: K = 27) every prefetch lands past the panel, often past the buffer, and costs
        # page walks (mobilenet_v2's stem 0.41 -> 0.25 ms without it).
        prefetch_b = PREFETCH_K > 0 and s.k > 2 * PREFETCH_K

        def segment(bld: ir.IRBuilder, seg: ir.Value, accs: list[ir.Value]) -> list[ir.Value]:
            rowp = [bld.load(gep(bld, table, llvm_ir.add(bld, llvm_ir.mul(bld, seg, i64(mr)), i64(i))), align=8) for i in range(rows)]
            bseg = gep(bld, bp, llvm_ir.mul(bld, seg, i64(seg_len * nr)))

            def steps(bb: ir.IRBuilder, base: ir.Value, count: int, accs_in: list[ir.Value]) -> list[ir.Value]:
                out = list(accs_in)
                for t in range(count):
                    koff = llvm_ir.add(bb, base, i64(t)) if t else base
                    bv = [vec.load(bb, gep(bb, bseg, llvm_ir.add(bb, llvm_ir.mul(bb, koff, i64(nr)), i64(v * w))), w) for v in range(nv)]
                    if prefetch_b:
                        ahead = llvm_ir.mul(bb, llvm_ir.add(bb, koff, i64(PREFETCH_K)), i64(nr))
                        for line in range(0, nv * w, 16):
                            llvm_ir.prefetch(self.module, bb, gep(bb, bseg, llvm_ir.add(bb, ahead, i64(line))))
                    for i in range(rows):
                        x = vec.splat(bb, bb.load(gep(bb, rowp[i], koff), align=4))
                        for v in range(nv):
                            out[i * nv + v] = vec.fma(bb, x, bv[v], out[i * nv + v])
                return out

            main = seg_len // unroll
            accs = carry_loop(bld, main, accs, lambda bb, it, a: steps(bb, llvm_ir.mul(bb, it, i64(unroll)), unroll, a),
                              name="k")
            rem = seg_len - main * unroll
            if rem:
                accs = steps(bld, i64(main * unroll), rem, accs)
            return accs

        accs = carry_loop(b, s.segments, [vec.zero() for _ in range(rows * nv)], segment, name="seg")
        epi = s.epilogue
        bias_v = [vec.load(b, gep(b, bias, v * w), lanes[v]) for v in range(nv)] if epi.bias else [None] * nv

        def other_at(i: int | ir.Value, v: int) -> ir.Value | None:
            return gep(b, gep(b, other, mul_const(b, i, s.other_pixel)), v * w) if epi.binary else None

        def store(y: ir.Value, i: int | ir.Value, v: int) -> None:
            vec.store(b, y, gep(b, gep(b, c, mul_const(b, i, s.ldc)), v * w), lanes[v])

        if stages(epi.unary, w):
            unary = epi.unary
            assert unary is not None
            staged_rows(
                b, vec,
                [epilogue_before_activation(b, vec, epi, accs[i * nv + v], bias_v[v], other_at(i, v), lanes[v])
                 for i in range(rows) for v in range(nv)],
                rows, nv,
                lambda x: emit_unary(b, vec, unary, x, dict(epi.unary_params)),
                lambda x, i, v: epilogue_after_activation(b, vec, epi, x, other_at(i, v), lanes[v]),
                store)
        else:
            for i in range(rows):
                for v in range(nv):
                    store(apply_epilogue(b, vec, epi, accs[i * nv + v], bias_v[v], other_at(i, v), lanes[v]), i, v)
        b.ret_void()
        return fn

    # -- driver --------------------------------------------------------------------------
    def _column_block(self) -> int:
        """Column tiles per task: the B block (K x tiles*tw floats) takes at most half of L2,
        planned as the GEMMs' (``Tuning.l2_floor``: a 512 KB L2 split 128 channels of a 3x3 over
        64 into blocks of 7 tiles and 1; conv-silu-stack on the AVX2 EPYC, 2 threads: 22.8 ->
        19.2 ms), and the blocks are as even as the tiles allow: the threads take tasks in
        block order, so blocks of 3 tiles and 1 (a 3x3 over 128 at 1 MB of L2, Zen 4) left one
        thread three quarters of the work (ResNet-18's layer 2 on Zen 4, 2 threads: 152 -> 204-223
        GFLOP/s)."""
        s = self.spec
        l2 = max(cache_sizes().get(2, 1 << 20), TUNING.l2_floor)
        per_tile = s.k * self.tw * 4
        tiles = -(-s.out_channels // self.tw)
        return even_block(tiles, min(tiles, (l2 // 2) // per_tile))

    def _tail_rows(self) -> list[int]:
        """Row counts of the M-tail microkernels: the static tail, or with a run-time batch
        every count below MR."""
        if self.spec.batch_runtime:
            return list(range(self.mr - 1, 0, -1))
        return [self.spec.m % self.mr] if self.spec.m % self.mr else []

    def emit(self) -> ir.Function:
        s = self.spec
        mr, tw = self.mr, self.tw
        m, n = s.m, s.out_channels
        self.col_tiles = -(-n // tw)
        self.nb = self._column_block()
        self.col_blocks = -(-self.col_tiles // self.nb)
        ntail = n % tw
        self.uks: dict[tuple[int, bool], ir.Function] = {}
        for rows in [mr, *self._tail_rows()]:
            for nt in (False, True):
                cols = ntail if nt else tw
                if cols and not (nt and not ntail):
                    self.uks[(rows, nt)] = self._microkernel(rows, cols)
        self.zero = zero_page(self.module, s.seg_len)
        runtime = ["batch"] if s.batch_runtime else []
        fn = ir.Function(self.module, ir.FunctionType(VOID, [F32P] * 6 + [I64] * len(runtime)), name=self.sym)
        for arg, nm in zip(fn.args, ("x", "b", "c", "bias", "other", "workspace", *runtime)):
            arg.name = nm
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        threads = max(1, min(s.threads, self.col_blocks * -(-m // mr), s.flops // (1 << 20) or 1))
        if s.batch_runtime:
            m_val = llvm_ir.mul(b, fn.args[6], i64(s.out_h * s.out_w))
            row_tiles = llvm_ir.udiv(b, llvm_ir.add(b, m_val, i64(mr - 1)), i64(mr))
            tasks: int | ir.Value = llvm_ir.mul(b, row_tiles, i64(self.col_blocks))
            # one thread where a static call of this size would have one (below 2^21 flops)
            flops = llvm_ir.mul(b, m_val, i64(2 * s.out_channels * s.kh * s.kw * s.channels))
            serial_when = b.icmp_signed("<", flops, i64(2 << 20))
            captures = [*fn.args[:5], m_val]
        else:
            tasks, serial_when, captures = self.col_blocks * -(-m // mr), None, list(fn.args[:5])
        emit_parallel_for(self.module, b, tasks, self._task_body, num_threads=threads,
                          captures=captures, name=f"{self.sym}.par", serial_when=serial_when)
        b.ret_void()
        return fn

    def _task_body(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                   caps: list[ir.Value]) -> None:
        s, mr = self.spec, self.mr
        x, bp, c, bias, other = caps[:5]
        m_val = caps[5] if s.batch_runtime else i64(s.m)
        row_tiles = llvm_ir.udiv(b, llvm_ir.add(b, m_val, i64(mr - 1)), i64(mr))
        table = entry_alloca(b, ir.ArrayType(F32P, s.segments * mr), "table")
        table_p = cast(ir.Value, b.bitcast(table, F32PP))
        zero = zero_pointer(b, self.zero)
        tails = self._tail_rows()
        with for_range(b, begin, end, name="task") as t:
            cb = llvm_ir.udiv(b, t, row_tiles)
            rt = llvm_ir.urem(b, t, row_tiles)
            m0 = llvm_ir.mul(b, rt, i64(mr))
            self._fill_table(b, x, table_p, zero, m0, m_val)
            ct0 = llvm_ir.mul(b, cb, i64(self.nb))
            ct1 = b.select(b.icmp_unsigned("<", llvm_ir.add(b, ct0, i64(self.nb)), i64(self.col_tiles)),
                           llvm_ir.add(b, ct0, i64(self.nb)), i64(self.col_tiles))
            if tails:
                self._tile_row(b, tails, m_val, table_p, bp, c, bias, other, m0, ct0, ct1)
            else:
                self._columns(b, mr, table_p, bp, c, bias, other, m0, ct0, ct1)

    def _tile_row(self, b: ir.IRBuilder, tails: list[int], m_val: ir.Value, table: ir.Value, bp: ir.Value,
                  c: ir.Value, bias: ir.Value, other: ir.Value, m0: ir.Value, ct0: ir.Value, ct1: ir.Value) -> None:
        """A row of tiles from ``m0``: MR rows, or the tail's (one microkernel per row count)."""
        mr = self.mr
        rows_here = llvm_ir.sub(b, m_val, m0)
        with b.if_else(b.icmp_unsigned(">=", rows_here, i64(mr))) as (full, tail):
            with full:
                self._columns(b, mr, table, bp, c, bias, other, m0, ct0, ct1)
            with tail:
                for rows in tails:
                    present = b.icmp_unsigned("==", rows_here, i64(rows)) if len(tails) > 1 else None
                    if present is None:
                        self._columns(b, rows, table, bp, c, bias, other, m0, ct0, ct1)
                        continue
                    with b.if_then(present):
                        self._columns(b, rows, table, bp, c, bias, other, m0, ct0, ct1)

    def _columns(self, b: ir.IRBuilder, rows: int, table: ir.Value, bp: ir.Value, c: ir.Value,
                 bias: ir.Value, other: ir.Value, m0: ir.Value, ct0: ir.Value, ct1: ir.Value) -> None:
        """Column tiles ``ct0..ct1`` of ``rows`` output pixels from ``m0`` (the table's rows)."""
        s, tw = self.spec, self.tw
        c_row = gep(b, c, llvm_ir.mul(b, m0, i64(s.ldc)))
        o_row = gep(b, other, llvm_ir.mul(b, m0, i64(s.other_pixel))) if s.binary else other
        full = self.uks.get((rows, False))
        tail = self.uks.get((rows, True))
        with for_range(b, ct0, ct1, name="ct") as ct:
            j = llvm_ir.mul(b, ct, i64(tw))
            args = [table, gep(b, bp, llvm_ir.mul(b, ct, i64(s.k * s.nr))), gep(b, c_row, j),
                    gep(b, bias, j) if s.bias else bias, gep(b, o_row, j) if s.binary else o_row]
            if tail is None:
                assert full is not None
                b.call(full, args)
            elif full is None:
                b.call(tail, args)
            else:
                last = b.icmp_unsigned("==", ct, i64(self.col_tiles - 1))
                with b.if_else(last) as (then, otherwise):
                    with then:
                        b.call(tail, args)
                    with otherwise:
                        b.call(full, args)

    def _fill_table(self, b: ir.IRBuilder, x: ir.Value, table: ir.Value, zero: ir.Value, m0: ir.Value,
                    m_val: ir.Value) -> None:
        """``table[seg*mr + i]``: where segment ``seg`` of output pixel ``m0 + i`` starts (the
        zero page past the ``m_val`` pixels)."""
        s, mr = self.spec, self.mr
        hw = s.out_h * s.out_w
        with for_range(b, 0, mr, name="row") as i:
            m = llvm_ir.add(b, m0, i)
            valid_m = b.icmp_signed("<", m, m_val)
            mm = b.select(valid_m, m, i64(0))
            n = llvm_ir.udiv(b, mm, i64(hw))
            r = llvm_ir.urem(b, mm, i64(hw))
            oy = llvm_ir.udiv(b, r, i64(s.out_w))
            ox = llvm_ir.urem(b, r, i64(s.out_w))
            iy0 = llvm_ir.sub(b, llvm_ir.mul(b, oy, i64(s.sh)), i64(s.ph))
            ix0 = llvm_ir.sub(b, llvm_ir.mul(b, ox, i64(s.sw)), i64(s.pw))
            base = gep(b, x, llvm_ir.mul(b, n, i64(s.in_batch)))
            kxs = 1 if s.row_segments else s.kw
            for ky in range(s.kh):
                iy = llvm_ir.add(b, iy0, i64(ky * s.dh))
                vy = llvm_ir.and_(b, valid_m, b.icmp_unsigned("<", iy, i64(s.in_h)))  # unsigned: negative -> huge
                row = llvm_ir.mul(b, iy, i64(s.in_row))
                for kx in range(kxs):
                    ix = llvm_ir.add(b, ix0, i64(kx * s.dw))
                    ok = vy if s.row_segments else llvm_ir.and_(b, vy, b.icmp_unsigned("<", ix, i64(s.in_w)))
                    ptr = b.select(ok, gep(b, base, llvm_ir.add(b, row, llvm_ir.mul(b, ix, i64(s.in_pixel)))), zero)
                    seg = ky * kxs + kx
                    b.store(ptr, gep(b, table, llvm_ir.add(b, i, i64(seg * mr))), align=8)
