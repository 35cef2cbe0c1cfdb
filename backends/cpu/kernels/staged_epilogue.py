"""Transcendental epilogues (GELU, SiLU, tanh, ...) run over a staged tile, a few rows at a time.

Applied to the accumulators in registers, a GELU costs ~55 instructions per vector and
needs ~15 live temporaries; with all ``mr * nvec`` accumulators also live (24 of the 32
zmm registers in the 12x32 AVX-512 tile), LLVM spills hundreds of values.  And one
vector's activation is a single dependency chain ~40 operations deep, so emitted vector
after vector the out-of-order window holds only one or two chains and the FMA ports idle.

So the accumulators are stored to a small stack tile (hot in L1), and a loop takes
``GROUP_VECTORS`` of them at a time as one wide LLVM vector (``<64 x float>`` on AVX-512):
the activation is emitted once on the wide value and LLVM's legalization splits every
operation into adjacent register-sized ones, which interleaves the independent chains.
The stack tile, rather than C itself, holds the staged values, so a residual operand that
aliases C is still read before C is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.unary import VECMATH_KINDS
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import I32, for_range, gep, i64
from ziggurat.backends.cpu.threads import entry_alloca

#: Register vectors that go through the activation together (4 zmm = 64 floats on AVX-512).
GROUP_VECTORS = 4

#: ``per_vector(x, row, v)``: work on vector ``v`` of row ``row`` (an int or an i64 value).
PerVector = Callable[[ir.Value, int | ir.Value, int], ir.Value]
Store = Callable[[ir.Value, int | ir.Value, int], None]
Activation = Callable[[ir.Value], ir.Value]


def stages(unary: str | None, width: int) -> bool:
    """Whether an epilogue with activation ``unary`` on ``width``-lane vectors is staged."""
    return unary in VECMATH_KINDS and width > 1


def staged_rows(b: ir.IRBuilder, vec: VecOps, accs: list[ir.Value], rows: int, nvec: int,
                activation: Activation, post: PerVector, store: Store) -> None:
    """Stage ``accs`` (row-major, ``nvec`` per row); then, for groups of ``GROUP_VECTORS // nvec``
    rows (a loop when there are several groups, the leftover rows after it),
    ``store(post(activation(x), i, v), i, v)`` with the activation applied to the group's
    vectors as one wide value (power-of-two sized pieces, see :func:`_chunks`)."""
    align = 4 * vec.width
    slot = entry_alloca(b, ir.ArrayType(vec.ty, rows * nvec), name="epi.tile")
    slot.align = align  # pyright: ignore[reportAttributeAccessIssue]
    base = cast(ir.Value, b.bitcast(slot, vec.ty.as_pointer()))
    for j, acc in enumerate(accs):
        b.store(acc, gep(b, base, j), align=align)
    activate_tile(b, vec, base, rows, nvec, activation, post, store)


def activate_tile(b: ir.IRBuilder, vec: VecOps, base: ir.Value, rows: int, nvec: int,
                  activation: Activation, post: PerVector, store: Store) -> None:
    """The loop of :func:`staged_rows` over a tile already staged at ``base`` (a pointer to
    ``vec.ty``, aligned to a vector; ``rows`` rows of ``nvec`` vectors, adjacent)."""
    w = vec.width
    align = 4 * w
    group = max(1, GROUP_VECTORS // nvec)

    def rows_at(first: int | ir.Value, count: int) -> None:
        at = gep(b, base, first * nvec if isinstance(first, int) else llvm_ir.mul(b, first, i64(nvec)))
        done = 0
        for chunk in _chunks(count * nvec):
            wide_ty = ir.VectorType(vec.ty.element, chunk * w)  # pyright: ignore[reportAttributeAccessIssue]
            wide = cast(ir.Value, b.bitcast(gep(b, at, done), wide_ty.as_pointer()))
            x = activation(b.load(wide, align=align))
            for j in range(chunk):
                part = b.shuffle_vector(x, ir.Constant(wide_ty, ir.Undefined),
                                        ir.Constant(ir.VectorType(I32, w), list(range(j * w, (j + 1) * w))))
                r, v = divmod(done + j, nvec)
                row = first + r if isinstance(first, int) else (llvm_ir.add(b, first, i64(r)) if r else first)
                store(post(part, row, v), row, v)
            done += chunk

    full = rows // group
    if full > 1:
        with for_range(b, 0, full, name="epi.rows") as it:
            rows_at(llvm_ir.mul(b, it, i64(group)), group)
    elif full == 1:
        rows_at(0, group)
    if rows % group:
        rows_at(full * group, rows % group)


def _chunks(n: int) -> list[int]:
    """``n`` vectors as activation calls of power-of-two sizes up to ``GROUP_VECTORS``."""
    out: list[int] = []
    size = GROUP_VECTORS
    while n:
        while size > n:
            size //= 2
        out.append(size)
        n -= size
    return out
