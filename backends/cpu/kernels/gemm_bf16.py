"""bf16 GEMM emitted into an ``llvmlite.ir.Module``: AMX tiles or AVX512-BF16.

:func:`emit_bf16_gemm` adds one externally visible function with the C ABI::

    void <symbol>(const uint16_t *a, const uint16_t *b_packed, void *c,
                  const float *bias, const void *other, void *unused);

(see :class:`~ziggurat.backends.cpu.kernels.gemm_bf16_spec.Bf16GemmSpec`), the ABI of the
float32 GEMM's entry (its sixth argument, the workspace, is not read).  An AMX kernel's symbol
ends in :data:`~ziggurat.backends.cpu.kernels.amx.AMX_SYMBOL_SUFFIX`: loading object code that
defines one asks the OS for the tile permission first (:mod:`~ziggurat.backends.cpu.jit`).

The work is split in tasks of (a chunk of up to ``MC`` rows, one 32-column panel of B), run
in parallel.  A task walks its chunk 32 rows at a time: each 32x32 block of products is
computed in float32 into a stack scratch (AMX: 2x2 tiles of 16x16, ``tdpbf16ps`` over
32-deep steps of K, up to :data:`AMX_GROUP` blocks a call, a long K in passes over the
group's blocks that keep the panel's slice in L1 (:func:`k_passes`); AVX512-BF16: rows of 16-float
accumulators and ``vdpbf16ps`` over pairs of K), then the epilogue reads the scratch, adds the
bias, applies the post-ops, rounds to bf16 and stores only the valid rows and columns.  The
AMX kernel runs a block's epilogue after the next block's products are issued, so that the
vector units work while the tile unit does (a transcendental's long epilogue excepted).

Both kernels prefetch the next panel of packed weights into L2 at each K step (weights come
cold from memory in a model: 128x2304x768 over 96 MB of weights, 1 thread, AVX512-BF16
374 -> 483 GFLOP/s on Zen 5, AMX 657 -> 705 on Emerald Rapids).  The AMX kernel also
prefetches a block's lines of a float32 C for writing (and of a residual for reading) before
its products (:meth:`_Emitter._prefetch_block_lines`).  With a run-time B, a large A (a
convolution's weights, :data:`PREFETCH_A_BYTES`) is prefetched into L2 a block of rows ahead:
ResNet-50's bf16 layer-4 1x1 convolutions went from 0.43 to 0.30 ms.

A rows are read in place; the last step of a K that is not a multiple of 32 reads them
through a zero-padded copy, so no element past a row is ever read (an Inf or NaN there would
turn a zero product into NaN), unless the rows are zero-padded already (``a_padded``, a
weight): the AVX512-BF16 kernel then reads that step in place too.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.codegen.bf16 import bf16_to_f32, f32_to_bf16, round_f32_to_bf16
from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.bf16_specials import HUGE, SCAN, SUBNORMAL, emit_scan
from ziggurat.backends.cpu.kernels.bf16_tables import look_up, table_global
from ziggurat.backends.cpu.kernels.gemm import gc_paused
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.backends.cpu.kernels.pack_bf16 import K_STEP, PANEL, packed_elements, padded_k, panels
from ziggurat.backends.cpu.kernels.staged_epilogue import activate_tile, stages
from ziggurat.backends.cpu.kernels.unary import commutes_with_rounding, emit_unary
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32, F32P, I1, I8P, I32, I64, VOID, declare, for_range, gep, i64, splat, splat_constant
from ziggurat.backends.cpu.llvm_ir import instr as _i
from ziggurat.backends.cpu.threads import emit_parallel_for

I16 = ir.IntType(16)
I16P = I16.as_pointer()
V16F = ir.VectorType(F32, 16)
V16I16 = ir.VectorType(I16, 16)
V16I32 = ir.VectorType(I32, 16)
BLOCK = 32  # rows and columns of one block of products
ROW_GROUP = 8  # AVX512-BF16: rows of accumulators held at once (2 vectors each)


#: With a run-time B, an A of at least this many bytes (a convolution's weights) is prefetched a block ahead:
#: they come cold from memory in a model, and the 32 rows a block reads at once are more streams
#: than the hardware prefetcher follows.  Smaller ones stay in L2 across the image's panels.
#: 2048x49x512 (ResNet-50's layer 4), weights cycled over 64 MB, 1 thread: 213 -> 351 GFLOP/s.
PREFETCH_A_BYTES = 256 * 1024

#: AMX with a bf16 C: a residual of at least this many bytes has its lines of a block requested
#: before the block's products (C's are not; see ``_prefetch_block_lines``).  A smaller one
#: stays in L2 from the kernel that wrote it.  0: never.
PREFETCH_BF16_RESIDUAL_BYTES = 1 << 20

#: AMX: blocks of 32 rows whose products one call computes (their float32 sums, 4 KB a block,
#: wait in the task's scratch for their epilogues)
AMX_GROUP = 8

#: AMX: steps of K (32 each) of one pass over a group's blocks, when K is split (:func:`k_passes`)
K_PASS_STEPS = 8
#: AMX: the fewest blocks of a chunk whose K is split in passes (fewer read the slice too few times)
K_PASS_BLOCKS = 4
#: AMX: the fewest blocks of a chunk whose K, at most :data:`K_PASS_FEW_STEPS` steps, is split
#: (GPT-2's 64-row linears, 1 thread: 64x3072x768 +9 %, 64x2304x768 +10 %, 64x768x768 +7 %;
#: at K = 3072 or 4608, two blocks a chunk lost 5-15 %)
K_PASS_FEW_BLOCKS = 2
K_PASS_FEW_STEPS = 32


def pass_blocks(steps: int) -> int | None:
    """AMX: the fewest blocks a chunk needs for its ``steps`` of K to be split in passes
    (:func:`k_passes`), or None where K is too short to split."""
    if steps < 2 * K_PASS_STEPS:
        return None
    return K_PASS_FEW_BLOCKS if steps <= K_PASS_FEW_STEPS else K_PASS_BLOCKS


def k_passes(steps: int, chunk: int) -> tuple[int, int]:
    """AMX: how a block's ``steps`` of K are split, as (steps of each pass but the last, passes
    before the last).  A long K over a chunk of at least :func:`pass_blocks` blocks runs in
    passes of at most :data:`K_PASS_STEPS` steps: the weights' slice of a pass (16 KB) stays in
    L1 while each block of the group reads it, where a whole panel (K x 32 x 2 bytes: 64 KB
    at K = 1024) does not fit and each block read both operands from L2.  Each block's partial
    sums wait in ``cs`` between passes.  The passes are as even as possible (18 steps: 6, 6, 6,
    not 8, 8, 2).  A short K, or a small chunk, is one pass: ``(steps, 0)``."""
    need = pass_blocks(steps)
    if need is None or chunk // BLOCK < need:
        return (steps, 0)
    count = -(-steps // K_PASS_STEPS)
    size = -(-steps // count)
    before = -(-steps // size) - 1  # the last pass: 1 .. size steps
    return (size, before)


V32BF = llvm_ir.NamedType("<32 x bfloat>")  # the operand type of LLVM's vdpbf16ps intrinsic


def chunk_rows(spec: Bf16GemmSpec) -> int:
    """Rows of A per task: a chunk of A stays in L2 while the task's B panel streams."""
    if spec.b_conv is not None:  # one chunk: the image's panel is gathered once, not per chunk
        return -(-spec.m // BLOCK) * BLOCK
    budget = 512 * 1024  # bytes of A per chunk
    # AMX with a long K: chunks of the blocks it takes to split K in passes (BERT's 128x768x3072,
    # 1 thread: 677 -> 774 GFLOP/s)
    need = pass_blocks(padded_k(spec.k) // K_STEP) if spec.kernel == "amx" else None
    least = BLOCK * (need or 1)
    rows = min(max(least, (budget // max(1, 2 * spec.k)) // BLOCK * BLOCK), -(-spec.m // BLOCK) * BLOCK)
    # chunks of equal rows: threads take whole runs of (chunk, panel) tasks, and a 2720-row chunk
    # beside a 416-row one left one of two threads idle most of the time (ConvNeXt's 3136x384x96
    # GELU GEMM, 2 threads: 0.78 ms, against 0.91 on one)
    chunks = -(-spec.m // rows)
    return -(-(-(-spec.m // chunks)) // BLOCK) * BLOCK


def row_groups(rows: int) -> list[tuple[int, int]]:
    """(first row, row count) of the AVX512-BF16 kernel's groups of accumulator rows in a block
    of ``rows``: at most :data:`ROW_GROUP` each, as even as possible.  A 17-row tail (a 7x7
    image's 49 pixel rows) is 6 + 6 + 5, not 8 + 8 + 1, whose one-row group's two accumulators
    wait on ``vdpbf16ps``' latency at each step of K."""
    count = -(-rows // ROW_GROUP)
    base, extra = divmod(rows, count)
    groups, first = [], 0
    for i in range(count):
        size = base + (1 if i < extra else 0)
        groups.append((first, size))
        first += size
    return groups


def _halves(b: ir.IRBuilder, pairs: ir.Value) -> tuple[ir.Value, ir.Value]:
    """32-bit lanes of bf16 pairs (the even K in the low half) -> the two float32 vectors."""
    low = _i(b.shl(pairs, splat_constant(V16I32, 16)))
    high = _i(b.and_(pairs, splat_constant(V16I32, -65536)))
    return _i(b.bitcast(low, V16F)), _i(b.bitcast(high, V16F))


def entry_symbol(spec: Bf16GemmSpec) -> str:
    return amx.entry_symbol(spec.symbol, spec.kernel)


def emit_bf16_gemm(module: ir.Module, spec: Bf16GemmSpec) -> ir.Function:
    if not isinstance(spec, Bf16GemmSpec):
        raise GemmSpecError(f"emit_bf16_gemm expects a Bf16GemmSpec, got {type(spec).__name__}")
    if entry_symbol(spec) in module.globals:
        raise GemmSpecError(f"module already has a symbol named {entry_symbol(spec)!r}")
    with gc_paused():
        return _Emitter(module, spec).emit()


class _Emitter:
    def __init__(self, module: ir.Module, spec: Bf16GemmSpec) -> None:
        self.module = module
        self.spec = spec
        self.vec = VecOps(module, Isa.AVX512)
        self.kp = padded_k(spec.k)
        self.steps = self.kp // K_STEP  # 32-deep steps of K, the last zero-padded past K
        self.mc = chunk_rows(spec)
        self.lda: int = spec.lda if spec.lda is not None else spec.k
        self.ldc: int = spec.ldc if spec.ldc is not None else spec.n
        self.prefetch_a = not spec.b_packed and spec.m * spec.k * 2 >= PREFETCH_A_BYTES
        residual_bytes = spec.m * spec.n * (2 if spec.other_bf16 else 4)
        self.prefetch_residual = (spec.binary is not None and PREFETCH_BF16_RESIDUAL_BYTES > 0
                                  and residual_bytes >= PREFETCH_BF16_RESIDUAL_BYTES)

    # -- entry and task loop ------------------------------------------------------------
    def emit(self) -> ir.Function:
        s = self.spec
        fnty = ir.FunctionType(VOID, [F32P] * 6)
        fn = ir.Function(self.module, fnty, name=entry_symbol(s))
        for arg in fn.args[:3]:
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        args = [_i(b.bitcast(fn.args[0], I16P)), _i(b.bitcast(fn.args[1], I16P)), _i(b.bitcast(fn.args[2], I8P)),
                fn.args[3], _i(b.bitcast(fn.args[4], I8P))]
        if s.exact_path:
            args.append(self._exact_needed(b, args[0], args[1]))
        n_tasks = s.batch * -(-s.m // self.mc) * panels(s.n)
        emit_parallel_for(self.module, b, n_tasks, self._task_body, s.threads or 1,
                          captures=args, name=f"{s.symbol}.tasks")
        b.ret_void()
        return fn

    def _exact_needed(self, b: ir.IRBuilder, a: ir.Value, bp: ir.Value) -> ir.Value:
        """An ``i1``: whether this call's operands hold a subnormal and a huge value that meet
        (:mod:`~ziggurat.backends.cpu.kernels.bf16_specials`), the run-time ones scanned."""
        s = self.spec

        def classes(specials: int, scan: Callable[[], ir.Value]) -> ir.Value:
            return scan() if specials == SCAN else i64(specials)

        a_batches = s.batch if s.batch_stride_a else 1
        fa = classes(s.a_specials, lambda: emit_scan(b, a, a_batches, s.batch_stride_a, s.m, self.lda, s.k))
        b_batches = s.batch if s.batch_stride_b else 1
        if s.b_packed:
            region = (1, packed_elements(s.k, s.n), packed_elements(s.k, s.n))
        elif s.b_conv is not None:
            plane, _, kh, kw, _, _, sh, sw = s.b_conv
            size = s.k // (kh * kw) * sh * sw * plane
            region = (1, size, size)
        elif s.b_transposed:
            region = (s.n, s.ldb or s.k, s.k)
        else:
            region = (s.k, s.ldb or s.n, s.n)
        fb = classes(s.b_specials, lambda: emit_scan(b, bp, b_batches, s.batch_stride_b, *region))

        def has(flags: ir.Value, kind: int) -> ir.Value:
            return _i(b.icmp_unsigned("!=", _i(b.and_(flags, i64(kind))), i64(0)))

        return _i(b.or_(_i(b.and_(has(fa, SUBNORMAL), has(fb, HUGE))), _i(b.and_(has(fa, HUGE), has(fb, SUBNORMAL)))))

    def _task_body(self, b: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value,
                   caps: list[ir.Value]) -> None:
        del tid
        s = self.spec
        a, bp, c, bias, other = caps[:5]
        exact = caps[5] if s.exact_path else None  # i1: the products in float32 FMAs this call
        group = AMX_GROUP if s.kernel == "amx" else 1  # blocks whose products one call computes
        scratch = b.alloca(ir.ArrayType(F32, BLOCK * BLOCK * group), name="cblock")
        scratch.align = 64  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's __init__ sets None
        cs = _i(b.bitcast(scratch, F32P))
        a_tail: ir.Value | None = None  # None: every step of K is read in place
        if s.k % K_STEP and not (s.a_padded and s.kernel != "amx"):
            buf = b.alloca(ir.ArrayType(I16, BLOCK * K_STEP * group), name="atail")
            buf.align = 64  # pyright: ignore[reportAttributeAccessIssue]
            a_tail = _i(b.bitcast(buf, I16P))
            row_ty = ir.VectorType(I16, K_STEP)
            # zeroed a row at a time: one aggregate store of the buffer took LLVM's optimizer seconds
            with for_range(b, 0, BLOCK * group, name="atail.zero") as i:
                b.store(ir.Constant(row_ty, None), _i(b.bitcast(gep(b, a_tail, llvm_ir.mul(b, i, i64(K_STEP))),
                                                                row_ty.as_pointer())), align=2)
        bpack: ir.Value | None = None
        if not s.b_packed:
            pbuf = b.alloca(ir.ArrayType(I16, self.kp * PANEL), name="bpanel")
            pbuf.align = 64  # pyright: ignore[reportAttributeAccessIssue]
            bpack = _i(b.bitcast(pbuf, I16P))
        npan = panels(s.n)
        n_chunks = -(-s.m // self.mc)
        m_full = s.m - s.m % BLOCK
        out_bytes, other_bytes = (2 if s.out_bf16 else 4), (2 if s.other_bf16 else 4)
        with for_range(b, begin, end, name="task") as t:
            bi = llvm_ir.udiv(b, t, i64(n_chunks * npan))
            rest = llvm_ir.urem(b, t, i64(n_chunks * npan))
            chunk = llvm_ir.udiv(b, rest, i64(npan))
            panel = llvm_ir.urem(b, rest, i64(npan))
            a_b = gep(b, a, llvm_ir.mul(b, bi, i64(s.batch_stride_a)))
            c_b = gep(b, c, llvm_ir.mul(b, bi, i64(s.batch_stride_c * out_bytes)))
            other_b = gep(b, other, llvm_ir.mul(b, bi, i64(s.other_batch_stride * other_bytes)))
            b_b = gep(b, bp, llvm_ir.mul(b, bi, i64(s.batch_stride_b)))
            m0 = llvm_ir.mul(b, chunk, i64(self.mc))
            m_end = _i(b.select(_i(b.icmp_signed("<", llvm_ir.add(b, m0, i64(self.mc)), i64(m_full))),
                             llvm_ir.add(b, m0, i64(self.mc)), i64(m_full)))
            col0 = llvm_ir.mul(b, panel, i64(PANEL))
            if bpack is None:
                b_panel = gep(b, b_b, llvm_ir.mul(b, panel, i64((self.kp // 2) * PANEL * 2)))
            else:
                b.call(self._pack_function(), [b_b, col0, bpack])
                b_panel = bpack
            cols = llvm_ir.sub(b, i64(s.n), col0)  # valid columns of this panel (>= 1; clipped by the masks)
            blocks = (m0, m_end, m_full, chunk, n_chunks, a_b, b_panel, cs, a_tail, c_b, bias, other_b, col0, cols)
            if s.kernel == "amx":
                if exact is None:
                    self._amx_blocks(b, *blocks)
                else:
                    with b.if_else(exact) as (slow, fast):
                        with slow:
                            self._blocks(b, *blocks, exact)
                        with fast:
                            self._amx_blocks(b, *blocks)
            else:
                self._blocks(b, *blocks, exact)

    def _amx_blocks(self, b: ir.IRBuilder, m0: ir.Value, m_end: ir.Value, m_full: int, chunk: ir.Value,
                    n_chunks: int, a_b: ir.Value, b_panel: ir.Value, cs: ir.Value, a_tail: ir.Value | None,
                    c_b: ir.Value, bias: ir.Value, other_b: ir.Value, col0: ir.Value, cols: ir.Value) -> None:
        """A task's blocks of rows ``m0 .. m_end`` (and the last chunk's tail block) on AMX, in groups."""
        s = self.spec
        with for_range(b, m0, m_end, step=AMX_GROUP * BLOCK, name="group") as g0:
            g_next = llvm_ir.add(b, g0, i64(AMX_GROUP * BLOCK))
            g_end = _i(b.select(_i(b.icmp_signed("<", g_next, m_end)), g_next, m_end))
            self._amx_group(b, BLOCK, g0, g_end, a_b, b_panel, cs, a_tail, c_b, bias, other_b, col0, cols)
        if s.m % BLOCK:
            with b.if_then(_i(b.icmp_signed("==", chunk, i64(n_chunks - 1)))):
                self._amx_group(b, s.m % BLOCK, i64(m_full), i64(m_full + BLOCK), a_b, b_panel, cs, a_tail,
                                c_b, bias, other_b, col0, cols)

    def _blocks(self, b: ir.IRBuilder, m0: ir.Value, m_end: ir.Value, m_full: int, chunk: ir.Value, n_chunks: int,
                a_b: ir.Value, b_panel: ir.Value, cs: ir.Value, a_tail: ir.Value | None, c_b: ir.Value,
                bias: ir.Value, other_b: ir.Value, col0: ir.Value, cols: ir.Value, exact: ir.Value | None) -> None:
        """A task's blocks one at a time, products then epilogue: the AVX512-BF16 kernel's, and
        the exact path of either kernel (``exact``: an ``i1``, the exact products when true)."""
        s = self.spec
        pre = b.block
        loop = b.function.append_basic_block("blocks.body")
        after = b.function.append_basic_block("blocks.done")
        b.cbranch(_i(b.icmp_signed("<", m0, m_end)), loop, after)
        b.position_at_end(loop)
        row = b.phi(I64, name="row")
        row.add_incoming(m0, pre)
        nxt = llvm_ir.add(b, row, i64(BLOCK))
        ahead = _i(b.select(_i(b.icmp_signed("<", nxt, m_end)), nxt, m0))  # then the next panel's first
        self._block(b, BLOCK, row, a_b, b_panel, cs, a_tail, c_b, bias, other_b, col0, cols, ahead, exact)
        row.add_incoming(nxt, b.block)
        b.cbranch(_i(b.icmp_signed("<", nxt, m_end)), loop, after)
        b.position_at_end(after)
        if s.m % BLOCK:
            last = _i(b.icmp_signed("==", chunk, i64(n_chunks - 1)))
            with b.if_then(last):
                self._block(b, s.m % BLOCK, i64(m_full), a_b, b_panel, cs, a_tail, c_b, bias, other_b, col0, cols,
                            m0, exact)

    def _pack_function(self) -> ir.Function:
        """``pack(b, col0, dst)``: the run-time B's panel of columns ``col0 .. col0+31`` into
        ``dst`` in the prepacked layout, zeros past K and N.  Indices are clamped into the
        matrix before each load, so nothing outside it is read."""
        s = self.spec
        name = f"{s.symbol}.pack"
        existing = self.module.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        fn = ir.Function(self.module, ir.FunctionType(VOID, [I16P, I64, I16P]), name=name)
        fn.linkage = "internal"
        src, col0, dst = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        ldb = s.ldb if s.ldb is not None else (s.k if s.b_transposed else s.n)
        zero = ir.Constant(I16, 0)
        if not s.b_transposed:
            self._pack_rows(b, src, col0, dst, ldb)
            b.ret_void()
            return fn
        with for_range(b, 0, self.kp // 2, name="kp") as kp:
            for j in range(PANEL):
                col = llvm_ir.add(b, col0, i64(j))
                col_ok = _i(b.icmp_signed("<", col, i64(s.n)))
                col_c = _i(b.select(col_ok, col, i64(s.n - 1)))
                for h in range(2):
                    kk = llvm_ir.add(b, llvm_ir.mul(b, kp, i64(2)), i64(h))
                    k_ok = _i(b.icmp_signed("<", kk, i64(s.k)))
                    k_c = _i(b.select(k_ok, kk, i64(s.k - 1)))
                    idx = (llvm_ir.add(b, llvm_ir.mul(b, col_c, i64(ldb)), k_c) if s.b_transposed
                           else llvm_ir.add(b, llvm_ir.mul(b, k_c, i64(ldb)), col_c))
                    v = _i(b.load(gep(b, src, idx)))
                    v = _i(b.select(_i(b.and_(col_ok, k_ok)), v, zero))
                    at = llvm_ir.add(b, llvm_ir.mul(b, kp, i64(PANEL * 2)), i64(j * 2 + h))
                    b.store(v, gep(b, dst, at))
        b.ret_void()
        return fn

    def _row_start(self, b: ir.IRBuilder, k: ir.Value, ldb: int) -> ir.Value:
        """Element offset of row ``k`` of B: ``k * ldb``, or a convolution's tap of a channel
        in its phase plane (``Bf16GemmSpec.b_conv``), read from a table of the K offsets."""
        conv = self.spec.b_conv
        if conv is None:
            return llvm_ir.mul(b, k, i64(ldb))
        table = self._conv_row_table()
        elem = table.type.pointee.element  # pyright: ignore[reportAttributeAccessIssue]
        offset = _i(b.load(gep(b, _i(b.bitcast(table, elem.as_pointer())), k)))
        return offset if elem == I64 else _i(b.sext(offset, I64))

    def _conv_row_table(self) -> ir.GlobalVariable:
        """The element offset of each of the K rows of a convolution's implicit im2col B, in its
        channel's phase planes: a constant table, so packing a panel reads one offset per row
        instead of dividing ``k`` into channel and tap (a layer-1 3x3 convolution of ResNet-18
        packs 576 rows per 32-pixel panel and multiplies them by only 64 output channels)."""
        name = f"{self.spec.symbol}.im2col_rows"
        existing = self.module.globals.get(name)
        if isinstance(existing, ir.GlobalVariable):
            return existing
        conv = self.spec.b_conv
        assert conv is not None
        plane, wq, kh, kw, dh, dw, sh, sw = conv
        offsets = []
        for k in range(self.spec.k):
            channel, tap = divmod(k, kh * kw)
            p, q = tap // kw * dh, tap % kw * dw
            phase = (channel * sh + p % sh) * sw + q % sw
            offsets.append(phase * plane + p // sh * wq + q // sw)
        ty = ir.ArrayType(I32 if max(offsets) < 2 ** 31 else I64, len(offsets))
        g = ir.GlobalVariable(self.module, ty, name=name)
        g.linkage = "internal"
        g.global_constant = True
        g.initializer = ir.Constant(ty, offsets)  # pyright: ignore[reportAttributeAccessIssue]
        g.align = 64  # pyright: ignore[reportAttributeAccessIssue]
        return g

    def _pack_rows(self, b: ir.IRBuilder, src: ir.Value, col0: ir.Value, dst: ir.Value, ldb: int) -> None:
        """Pack a row-major B (or a convolution's implicit im2col rows): per pair of rows, two
        masked 32-lane loads (columns past N and rows past K read as 0, never touched)
        interleaved into the 64 bf16 of the pair."""
        s = self.spec
        v32 = ir.VectorType(I16, PANEL)
        v32p = v32.as_pointer()
        v64 = ir.VectorType(I16, 2 * PANEL)
        m32 = ir.VectorType(I1, PANEL)
        load = declare(self.module, "llvm.masked.load.v32i16.p0v32i16", v32, [v32p, I32, m32, v32])
        lanes = ir.Constant(ir.VectorType(I64, PANEL), list(range(PANEL)))
        left = llvm_ir.sub(b, i64(s.n), col0)
        undef64 = ir.Constant(ir.VectorType(I64, PANEL), ir.Undefined)
        left_v = _i(b.shuffle_vector(_i(b.insert_element(undef64, left, I32(0))), undef64,
                                     ir.Constant(ir.VectorType(I32, PANEL), [0] * PANEL)))
        col_mask = _i(b.icmp_signed("<", lanes, left_v))
        none = ir.Constant(m32, [0] * PANEL)
        zero = ir.Constant(v32, None)
        order = ir.Constant(ir.VectorType(I32, 2 * PANEL), [j // 2 + (PANEL if j % 2 else 0) for j in range(2 * PANEL)])
        with for_range(b, 0, self.kp // 2, name="kp") as kp:
            rows = []
            for h in range(2):
                kk = llvm_ir.add(b, llvm_ir.mul(b, kp, i64(2)), i64(h))
                ok = _i(b.icmp_signed("<", kk, i64(s.k)))
                k_c = _i(b.select(ok, kk, i64(s.k - 1)))
                mask = _i(b.select(ok, col_mask, none))
                ptr = _i(b.bitcast(gep(b, src, llvm_ir.add(b, self._row_start(b, k_c, ldb), col0)), v32p))
                rows.append(_i(b.call(load, [ptr, I32(2), mask, zero])))
            pair = _i(b.shuffle_vector(rows[0], rows[1], order))
            b.store(pair, _i(b.bitcast(gep(b, dst, llvm_ir.mul(b, kp, i64(2 * PANEL))), v64.as_pointer())), align=2)

    # -- one block of up to 32 rows --------------------------------------------------------
    def _block(self, b: ir.IRBuilder, rows: int, row0: ir.Value, a: ir.Value, b_panel: ir.Value,
               cs: ir.Value, a_tail: ir.Value | None, c: ir.Value, bias: ir.Value, other: ir.Value,
               col0: ir.Value, cols: ir.Value, ahead: ir.Value, exact: ir.Value | None) -> None:
        """``ahead``: the first row of the block this task computes next (its A rows are
        prefetched while this one's products run, where A is a convolution's weights)."""
        a_rows = gep(b, a, llvm_ir.mul(b, row0, i64(self.lda)))
        if a_tail is not None:
            self._copy_a_tail(b, rows, a_rows, a_tail)
        self._products_avx512(b, rows, a_rows, b_panel, cs, a_tail, gep(b, a, llvm_ir.mul(b, ahead, i64(self.lda))),
                              exact)
        self._epilogue(b, rows, row0, cs, c, bias, other, col0, cols)

    def _amx_group(self, b: ir.IRBuilder, rows: int, g0: ir.Value, g_end: ir.Value, a: ir.Value, b_panel: ir.Value,
                   cs: ir.Value, a_tail: ir.Value | None, c: ir.Value, bias: ir.Value, other: ir.Value,
                   col0: ir.Value, cols: ir.Value) -> None:
        """AMX: the blocks of ``rows`` rows at ``g0, g0 + 32, ... < g_end`` (at most
        :data:`AMX_GROUP`): their K tails copied, then one call that computes each block's
        products into consecutive 32x32 blocks of ``cs`` and runs each block's epilogue."""
        if a_tail is not None:
            with for_range(b, g0, g_end, step=BLOCK, name="gpre") as r:
                j = llvm_ir.udiv(b, llvm_ir.sub(b, r, g0), i64(BLOCK))
                self._copy_a_tail(b, rows, gep(b, a, llvm_ir.mul(b, r, i64(self.lda))),
                                  gep(b, a_tail, llvm_ir.mul(b, j, i64(BLOCK * K_STEP))))
        count = llvm_ir.udiv(b, llvm_ir.add(b, llvm_ir.sub(b, g_end, g0), i64(BLOCK - 1)), i64(BLOCK))
        tail = a_tail if a_tail is not None else ir.Constant(I16P, None)
        next_panel = gep(b, b_panel, i64(self.kp * PANEL))
        b.call(self._amx_group_function(rows), [gep(b, a, llvm_ir.mul(b, g0, i64(self.lda))), b_panel, cs, tail,
                                                next_panel, g0, count, c, bias, other, col0, cols])

    def _prefetch_block_lines(self, b: ir.IRBuilder, rows: int, row0: ir.Value, c: ir.Value, col0: ir.Value,
                              other: ir.Value, c_lines: bool = True) -> None:
        """A float32 C's lines of the block into the cache for writing, and a residual's for
        reading, before its products: the epilogue otherwise waits for each line in turn (C's
        read for ownership; 1024^3, 1 thread, Emerald Rapids: 677 -> 792 GFLOP/s; without the
        requests now, with the epilogue a block behind, 5-9 % slower on 784x512x128 and
        3136x256x64).  Not for a bf16 C: its one line a row, requested a block ahead, cost more
        than it saved (interleaved, 1 thread: 3136x256x64 + bias + relu 332 -> 415 GFLOP/s
        without; a convolution's 256x3136x64 + bias + add + relu with a residual cold from
        memory 584 -> 441 us; its 512x784x128 252 -> 271 us cold but 231 -> 206 us warm).  With a
        bf16 C, a residual of :data:`PREFETCH_BF16_RESIDUAL_BYTES` or more has its lines asked for
        alone (``c_lines`` False): ResNet-50's three layer-1 256x3136x64 + add + relu, in the model,
        1.94 -> 1.35 ms; the model 2-3 % faster)."""
        s = self.spec
        streams = [(c, self.ldc, 4, True)] if c_lines else []
        rs, cs = s.other_strides if s.other_strides is not None else (0, 1)
        if s.binary is not None and rs and cs:
            streams.append((other, rs, 2 if s.other_bf16 else 4, False))
        for base, ld, width, write in streams:
            for i in range(rows):
                off = llvm_ir.add(b, llvm_ir.mul(b, llvm_ir.add(b, row0, i64(i)), i64(ld)), col0)
                for line in range(0, PANEL * width, 64):
                    llvm_ir.prefetch(self.module, b, gep(b, base, llvm_ir.add(b, llvm_ir.mul(b, off, i64(width)),
                                                                          i64(line))), write=write)

    def _copy_a_tail(self, b: ir.IRBuilder, rows: int, a_rows: ir.Value, a_tail: ir.Value) -> None:
        """A's last ``k % 32`` columns of ``rows`` rows into the zero-padded ``a_tail``."""
        s = self.spec
        k0, kt = s.k - s.k % K_STEP, s.k % K_STEP
        mask = ir.Constant(ir.VectorType(I1, K_STEP), [1 if i < kt else 0 for i in range(K_STEP)])
        vty = ir.VectorType(I16, K_STEP)
        load = declare(self.module, f"llvm.masked.load.v{K_STEP}i16.p0v{K_STEP}i16", vty,
                       [vty.as_pointer(), I32, mask.type, vty])
        zero = ir.Constant(vty, None)
        with for_range(b, 0, rows, name="tail") as i:
            src = gep(b, a_rows, llvm_ir.add(b, llvm_ir.mul(b, i, i64(self.lda)), i64(k0)))
            v = b.call(load, [_i(b.bitcast(src, vty.as_pointer())), I32(2), mask, zero])
            b.store(v, _i(b.bitcast(gep(b, a_tail, llvm_ir.mul(b, i, i64(K_STEP))), vty.as_pointer())), align=2)

    def _amx_group_function(self, rows: int) -> ir.Function:
        """``f(a_rows, b_panel, cs, a_tail, next_panel, g0, count, c, bias, other, col0, cols)``:
        the products of ``count`` consecutive blocks of ``rows`` rows (the first at row ``g0``,
        read from ``a_rows``; their zero-padded K tails ``32 x 32`` apart in ``a_tail``) into
        consecutive 32x32 blocks of ``cs``, and each block's epilogue into ``c``.

        One call per group: a call's tile configuration and release cost about as much as 8
        steps of K (a register-only probe, 2 steps a call: 665 GFLOP/s against 917 with the loop
        inside one function), which ResNet's K=64 1x1 convolutions paid per block.

        A block's epilogue runs after the next block's products are issued: the tile unit and
        the vector units run side by side (a loop of 4 ``tdpbf16ps`` took 22.3 ns an iteration
        with or without 32 independent vector loads, adds and stores beside it), so the
        epilogue's work hides behind the products' instead of following them with the tile unit
        idle: interleaved in one process, 1 thread, bias + relu, 3136x384x96 338 -> 415 GFLOP/s,
        784x512x128 532 -> 625; bf16 MobileNetV2 -8 %, BERT-base -4.5 %, ConvNeXt -6 %.  A
        staged transcendental's epilogue (GELU: thousands of instructions a block) follows
        the group's products instead: interleaved, it was 5-10 % slower.

        Each block reads its share of the next weight panel into L2 (an eighth, or a half with
        two blocks a chunk: slot ``g0 / 32 + j``).

        A function of its own per row count: tile values never cross a call or the loop over
        blocks, and the only tile phis are the K loop's accumulators (LLVM's running out of the
        8 tile registers is a fatal error that ends the process, not an exception)."""
        s, m = self.spec, self.module
        name = f"{s.symbol}.amx{rows}"
        existing = m.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        fn = ir.Function(m, ir.FunctionType(VOID, [I16P, I16P, F32P, I16P, I16P, I64, I64, I8P, F32P, I8P, I64, I64]),
                         name=name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        a_first, b_panel, cs_first, tail_first, next_panel, g0, count, c, bias, other, col0, cols = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        tiles = [min(16, rows)] + ([rows - 16] if rows > 16 else [])
        steps = self.steps
        last = steps - 1 if s.k % K_STEP else steps  # the step that reads the zero-padded tail
        slot0 = llvm_ir.udiv(b, g0, i64(BLOCK))
        epilogue = self._amx_epilogue_function(rows)

        def finish(j: ir.Value) -> None:  # block j's epilogue
            b.call(epilogue, [llvm_ir.add(b, g0, llvm_ir.mul(b, j, i64(BLOCK))),
                              gep(b, cs_first, llvm_ir.mul(b, j, i64(BLOCK * BLOCK))), c, bias, other, col0, cols])

        overlap = not (s.unary_table or stages(s.unary, 16))
        size, before = k_passes(steps, self.mc)

        def products(blk: ir.Value, k0: ir.Value, n_steps: int, first: bool, final: bool) -> None:
            if final and (not s.out_bf16 or self.prefetch_residual):
                self._prefetch_block_lines(b, rows, llvm_ir.add(b, g0, llvm_ir.mul(b, blk, i64(BLOCK))), c, col0, other,
                                           not s.out_bf16)
            self._amx_block_products(b, rows, tiles, (k0, n_steps, first), last, blk, a_first, b_panel, cs_first,
                                     tail_first, next_panel, slot0, finish if overlap and final else None)

        if before:  # the passes before the last: each block's partial sums into cs
            with for_range(b, 0, count, name="blk0") as blk:
                products(blk, i64(0), size, True, False)
            if before > 1:
                with for_range(b, 1, before, name="kpass") as kp:
                    with for_range(b, 0, count, name="blkk") as blk:
                        products(blk, llvm_ir.mul(b, kp, i64(size)), size, False, False)
        with for_range(b, 0, count, name="blk") as blk:
            products(blk, i64(size * before), steps - size * before, not before, True)
        if overlap:
            finish(llvm_ir.sub(b, count, i64(1)))
        else:
            with for_range(b, 0, count, name="epi") as blk:
                finish(blk)
        b.ret_void()
        return fn

    def _amx_epilogue_function(self, rows: int) -> ir.Function:
        """``f(row0, cs, c, bias, other, col0, cols)``: one block's epilogue, inlined where it is
        called (a call would reload the tile configuration)."""
        s, m = self.spec, self.module
        name = f"{s.symbol}.epi{rows}"
        existing = m.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        fn = ir.Function(m, ir.FunctionType(VOID, [I64, F32P, I8P, F32P, I8P, I64, I64]), name=name)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        row0, cs, c, bias, other, col0, cols = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        self._epilogue(b, rows, row0, cs, c, bias, other, col0, cols)
        b.ret_void()
        return fn

    def _amx_block_products(self, b: ir.IRBuilder, rows: int, tiles: list[int], span: tuple[ir.Value, int, bool],
                            last: int, blk: ir.Value, a_first: ir.Value, b_panel: ir.Value, cs_first: ir.Value,
                            tail_first: ir.Value, next_panel: ir.Value, slot0: ir.Value,
                            finish: Callable[[ir.Value], None] | None) -> None:
        """Block ``blk``'s products over ``span`` = (first step of K, steps, whether the sums
        start at zero rather than at the partial sums in ``cs``): the K loop over 2x2 tiles,
        then the previous block's epilogue (``finish``), then the sums stored into ``cs``."""
        s, m = self.spec, self.module
        k0, n_steps, first = span
        steps = self.steps
        a_rows = gep(b, a_first, llvm_ir.mul(b, blk, i64(BLOCK * self.lda)))
        cs = gep(b, cs_first, llvm_ir.mul(b, blk, i64(BLOCK * BLOCK)))
        a_tail = gep(b, tail_first, llvm_ir.mul(b, blk, i64(BLOCK * K_STEP)))
        # the chunk's blocks share the next panel out: a chunk of 2 blocks (K = 3072) prefetched
        # only a quarter of it with eighths (BERT's 128x768x3072, cold weights, 1 thread,
        # alternating processes: 558-639 -> 607-641 GFLOP/s)
        split = 1 << min(3, (self.mc // BLOCK).bit_length() - 1)
        slot = llvm_ir.urem(b, llvm_ir.add(b, slot0, blk), i64(split))
        pf = gep(b, next_panel, llvm_ir.mul(b, slot, i64(steps * 1024 // split)))
        if first:
            inits = [amx.tile_zero(m, b, r, 64) for r in tiles for _ in range(2)]
        else:
            inits = [amx.tile_load(m, b, r, 64, gep(b, cs, ti * 16 * BLOCK + h * 16), BLOCK * 4)
                     for ti, r in enumerate(tiles) for h in range(2)]

        def step(accs: list[ir.Value], kk_local: ir.Value) -> list[ir.Value]:
            kk = llvm_ir.add(b, k0, kk_local)
            is_tail = _i(b.icmp_signed("==", kk, i64(last)))
            stride = _i(b.select(is_tail, i64(K_STEP * 2), i64(self.lda * 2)))
            at = []
            for t, r in enumerate(tiles):
                main = gep(b, a_rows, llvm_ir.add(b, i64(16 * t * self.lda), llvm_ir.mul(b, kk, i64(K_STEP))))
                ptr = _i(b.select(is_tail, gep(b, a_tail, 16 * t * K_STEP), main))
                at.append(amx.tile_load(m, b, r, 64, ptr, stride))
            bk = gep(b, b_panel, llvm_ir.mul(b, kk, i64(16 * PANEL * 2)))
            if s.b_packed:  # a slice of the next panel of weights into L2 (they come cold from memory)
                for j in range(32 // split):
                    llvm_ir.prefetch(m, b, gep(b, pf, llvm_ir.add(b, llvm_ir.mul(b, kk, i64(1024 // split)),
                                                               i64(32 * j))), locality=2)
            out = list(accs)
            # at most 7 tiles live (4 accumulators, 2 A, 1 B)
            for h in range(2):
                bt = amx.tile_load(m, b, 16, 64, gep(b, bk, 32 * h), PANEL * 4)
                for ti, r in enumerate(tiles):
                    out[ti * 2 + h] = amx.tile_dpbf16ps(m, b, r, 64, 64, accs[ti * 2 + h], at[ti], bt)
            return out

        out = llvm_ir.counted_loop(b, 0, n_steps, inits, step, name="kk")
        if finish is not None:
            with b.if_then(_i(b.icmp_signed(">", blk, i64(0)))):
                finish(llvm_ir.sub(b, blk, i64(1)))
        for ti, r in enumerate(tiles):
            for h in range(2):
                amx.tile_store(m, b, r, 64, gep(b, cs, ti * 16 * BLOCK + h * 16), BLOCK * 4, out[ti * 2 + h])

    def _products_avx512(self, b: ir.IRBuilder, rows: int, a_rows: ir.Value, b_panel: ir.Value,
                         cs: ir.Value, a_tail: ir.Value | None, a_ahead: ir.Value, exact: ir.Value | None) -> None:
        """The block's products, in a function of their own per row count: the K loops then get
        the registers to themselves.  Inlined, a GELU epilogue's constants (hoisted out of the
        task loop) pushed two of the four row groups' accumulators to the stack: 128x3072x768 +
        GELU, 1 thread, 1.67 ms against 1.24 without the activation.  ``exact`` (an ``i1``):
        the float32 FMA products instead of ``vdpbf16ps`` when true; the AMX kernel comes here
        only for those."""
        tail = a_tail if a_tail is not None else ir.Constant(I16P, None)
        call_args = [a_rows, b_panel, cs, tail, a_ahead]
        if self.spec.kernel == "amx":
            b.call(self._avx512_block_function(rows, a_tail is not None, exact=True), call_args)
        elif exact is None:
            b.call(self._avx512_block_function(rows, a_tail is not None), call_args)
        else:
            with b.if_else(exact) as (slow, fast):
                with slow:
                    b.call(self._avx512_block_function(rows, a_tail is not None, exact=True), call_args)
                with fast:
                    b.call(self._avx512_block_function(rows, a_tail is not None), call_args)

    def _avx512_block_function(self, rows: int, has_tail: bool, exact: bool = False) -> ir.Function:
        s, m = self.spec, self.module
        name = f"{s.symbol}.{'exact' if exact else 'avx512bf16'}_{rows}"
        existing = m.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        fn = ir.Function(m, ir.FunctionType(VOID, [I16P, I16P, F32P, I16P, I16P]), name=name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        a_rows, b_panel, cs, tail_arg, a_ahead = fn.args
        a_tail: ir.Value | None = tail_arg if has_tail else None
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        self._products_avx512_body(b, rows, a_rows, b_panel, cs, a_tail, a_ahead, exact)
        b.ret_void()
        return fn

    def _products_avx512_body(self, b: ir.IRBuilder, rows: int, a_rows: ir.Value, b_panel: ir.Value,
                              cs: ir.Value, a_tail: ir.Value | None, a_ahead: ir.Value, exact: bool) -> None:
        """``exact``: each pair of products as two float32 FMAs of the converted values, which
        multiply a bf16 subnormal as eager does (``vdpbf16ps`` reads it as zero)."""
        s, m = self.spec, self.module
        dp = declare(m, "llvm.x86.avx512bf16.dpbf16ps.512", V16F, [V16F, V32BF, V32BF])
        i32p = I32.as_pointer()
        v16i32p = V16I32.as_pointer()
        # without a tail buffer every pair of K is read in place, in one loop (K whole steps, or
        # A zero-padded to them)
        k_pairs_full = (s.k + 1) // 2 if a_tail is None else (s.k - s.k % K_STEP) // 2
        for g0, g in row_groups(rows):

            def pair_step(accs: list[ir.Value], kp: ir.Value, a_base: ir.Value, a_ld: int) -> list[ir.Value]:
                bk = gep(b, b_panel, llvm_ir.mul(b, kp, i64(PANEL * 2)))
                pairs = [_i(b.load(_i(b.bitcast(gep(b, bk, 32 * h), v16i32p)), align=2)) for h in range(2)]
                bv = [_i(b.bitcast(v, V32BF)) for v in pairs]
                if s.b_packed:  # the next panel's lines at this k into L2: weights come cold from memory
                    for h in range(2):
                        llvm_ir.prefetch(m, b, gep(b, bk, self.kp * PANEL + 32 * h), locality=2)
                elif self.prefetch_a and a_ld == self.lda:
                    # A is (most often) a convolution's weights, cold in a model: the next block's rows of
                    # this group into L2, one line per step (each line twice over K / 2 steps)
                    line = llvm_ir.mul(b, llvm_ir.udiv(b, kp, i64(16)), i64(32))
                    r = llvm_ir.add(b, i64(g0), llvm_ir.urem(b, kp, i64(g)))
                    llvm_ir.prefetch(m, b, gep(b, a_ahead, llvm_ir.add(b, llvm_ir.mul(b, r, i64(self.lda)), line)),
                                     locality=2)
                out = list(accs)
                for i in range(g):
                    ap = _i(b.bitcast(gep(b, a_base, llvm_ir.add(b, i64((g0 + i) * a_ld), llvm_ir.mul(b, kp, i64(2)))), i32p))
                    pair = _i(b.load(ap, align=2))
                    if exact:
                        av_pair = _halves(b, splat(b, pair, V16I32))
                        for h in range(2):
                            for x, y in zip(av_pair, _halves(b, pairs[h]), strict=True):
                                out[i * 2 + h] = self.vec.fma(b, x, y, out[i * 2 + h])
                        continue
                    av = _i(b.bitcast(splat(b, pair, V16I32), V32BF))
                    for h in range(2):
                        out[i * 2 + h] = b.call(dp, [out[i * 2 + h], av, bv[h]])
                return out

            accs: list[ir.Value] = [self.vec.zero() for _ in range(2 * g)]
            if k_pairs_full:
                accs = llvm_ir.counted_loop(b, 0, k_pairs_full, accs,
                                            lambda acc, kp: pair_step(acc, kp, a_rows, self.lda), name="kp")
            if a_tail is not None:
                base = gep(b, a_tail, -k_pairs_full * 2)  # pair index kp reads a_tail[(kp - full) * 2]
                accs = llvm_ir.counted_loop(b, k_pairs_full, k_pairs_full + (s.k % K_STEP + 1) // 2, accs,
                                            lambda acc, kp: pair_step(acc, kp, base, K_STEP), name="kt")
            for i in range(g):
                for h in range(2):
                    self.vec.store(b, accs[i * 2 + h], gep(b, cs, (g0 + i) * BLOCK + h * 16))

    # -- epilogue --------------------------------------------------------------------------
    def _epilogue(self, b: ir.IRBuilder, rows: int, row0: ir.Value, cs: ir.Value, c: ir.Value,
                  bias: ir.Value, other: ir.Value, col0: ir.Value, cols: ir.Value) -> None:
        s, vec = self.spec, self.vec
        lanes = ir.Constant(V16I32, list(range(16)))
        masks = []
        for h in range(2):
            left = _i(b.trunc(llvm_ir.sub(b, cols, i64(16 * h)), I32))
            masks.append(_i(b.icmp_signed("<", lanes, splat(b, left, V16I32))))
        bias_v = []
        if s.bias and not s.bias_rows:
            for h in range(2):
                bias_v.append(self._masked_load_f32(b, gep(b, bias, llvm_ir.add(b, col0, i64(16 * h))), masks[h]))
        params = dict(s.unary_params)
        rs, ocs = s.other_strides if s.other_strides is not None else (0, 1)
        cols_h = [llvm_ir.add(b, col0, i64(16 * h)) for h in range(2)]

        def row_of(i: int | ir.Value) -> ir.Value:
            return llvm_ir.add(b, row0, i if isinstance(i, ir.Value) else i64(i))

        def tile_at(i: ir.Value, h: int) -> ir.Value:
            return gep(b, cs, llvm_ir.add(b, llvm_ir.mul(b, i, i64(BLOCK)), i64(16 * h)))

        rounded = s.rounded_steps
        # relu and clamps to bf16 values commute with rounding: no rounding before them
        clamps = s.unary is not None and commutes_with_rounding(s.unary, params.values(), "bf16")

        def rnd(x: ir.Value) -> ir.Value:  # a bf16 op's result, as eager stores it
            return round_f32_to_bf16(b, x) if rounded else x

        def pre(x: ir.Value, row: ir.Value, h: int, final_round: bool = True) -> ir.Value:
            if s.scale != 1.0:
                x = llvm_ir.fmul(b, rnd(x), vec.const(s.scale))
            if s.bias and s.bias_rows:  # one bias per row (a 1x1 convolution's channel)
                x = llvm_ir.fadd(b, x, vec.splat(b, _i(b.load(gep(b, bias, row)))))
            elif s.bias:
                x = llvm_ir.fadd(b, x, bias_v[h])
            if s.binary is not None and s.binary_first:
                x = self._binary(b, rnd(x), other, row, cols_h[h], rs, ocs, masks[h])
            # the op before the unary rounds, or the product before a later binary (else the store rounds)
            before_unary = s.unary is not None and not clamps
            return rnd(x) if final_round and (before_unary or (s.unary is None and s.binary is not None)) else x

        def post(x: ir.Value, i: int | ir.Value, h: int) -> ir.Value:
            if s.binary is not None and not s.binary_first:
                x = self._binary(b, x if s.unary is None else rnd(x), other, row_of(i), cols_h[h], rs, ocs, masks[h])
            return x

        def store_bits(bits: ir.Value, i: int | ir.Value, h: int) -> None:  # 16 bf16 values
            dst = llvm_ir.add(b, llvm_ir.mul(b, row_of(i), i64(self.ldc)), cols_h[h])
            if s.round_out:  # the bf16 values widened, into a float32 C
                self._masked_store(b, bf16_to_f32(b, bits), gep(b, _i(b.bitcast(c, F32P)), dst), masks[h], 4)
                return
            self._masked_store(b, bits, gep(b, _i(b.bitcast(c, I16P)), dst), masks[h], 2)

        def store(x: ir.Value, i: int | ir.Value, h: int) -> None:
            if s.out_bf16 or s.round_out:
                store_bits(f32_to_bf16(b, x), i, h)
            else:
                dst = llvm_ir.add(b, llvm_ir.mul(b, row_of(i), i64(self.ldc)), cols_h[h])
                self._masked_store(b, x, gep(b, _i(b.bitcast(c, F32P)), dst), masks[h], 4)

        if s.unary_table:
            # the activation's bf16 input (pre's rounding, as f32_to_bf16's bits) indexes eager's answers
            assert s.unary is not None
            table = table_global(self.module, s.unary)
            with for_range(b, 0, rows, name="erow") as i:
                for h in range(2):
                    y = look_up(b, table, f32_to_bf16(b, pre(vec.load(b, tile_at(i, h)), row_of(i), h, False)))
                    if s.binary is not None and not s.binary_first:
                        store(self._binary(b, bf16_to_f32(b, y), other, row_of(i), cols_h[h], rs, ocs, masks[h]), i, h)
                    else:
                        store_bits(y, i, h)
            return
        if stages(s.unary, 16):
            # A transcendental runs over the staged block a few rows at a time as one wide value
            # (staged_epilogue): the ops before it first, in place.
            assert s.unary is not None
            unary = s.unary
            with for_range(b, 0, rows, name="epre") as i:
                for h in range(2):
                    at = tile_at(i, h)
                    vec.store(b, pre(vec.load(b, at), row_of(i), h), at)
            activate_tile(b, vec, _i(b.bitcast(cs, V16F.as_pointer())), rows, 2,
                          lambda x: emit_unary(b, vec, unary, x, params), post, store)
            return
        with for_range(b, 0, rows, name="erow") as i:
            for h in range(2):
                x = pre(vec.load(b, tile_at(i, h)), row_of(i), h)
                if s.unary is not None:
                    x = emit_unary(b, vec, s.unary, x, params)
                store(post(x, i, h), i, h)

    def _binary(self, b: ir.IRBuilder, x: ir.Value, other: ir.Value, row: ir.Value, col: ir.Value,
                rs: int, ocs: int, mask: ir.Value) -> ir.Value:
        s = self.spec
        off = llvm_ir.add(b, llvm_ir.mul(b, row, i64(rs)), col if ocs else i64(0))
        if s.other_bf16:
            ptr = gep(b, _i(b.bitcast(other, I16P)), off)
            if ocs:
                o = bf16_to_f32(b, self._masked_load(b, ptr, mask, V16I16, 2))
            else:
                o = self.vec.splat(b, bf16_to_f32(b, _i(b.load(ptr))))
        else:
            ptr = gep(b, _i(b.bitcast(other, F32P)), off)
            o = self._masked_load_f32(b, ptr, mask) if ocs else self.vec.splat(b, _i(b.load(ptr)))
        if s.alpha != 1.0:
            o = llvm_ir.fmul(b, o, self.vec.const(s.alpha))
        return llvm_ir.fadd(b, x, o) if s.binary == "add" else llvm_ir.fsub(b, x, o)

    def _masked_load_f32(self, b: ir.IRBuilder, ptr: ir.Value, mask: ir.Value) -> ir.Value:
        return self._masked_load(b, ptr, mask, V16F, 4)

    def _masked_load(self, b: ir.IRBuilder, ptr: ir.Value, mask: ir.Value, vty: ir.VectorType, align: int) -> ir.Value:
        return llvm_ir.masked_load(b, ptr, mask, vty, align)

    def _masked_store(self, b: ir.IRBuilder, x: ir.Value, ptr: ir.Value, mask: ir.Value, align: int) -> None:
        llvm_ir.masked_store(b, x, ptr, mask, align)

__all__ = ["emit_bf16_gemm", "entry_symbol", "chunk_rows", "row_groups"]
