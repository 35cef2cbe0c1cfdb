"""The AMX-INT8 products of the int8 GEMM (``Int8GemmSpec.kernel == "amx"``): one block of up to
32 requantized rows of A times one 32-column panel of the ``KN32n4k`` weight, summed in int32
by ``tdpbusd`` into a 32x32 int32 scratch that the kernel's shared epilogue then reads
(:mod:`~ziggurat.backends.cpu.kernels.gemm_int8`).

The block is 2x2 tiles of 16x16 int32 (one tile row for up to 16 rows).  A step of K is 64
bytes: an A tile is 16 rows of 64 uint8 read from the workspace with the row stride ``ldq``,
a B tile 16 groups of 4 k by 16 columns (64 bytes a group), read from the panel whose groups
are 128 bytes apart (the panel's 32 columns), the second tile 64 bytes on.  A K padded to
``Kp`` (a multiple of 4) that is not a multiple of 64 ends with a shorter step: its A tiles
hold the ``Kp % 64`` bytes left, its B tiles ``Kp % 64 / 4`` groups, so no byte past a
workspace row's ``Kp`` (at most ``ldq``) or past the panel is read.  A's bytes between K and
Kp are not written by the requantizing pass; B is zero there, so they add nothing.

The row count of a block is an ``i16`` argument of the block functions, a run-time tile
shape: LLVM writes the tile configuration from it as the function starts, so one function
serves every count of a run-time ``m`` (a range build) and the last, partial block.

Each function holds at most 7 tiles (4 accumulators, 2 A, 1 B) and tile values cross no call:
LLVM's register allocator running out of the 8 tile registers is a fatal error that ends the
process.  The shorter last step has its own function: a tile register keeps one shape in a
function, and its A and B shapes beside the full steps' would need 10.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.llvm_ir import I8P, I32, VOID, gep, i64
from ziggurat.backends.cpu.llvm_ir import instr as _i
from ziggurat.dialects.fused.pack_int8 import K_GROUP, PANEL, padded_k

I16 = ir.IntType(16)
I32P = I32.as_pointer()
BLOCK = 32  # rows (and columns) of one block of products
TILE = 16  # rows of a tile, and its int32 columns
STEP_BYTES = 64  # k per tdpbusd: a tile row's bytes


class AmxBlockProducts:
    """Emits the calls computing one block's int32 sums into ``cs`` (``BLOCK x BLOCK`` int32,
    row-major), and the block functions they call (once per module and kernel symbol)."""

    def __init__(self, module: ir.Module, symbol: str, k: int, ldq: int) -> None:
        self.module = module
        self.symbol = symbol
        self.ldq = ldq
        kp = padded_k(k)
        self.full_steps = kp // STEP_BYTES
        self.tail_bytes = kp % STEP_BYTES  # the shorter last step's k (a multiple of K_GROUP)

    def emit(self, b: ir.IRBuilder, rows: ir.Value, a_rows: ir.Value, b_panel: ir.Value, cs: ir.Value,
             most_rows: int) -> None:
        """The products of ``rows`` (an i64 in 1 .. ``min(BLOCK, most_rows)``) rows from ``a_rows``
        (the block's first requantized row) by the panel at ``b_panel`` into ``cs``."""
        if most_rows <= TILE:
            self._call(b, 1, rows, a_rows, b_panel, cs)
            return
        with b.if_else(_i(b.icmp_signed(">", rows, i64(TILE)))) as (two, one):
            with two:
                self._call(b, 2, llvm_ir.sub(b, rows, i64(TILE)), a_rows, b_panel, cs)
            with one:
                self._call(b, 1, rows, a_rows, b_panel, cs)

    def _call(self, b: ir.IRBuilder, tile_rows: int, last_rows: ir.Value, a_rows: ir.Value, b_panel: ir.Value,
              cs: ir.Value) -> None:
        """``tile_rows`` rows of tiles, the last holding ``last_rows`` rows (an i64, 1 .. 16)."""
        args = [_i(b.bitcast(a_rows, I8P)), _i(b.bitcast(b_panel, I8P)), _i(b.bitcast(cs, I32P)),
                _i(b.trunc(last_rows, I16))]
        if self.full_steps:
            b.call(self._function(tile_rows, tail=False), args)
        if self.tail_bytes:
            b.call(self._function(tile_rows, tail=True), args)

    def _function(self, tile_rows: int, tail: bool) -> ir.Function:
        name = f"{self.symbol}.amx{tile_rows}" + (".tail" if tail else "")
        fn = self.module.globals.get(name)
        if isinstance(fn, ir.Function):
            return fn
        fn = ir.Function(self.module, ir.FunctionType(VOID, [I8P, I8P, I32P, I16]), name=name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        a_rows, b_panel, cs, last_rows = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        shapes: list[int | ir.Value] = [TILE] * (tile_rows - 1)
        shapes.append(last_rows)
        if tail:
            self._tail_step(b, shapes, a_rows, b_panel, cs)
        else:
            self._full_steps(b, shapes, a_rows, b_panel, cs)
        b.ret_void()
        return fn

    def _full_steps(self, b: ir.IRBuilder, shapes: list[int | ir.Value], a_rows: ir.Value, b_panel: ir.Value,
                    cs: ir.Value) -> None:
        """The steps of 64 k, from zero accumulators; the sums stored into ``cs``."""
        m = self.module
        zeros = [amx.tile_zero(m, b, r, STEP_BYTES) for r in shapes for _ in range(2)]

        def step(accs: list[ir.Value], kk: ir.Value) -> list[ir.Value]:
            k0 = llvm_ir.mul(b, kk, i64(STEP_BYTES))
            return self._step(b, shapes, accs, a_rows, b_panel, k0, STEP_BYTES)

        out = llvm_ir.counted_loop(b, 0, self.full_steps, zeros, step, name="kk")
        self._store(b, shapes, cs, out)

    def _tail_step(self, b: ir.IRBuilder, shapes: list[int | ir.Value], a_rows: ir.Value, b_panel: ir.Value,
                   cs: ir.Value) -> None:
        """The shorter last step: onto the full steps' sums read back from ``cs`` (zero without
        any), stored into ``cs``."""
        m = self.module
        if self.full_steps:
            accs = [amx.tile_load(m, b, r, STEP_BYTES, self._acc_at(b, cs, t, h), BLOCK * 4)
                    for t, r in enumerate(shapes) for h in range(2)]
        else:
            accs = [amx.tile_zero(m, b, r, STEP_BYTES) for r in shapes for _ in range(2)]
        k0 = i64(self.full_steps * STEP_BYTES)
        self._store(b, shapes, cs, self._step(b, shapes, accs, a_rows, b_panel, k0, self.tail_bytes))

    def _step(self, b: ir.IRBuilder, shapes: list[int | ir.Value], accs: list[ir.Value], a_rows: ir.Value,
              b_panel: ir.Value, k0: ir.Value, k_bytes: int) -> list[ir.Value]:
        """``accs += A[:, k0 : k0 + k_bytes] @ B[k0 : k0 + k_bytes, panel]``; at most 7 tiles
        live (4 accumulators, 2 A, 1 B)."""
        m = self.module
        a_tiles = [amx.tile_load(m, b, r, k_bytes, gep(b, a_rows, llvm_ir.add(b, i64(t * TILE * self.ldq), k0)), self.ldq)
                   for t, r in enumerate(shapes)]
        # group k0 / 4 of the panel: PANEL columns of K_GROUP bytes each
        bk = gep(b, b_panel, llvm_ir.mul(b, llvm_ir.udiv(b, k0, i64(K_GROUP)), i64(PANEL * K_GROUP)))
        out = list(accs)
        for h in range(2):
            bt = amx.tile_load(m, b, k_bytes // K_GROUP, STEP_BYTES, gep(b, bk, h * TILE * K_GROUP), PANEL * K_GROUP)
            for t, r in enumerate(shapes):
                out[t * 2 + h] = amx.tile_dpbusd(m, b, r, STEP_BYTES, k_bytes, accs[t * 2 + h], a_tiles[t], bt)
        return out

    def _store(self, b: ir.IRBuilder, shapes: list[int | ir.Value], cs: ir.Value, accs: list[ir.Value]) -> None:
        for t, r in enumerate(shapes):
            for h in range(2):
                amx.tile_store(self.module, b, r, STEP_BYTES, self._acc_at(b, cs, t, h), BLOCK * 4, accs[t * 2 + h])

    def _acc_at(self, b: ir.IRBuilder, cs: ir.Value, tile_row: int, half: int) -> ir.Value:
        """Where accumulator tile (``tile_row``, ``half``) lies in the ``BLOCK x BLOCK`` scratch."""
        return gep(b, cs, tile_row * TILE * BLOCK + half * TILE)


__all__ = ["AmxBlockProducts", "BLOCK"]
