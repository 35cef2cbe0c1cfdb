"""Static-shape f32 GEMM emitted into an ``llvmlite.ir.Module``.

:func:`emit_gemm` adds one externally visible function with the C ABI::

    void <spec.symbol>(const float *a, const float *b, float *c,
                       const float *bias, const float *other, float *workspace
                       [, int64_t m] [, int64_t batch] [, int64_t <spec.runtime field>]...);

(``m`` with ``spec.m_runtime``, ``batch`` with ``spec.batch_runtime``: at most the spec's
value, for which the blocking and the workspace are planned; a run-time ``m`` is split into as
many row tasks as the plan's, and its row tail runs the microkernel of that many rows: one of
each row count below the main tile, so that B is read once for a small ``m``.  The fields of
``spec.runtime`` (``n``, ``k``, leading dims, batch strides) follow: column tasks and K
blocks are counted at run time, B is packed into zero-padded panels, A is packed when ``lda``
is given, and with a run-time ``n`` or ``ldc`` each tile is computed into the workspace and
copied to C under a run-time column mask.)

``bias`` / ``other`` may be null when the spec has no bias / binary op;
``workspace`` must point to ``gemm_workspace_bytes(spec)`` bytes (64-byte
alignment recommended) or may be null when that is 0.  Several GEMMs can be
emitted into one module (identical microkernels and pack routines are shared).
The function is re-entrant: all scratch lives in the caller's workspace.

:func:`~ziggurat.backends.cpu.kernels.gemm_callable.gemm_callable` compiles a
spec on its own and wraps it for torch tensors.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.gemm_plan import TUNING, GemmPlan, make_plan, split_table
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpec, GemmSpecError
from ziggurat.backends.cpu.kernels.microkernel import FLAG_ACCUMULATE, FLAG_FINAL, TileAccess, emit_microkernel
from ziggurat.backends.cpu.kernels.pack_ir import emit_pack_a, emit_pack_b_kn, emit_pack_b_nk
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32P, I32, I64, VOID, for_range, gep, i64
from ziggurat.backends.cpu.threads import emit_parallel_for

__all__ = ["GemmSpec", "GemmSpecError", "emit_gemm", "gemm_workspace_bytes", "gc_paused"]


def gemm_workspace_bytes(spec: GemmSpec, plan: GemmPlan | None = None) -> int:
    """Bytes of scratch the emitted function needs (0: ``workspace`` may be null)."""
    plan = make_plan(spec) if plan is None else plan
    return plan.ws_thread_floats * plan.threads * 4


def emit_gemm(module: ir.Module, spec: GemmSpec, plan: GemmPlan | None = None) -> ir.Function:
    """Emit ``spec`` into ``module``; returns the entry function.

    ``plan`` overrides the blocking/threading decisions of :func:`make_plan`."""
    if not isinstance(spec, GemmSpec):
        raise GemmSpecError(f"emit_gemm expects a GemmSpec, got {type(spec).__name__}")
    sym = spec.symbol
    if sym in module.globals:
        raise GemmSpecError(f"module already has a symbol named {sym!r}; give the GemmSpec a distinct name")
    plan = make_plan(spec) if plan is None else plan
    with gc_paused():
        return _GemmEmitter(module, spec, plan).emit()


@contextmanager
def gc_paused() -> Iterator[None]:
    """llvmlite allocates many small objects; cyclic GC passes during emission
    cost about as much as the emission itself."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _GemmEmitter:
    def __init__(self, module: ir.Module, spec: GemmSpec, plan: GemmPlan) -> None:
        self.module = module
        self.spec = spec
        self.plan = plan
        self.vec = VecOps(module, spec.isa)  # type: ignore[arg-type]
        self.sym = spec.symbol
        #: the run-time fields of the function being emitted (the entry's or the task body's)
        self.rt: dict[str, ir.Value] = {}
        self.ws_c: ir.Value = ir.Constant(F32P, None)
        #: a run-time m's thread split per bound on m (gemm_plan.split_table)
        self.splits = split_table(spec, plan)
        #: the row splits and columns per task of the function being emitted
        self.sm: ir.Value = i64(plan.tasks_m)
        self.nt: ir.Value = i64(plan.nt)
        # Streaming prefetch of the next B micro-panel (see GemmPlan.prefetch_stream).
        self.stream = (plan.prefetch_stream and plan.cols_outer and spec.b_packed and plan.tw == spec.nr
                       and plan.unroll > 1)

    # -- helper functions ---------------------------------------------------
    def _access(self) -> TileAccess:
        s, p = self.spec, self.plan
        if p.pack_a:
            a_rs, a_ks = 1, p.mr
        else:
            a_rs, a_ks = s.lda, 1  # type: ignore[assignment]
        ldc = p.tw if s.stages_c else s.ldc
        if s.b_packed:
            nr = s.nr
            assert nr is not None
            return TileAccess(a_rs, a_ks, b_ks=nr, b_nr=nr, b_panel_stride=s.k * nr, b_padded=True, ldc=ldc)  # type: ignore[arg-type]
        if p.pack_b:
            return TileAccess(a_rs, a_ks, b_ks=p.tw, b_nr=p.tw, b_panel_stride=p.kc * p.tw, b_padded=True, ldc=ldc)  # type: ignore[arg-type]
        return TileAccess(a_rs, a_ks, b_ks=s.ldb, b_nr=p.tw, b_panel_stride=p.tw, b_padded=False, ldc=s.ldc)  # type: ignore[arg-type]

    def _tail_rows(self) -> list[int]:
        """Row counts of the M-tail microkernels: the static tail, or with a run-time ``m``
        every count below MR."""
        s, p = self.spec, self.plan
        if s.m_runtime:
            return list(range(p.mr - 1, 0, -1))
        return [s.m % p.mr] if s.m % p.mr else []

    def _microkernels(self) -> dict[tuple[int, bool], ir.Function]:
        """Keyed by (rows, n tail)."""
        s, p = self.spec, self.plan
        access = self._access()
        ntail = 0 if "n" in s.runtime else s.n % p.tw  # a run-time tail: the full tile, staged
        uks: dict[tuple[int, bool], ir.Function] = {}
        for rows in [p.mr, *self._tail_rows()]:
            for n_is_tail in (False, True):
                cols = ntail if n_is_tail else p.tw
                if rows == 0 or cols == 0:
                    continue
                # Microkernels depend only on static parameters: GEMMs emitted
                # into the same module share identical ones.
                key = _digest(s.isa, rows, cols, access, s.epilogue, p.unroll, p.prefetch_b, self.stream)
                name = f"zig.uk{rows}x{cols}.{key}"
                existing = self.module.globals.get(name)
                uks[(rows, n_is_tail)] = existing if isinstance(existing, ir.Function) else emit_microkernel(
                    self.module, self.vec, name, rows, cols, access, s.epilogue, unroll=p.unroll,
                    prefetch_b=p.prefetch_b, prefetch_stream=self.stream,
                )
        return uks

    def _shared(self, emitter: Callable[..., ir.Function], kind: str, *params: Any) -> ir.Function:
        name = f"zig.{kind}.{_digest(self.spec.isa, *params)}"
        existing = self.module.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        return emitter(self.module, self.vec, name, *params)

    # -- entry --------------------------------------------------------------
    def emit(self) -> ir.Function:
        s, p = self.spec, self.plan
        runtime = s.runtime_sizes
        fn = ir.Function(self.module, ir.FunctionType(VOID, [F32P] * 6 + [I64] * len(runtime)), name=self.sym)
        for arg, nm in zip(fn.args, ("a", "b", "c", "bias", "other", "workspace", *runtime)):
            arg.name = nm
        fn.attributes.add("nounwind")
        self.uks = self._microkernels()
        lda = None if "lda" in s.runtime else s.lda
        self.pack_a_fn = self._shared(emit_pack_a, "packa", p.mr, p.kc, lda, tuple(self._tail_rows())) \
            if p.pack_a else None
        self.pack_b_fn = None
        if p.pack_b:
            emitter = emit_pack_b_nk if s.b_transposed else emit_pack_b_kn
            kind = "packbt" if s.b_transposed else "packb"
            ldb = None if "ldb" in s.runtime else s.ldb
            self.pack_b_fn = self._shared(emitter, kind, p.tw, p.kc, ldb, None if "n" in s.runtime else s.n % p.tw)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        sizes = dict(zip(runtime, fn.args[6:]))
        if not runtime:
            n_tasks: int | ir.Value = s.batch * p.tasks_m * p.tasks_n
            serial_when = None
        else:
            self.rt = {k: v for k, v in sizes.items()}
            self._choose_split(b)
            tasks_m = self._row_split(b, sizes["m"])[1] if "m" in sizes else i64(p.tasks_m)
            batch = sizes.get("batch", i64(s.batch))
            n_tasks = llvm_ir.mul(b, llvm_ir.mul(b, batch, tasks_m), self._tasks_n(b))
            # as the plan of a static GEMM of this size would: one thread below its flops floor
            rows = llvm_ir.mul(b, batch, sizes.get("m", i64(s.m)))
            flops = llvm_ir.mul(b, llvm_ir.mul(b, rows, self._f("n")), llvm_ir.mul(b, self._f("k"), i64(2)))
            serial_when = b.icmp_signed("<", flops, i64(2 * TUNING.min_flops_per_thread))
        emit_parallel_for(self.module, b, n_tasks, self._task_body, num_threads=p.threads,
                          captures=list(fn.args), name=f"{self.sym}.par", serial_when=serial_when)
        b.ret_void()
        return fn

    def _f(self, name: str) -> ir.Value:
        """A spec field's value: the run-time argument of the function being emitted, or the
        spec's constant."""
        hit = self.rt.get(name)
        if hit is not None:
            return hit
        s = self.spec
        if name in ("other_row_stride", "other_col_stride"):
            assert s.other_strides is not None
            return i64(s.other_strides[0 if name == "other_row_stride" else 1])
        return i64(getattr(s, name))

    def _choose_split(self, b: ir.IRBuilder) -> None:
        """``self.sm``/``self.nt`` for this call: the plan's, or from the split table by the
        run-time ``m`` (the first bound at or above it)."""
        self.sm, self.nt = i64(self.plan.tasks_m), i64(self.plan.nt)
        m = self.rt.get("m")
        if m is None:
            return
        for bound, sm, nt in reversed(self.splits):
            below = b.icmp_unsigned("<=", m, i64(bound))
            self.sm, self.nt = b.select(below, i64(sm), self.sm), b.select(below, i64(nt), self.nt)

    def _tasks_n(self, b: ir.IRBuilder) -> ir.Value:
        """Column tasks: the plan's, or as many of this call's width as ``n`` needs (a run-time
        ``n``, or a split chosen by the run-time ``m``)."""
        if "n" not in self.rt and not self.splits:
            return i64(self.plan.tasks_n)
        n = self._f("n")
        return llvm_ir.udiv(b, llvm_ir.add(b, n, llvm_ir.sub(b, self.nt, i64(1))), self.nt)

    def _task_body(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        s, p = self.spec, self.plan
        a, bmat, c, bias, other, ws = caps[:6]
        sizes = dict(zip(s.runtime_sizes, caps[6:]))
        self.rt = sizes
        self._choose_split(b)
        m_val = sizes.get("m", i64(s.m))
        mt, tasks_m = self._row_split(b, m_val) if "m" in sizes else (i64(p.mt), i64(p.tasks_m))
        ws_t = gep(b, ws, llvm_ir.mul(b, tid, i64(p.ws_thread_floats))) if p.ws_thread_floats else ws
        ws_a = ws_t
        ws_b = gep(b, ws_t, p.ws_a_floats)
        self.ws_c = gep(b, ws_t, p.ws_a_floats + p.ws_b_floats)
        per_batch = llvm_ir.mul(b, tasks_m, self._tasks_n(b))
        with for_range(b, begin, end, name="task") as t:
            bi = llvm_ir.udiv(b, t, per_batch)
            rem = llvm_ir.urem(b, t, per_batch)
            ni = llvm_ir.udiv(b, rem, tasks_m)
            mi = llvm_ir.urem(b, rem, tasks_m)
            m0 = llvm_ir.mul(b, mi, mt)
            n0 = llvm_ir.mul(b, ni, self.nt)
            mcnt = _umin(b, mt, llvm_ir.sub(b, m_val, m0))
            ncnt = _umin(b, self.nt, llvm_ir.sub(b, self._f("n"), n0))
            ops = _Operands(
                a=gep(b, a, llvm_ir.mul(b, bi, self._f("batch_stride_a"))),
                b=gep(b, bmat, llvm_ir.mul(b, bi, self._f("batch_stride_b"))),
                c=gep(b, c, llvm_ir.mul(b, bi, self._f("batch_stride_c"))),
                bias=bias,
                other=gep(b, other, llvm_ir.mul(b, bi, self._f("other_batch_stride"))) if s.binary else other,
                ws_a=ws_a,
                ws_b=ws_b,
            )
            if p.a_once:
                self._a_once(b, ops, m0, mcnt, n0, ncnt)
            else:
                n_end = llvm_ir.add(b, n0, ncnt)
                with for_range(b, n0, n_end, p.nc, name="jc") as jc:
                    ncur = _umin(b, i64(p.nc), llvm_ir.sub(b, n_end, jc))
                    self._k_blocks(b, ops, jc, ncur, m0, mcnt)

    def _row_split(self, b: ir.IRBuilder, m: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(rows per task, row tasks) of a run-time ``m``: as many row tasks as this call's split
        (the plan's for the largest ``m``, or the split table's), each a multiple of MR rows (at
        least one tile)."""
        p = self.plan
        per = llvm_ir.udiv(b, llvm_ir.add(b, m, llvm_ir.sub(b, self.sm, i64(1))), self.sm)
        mt = llvm_ir.mul(b, llvm_ir.udiv(b, llvm_ir.add(b, per, i64(p.mr - 1)), i64(p.mr)), i64(p.mr))
        mt = b.select(b.icmp_unsigned("==", mt, i64(0)), i64(p.mr), mt)
        return mt, llvm_ir.udiv(b, llvm_ir.add(b, m, llvm_ir.sub(b, mt, i64(1))), mt)

    def _k_block_params(self, b: ir.IRBuilder, kb: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
        """``(pc, kcur, flags)`` of K block ``kb``."""
        p = self.plan
        pc = llvm_ir.mul(b, kb, i64(p.kc))
        kcur = _umin(b, i64(p.kc), llvm_ir.sub(b, self._f("k"), pc))
        not_first = llvm_ir.zext(b, b.icmp_unsigned("!=", kb, i64(0)), I32)
        last = llvm_ir.zext(b, b.icmp_unsigned("==", kb, llvm_ir.sub(b, self._k_blocks_count(b), i64(1))), I32)
        flags = llvm_ir.or_(b, llvm_ir.mul(b, not_first, I32(FLAG_ACCUMULATE)), llvm_ir.mul(b, last, I32(FLAG_FINAL)))
        return pc, kcur, flags

    def _k_blocks_count(self, b: ir.IRBuilder) -> ir.Value:
        kc = self.plan.kc
        if "k" not in self.rt:
            return i64(-(-self.spec.k // kc))
        return llvm_ir.udiv(b, llvm_ir.add(b, self.rt["k"], i64(kc - 1)), i64(kc))

    def _pack_b(self, b: ir.IRBuilder, ops: _Operands, jc: ir.Value, ncur: ir.Value, pc: ir.Value,
                kcur: ir.Value) -> None:
        s = self.spec
        if self.pack_b_fn is None:
            return
        ldb = self._f("ldb")
        if s.b_transposed:
            src = gep(b, ops.b, llvm_ir.add(b, llvm_ir.mul(b, jc, ldb), pc))
        else:
            src = gep(b, ops.b, llvm_ir.add(b, llvm_ir.mul(b, pc, ldb), jc))
        b.call(self.pack_b_fn, [src, ops.ws_b, ncur, kcur] + ([ldb] if "ldb" in self.rt else []))

    def _pack_a(self, b: ir.IRBuilder, ops: _Operands, ic: ir.Value, mcur: ir.Value, pc: ir.Value,
                kcur: ir.Value) -> None:
        if self.pack_a_fn is None:
            return
        lda = self._f("lda")
        src = gep(b, ops.a, llvm_ir.add(b, llvm_ir.mul(b, ic, lda), pc))
        b.call(self.pack_a_fn, [src, ops.ws_a, mcur, kcur] + ([lda] if "lda" in self.rt else []))

    def _a_once(self, b: ir.IRBuilder, ops: _Operands, m0: ir.Value, mcnt: ir.Value, n0: ir.Value,
                ncnt: ir.Value) -> None:
        """All task rows fit one A block: pack it once per K block and sweep
        every column block with it (pc -> jc order)."""
        p = self.plan
        nkb = self._k_blocks_count(b)
        n_end = llvm_ir.add(b, n0, ncnt)
        with for_range(b, 0, nkb, name="kb") as kb:
            pc, kcur, flags = self._k_block_params(b, kb)
            self._pack_a(b, ops, m0, mcnt, pc, kcur)
            with for_range(b, n0, n_end, p.nc, name="jc") as jc:
                ncur = _umin(b, i64(p.nc), llvm_ir.sub(b, n_end, jc))
                self._pack_b(b, ops, jc, ncur, pc, kcur)
                self._tiles(b, ops, m0, mcnt, jc, ncur, pc, kcur, flags)

    def _k_blocks(self, b: ir.IRBuilder, ops: _Operands, jc: ir.Value, ncur: ir.Value, m0: ir.Value, mcnt: ir.Value) -> None:
        """BLIS order for one column block: pc -> (pack B) -> ic -> (pack A) -> tiles."""
        p = self.plan
        nkb = self._k_blocks_count(b)
        with for_range(b, 0, nkb, name="kb") as kb:
            pc, kcur, flags = self._k_block_params(b, kb)
            self._pack_b(b, ops, jc, ncur, pc, kcur)
            m_end = llvm_ir.add(b, m0, mcnt)
            with for_range(b, m0, m_end, p.mc, name="ic") as ic:
                mcur = _umin(b, i64(p.mc), llvm_ir.sub(b, m_end, ic))
                self._pack_a(b, ops, ic, mcur, pc, kcur)
                self._tiles(b, ops, ic, mcur, jc, ncur, pc, kcur, flags)

    def _row_tails(self, b: ir.IRBuilder, mcur: ir.Value) -> list[tuple[int, ir.Value, ir.Value]]:
        """The M tail of a block of ``mcur`` rows as microkernel calls: (rows, first row after
        the full tiles, condition): the static tail, or the run-time one (``mcur % mr``), one
        condition per row count, of which one holds."""
        p = self.plan
        tails = self._tail_rows()
        if not tails:
            return []
        rem = llvm_ir.urem(b, mcur, i64(p.mr))
        if not self.spec.m_runtime:
            return [(tails[0], i64(0), b.icmp_unsigned("!=", rem, i64(0)))]
        return [(rows, i64(0), b.icmp_unsigned("==", rem, i64(rows))) for rows in tails]

    def _a_tile(self, b: ir.IRBuilder, ops: _Operands, ic: ir.Value, ir_idx: ir.Value, skip: ir.Value,
                pc: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(first row, A tile) of row tile ``ir_idx`` of the block at ``ic``, ``skip`` rows in."""
        p = self.plan
        i = llvm_ir.add(b, llvm_ir.add(b, ic, llvm_ir.mul(b, ir_idx, i64(p.mr))), skip)
        if p.pack_a:  # a packed panel holds row r of k at k * mr + r
            return i, gep(b, ops.ws_a, llvm_ir.add(b, llvm_ir.mul(b, ir_idx, i64(p.mr * p.kc)), skip))
        return i, gep(b, ops.a, llvm_ir.add(b, llvm_ir.mul(b, i, i64(self.spec.lda)), pc))  # type: ignore[arg-type]

    def _tiles(self, b: ir.IRBuilder, ops: _Operands, ic: ir.Value, mcur: ir.Value, jc: ir.Value,
               ncur: ir.Value, pc: ir.Value, kcur: ir.Value, flags: ir.Value) -> None:
        p = self.plan
        m_full = llvm_ir.udiv(b, mcur, i64(p.mr))
        n_full = llvm_ir.udiv(b, ncur, i64(p.tw))

        def row_of_tiles(ir_idx: ir.Value, rows: int, skip: ir.Value) -> None:
            i, a_tile = self._a_tile(b, ops, ic, ir_idx, skip, pc)
            uk = self.uks.get((rows, False))
            if uk is not None:
                with for_range(b, 0, n_full, name="jr") as jr:
                    j = llvm_ir.add(b, jc, llvm_ir.mul(b, jr, i64(p.tw)))
                    self._call_uk(b, uk, ops, a_tile, i, j, jc, pc, kcur, flags, rows=rows)
            uk_t = self._tail_uk(rows)
            if uk_t is not None:
                with b.if_then(b.icmp_unsigned("!=", llvm_ir.urem(b, ncur, i64(p.tw)), i64(0))):
                    j = llvm_ir.add(b, jc, llvm_ir.mul(b, n_full, i64(p.tw)))
                    self._call_uk(b, uk_t, ops, a_tile, i, j, jc, pc, kcur, flags, rows=rows)

        if p.cols_outer:
            self._tiles_cols_outer(b, ops, ic, mcur, jc, ncur, pc, kcur, flags)
            return
        with for_range(b, 0, m_full, name="ir") as ir_idx:
            row_of_tiles(ir_idx, p.mr, i64(0))
        for rows, skip, present in self._row_tails(b, mcur):
            with b.if_then(present):
                row_of_tiles(m_full, rows, skip)

    def _tiles_cols_outer(self, b: ir.IRBuilder, ops: _Operands, ic: ir.Value, mcur: ir.Value, jc: ir.Value,
                          ncur: ir.Value, pc: ir.Value, kcur: ir.Value, flags: ir.Value) -> None:
        """The block's tiles column by column: each B micro-panel serves every row tile in turn."""
        p = self.plan
        m_full = llvm_ir.udiv(b, mcur, i64(p.mr))
        n_full = llvm_ir.udiv(b, ncur, i64(p.tw))
        tails = self._row_tails(b, mcur)

        def column_of_tiles(j: ir.Value, n_tail: bool) -> None:
            def tile(ir_idx: ir.Value, rows: int, skip: ir.Value) -> None:
                uk = self._tail_uk(rows) if n_tail else self.uks.get((rows, False))
                if uk is None:
                    return
                i, a_tile = self._a_tile(b, ops, ic, ir_idx, skip, pc)
                self._call_uk(b, uk, ops, a_tile, i, j, jc, pc, kcur, flags, ir_idx, rows=rows)

            with for_range(b, 0, m_full, name="ir") as ir_idx:
                tile(ir_idx, p.mr, i64(0))
            for rows, skip, present in tails:
                if (self._tail_uk(rows) if n_tail else self.uks.get((rows, False))) is not None:
                    with b.if_then(present):
                        tile(m_full, rows, skip)

        if any(not n_tail for _rows, n_tail in self.uks):
            with for_range(b, 0, n_full, name="jr") as jr:
                column_of_tiles(llvm_ir.add(b, jc, llvm_ir.mul(b, jr, i64(p.tw))), False)
        if any(n_tail for _rows, n_tail in self.uks) or "n" in self.spec.runtime:
            with b.if_then(b.icmp_unsigned("!=", llvm_ir.urem(b, ncur, i64(p.tw)), i64(0))):
                column_of_tiles(llvm_ir.add(b, jc, llvm_ir.mul(b, n_full, i64(p.tw))), True)

    def _tail_uk(self, rows: int) -> ir.Function | None:
        """The microkernel of a column tail: its own (static ``n``), or with a run-time ``n``
        the full-width one, staged (its columns past ``n`` read zero-padded B and are not
        copied out)."""
        if "n" in self.spec.runtime:
            return self.uks.get((rows, False))
        return self.uks.get((rows, True))

    def _staged(self, b: ir.IRBuilder, uk: ir.Function, args: list[ir.Value], c_tile: ir.Value, j: ir.Value,
                flags: ir.Value, rows: int) -> None:
        """The tile computed into the workspace (``ldc`` = tile width) and its columns below
        ``n`` copied to C (``ldc`` and ``n`` at run time); a later K block first copies the
        partial tile back in."""
        p, vec = self.plan, self.vec
        w = vec.width
        ldc = self._f("ldc")
        cols = _umin(b, i64(p.tw), llvm_ir.sub(b, self._f("n"), j))

        def each(copy: Callable[[ir.Value, ir.Value, ir.Value], None]) -> None:
            for r in range(rows):
                row = gep(b, c_tile, llvm_ir.mul(b, i64(r), ldc))
                for v in range(p.nvec):
                    copy(gep(b, row, v * w), gep(b, self.ws_c, r * p.tw + v * w), llvm_ir.sub(b, cols, i64(v * w)))

        accumulate = b.icmp_unsigned("!=", llvm_ir.and_(b, flags, I32(FLAG_ACCUMULATE)), I32(0))
        with b.if_then(accumulate):
            each(lambda c, t, n: vec.copy_lanes(b, c, t, n))
        b.call(uk, args[:2] + [self.ws_c] + args[3:])
        each(lambda c, t, n: vec.copy_lanes(b, t, c, n))

    def _call_uk(self, b: ir.IRBuilder, uk: ir.Function, ops: _Operands, a_tile: ir.Value, i: ir.Value,
                 j: ir.Value, jc: ir.Value, pc: ir.Value, kcur: ir.Value, flags: ir.Value,
                 row_tile: ir.Value | None = None, rows: int = 0) -> None:
        s, p = self.spec, self.plan
        if s.b_packed:
            nr = s.nr
            assert nr is not None
            panel_off = llvm_ir.mul(b, llvm_ir.udiv(b, j, i64(nr)), i64(s.k * nr))
            b_tile = gep(b, ops.b, llvm_ir.add(b, llvm_ir.add(b, panel_off, llvm_ir.urem(b, j, i64(nr))), llvm_ir.mul(b, pc, i64(nr))))
        elif p.pack_b:
            b_tile = gep(b, ops.ws_b, llvm_ir.mul(b, llvm_ir.udiv(b, llvm_ir.sub(b, j, jc), i64(p.tw)), i64(p.kc * p.tw)))
        else:
            b_tile = gep(b, ops.b, llvm_ir.add(b, llvm_ir.mul(b, pc, i64(s.ldb)), j))  # type: ignore[arg-type]
        c_tile = gep(b, ops.c, llvm_ir.add(b, llvm_ir.mul(b, i, self._f("ldc")), j))
        bias_tile = gep(b, ops.bias, j) if s.bias else ops.bias
        if s.binary:
            ors, ocs = self._f("other_row_stride"), self._f("other_col_stride")
            other_tile = gep(b, ops.other, llvm_ir.add(b, llvm_ir.mul(b, i, ors), llvm_ir.mul(b, j, ocs)))
        else:
            other_tile = ops.other
        args = [a_tile, b_tile, c_tile, kcur, flags, bias_tile, other_tile]
        if self.stream:
            # Row tile r prefetches share r % q of the next column's micro-panel: q calls of
            # kc/2 lines each cover its kc*tw/16 lines.
            q = max(1, p.tw // 8)
            share = llvm_ir.urem(b, row_tile, i64(q)) if row_tile is not None else i64(0)
            per_call = llvm_ir.mul(b, llvm_ir.udiv(b, kcur, i64(p.unroll)), i64(32))
            args.append(gep(b, b_tile, llvm_ir.add(b, i64(s.k * s.nr), llvm_ir.mul(b, share, per_call))))  # type: ignore[operator]
        if s.epilogue.other_runtime:
            args += [self._f("other_row_stride"), self._f("other_col_stride")]
        if s.stages_c:
            self._staged(b, uk, args, c_tile, j, flags, rows)
            return
        b.call(uk, args)


class _Operands:
    def __init__(self, a: ir.Value, b: ir.Value, c: ir.Value, bias: ir.Value, other: ir.Value,
                 ws_a: ir.Value, ws_b: ir.Value) -> None:
        self.a, self.b, self.c, self.bias, self.other, self.ws_a, self.ws_b = a, b, c, bias, other, ws_a, ws_b


def _digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def _umin(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_unsigned("<", x, y), x, y)
