"""Horizontal reductions of one vector register to a scalar.

* ``reduce_add`` uses ``llvm.vector.reduce.fadd`` with start value ``-0.0`` (the additive
  identity that keeps ``-0`` sums ``-0``).  With ``reassoc=True`` (default) the call carries
  the ``reassoc`` fast-math flag so LLVM emits a log2(W) shuffle tree; without it the sum is
  strictly sequential lane 0, 1, 2, ... (bit-reproducible against a scalar loop, slower).
* ``reduce_max`` / ``reduce_min`` default to ``llvm.vector.reduce.fmaximum`` /
  ``fminimum``: a NaN in any lane makes the result NaN, which is what ``torch.max``,
  ``torch.amax`` and ``torch.min`` do on CPU, and ``-0 < +0`` is respected.
  ``propagate_nan=False`` selects ``llvm.vector.reduce.fmax`` / ``fmin`` instead (IEEE maxNum:
  NaN lanes are ignored unless all lanes are NaN) -- the semantics of ``torch.nanmax``-style
  helpers, cheaper on x86.

Scalars are returned unchanged.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import value_type
from ziggurat.backends.cpu.vecmath.builder import VB


def reduce_add(b: ir.IRBuilder, vec: ir.Value, reassoc: bool = True) -> ir.Value:
    """Sum of the lanes of ``vec``."""
    v = VB(b, vec)
    if v.width is None:
        return vec
    elem = v.fmt.elem
    start = ir.Constant(elem, -0.0)
    return v.intrinsic("vector.reduce.fadd", elem, [start, vec], overload=[value_type(vec)],
                       fastmath=("reassoc",) if reassoc else ())


def _minmax(b: ir.IRBuilder, vec: ir.Value, kind: str, nan_free: bool = False) -> ir.Value:
    v = VB(b, vec)
    if v.width is None:
        return vec
    return v.intrinsic(f"vector.reduce.{kind}", v.fmt.elem, [vec], overload=[value_type(vec)],
                       fastmath=("nnan",) if nan_free else ())


def reduce_max(b: ir.IRBuilder, vec: ir.Value, propagate_nan: bool = True, nan_free: bool = False) -> ir.Value:
    """Largest lane; NaN if any lane is NaN unless ``propagate_nan=False``.  ``nan_free``: the
    caller guarantees no lane is NaN, so the reduction is a shuffle tree of plain max
    instructions (without it, x86 checks every step for NaN, one lane at a time)."""
    return _minmax(b, vec, "fmaximum" if propagate_nan else "fmax", nan_free)


def reduce_min(b: ir.IRBuilder, vec: ir.Value, propagate_nan: bool = True) -> ir.Value:
    """Smallest lane; NaN if any lane is NaN unless ``propagate_nan=False``."""
    return _minmax(b, vec, "fminimum" if propagate_nan else "fmin")
