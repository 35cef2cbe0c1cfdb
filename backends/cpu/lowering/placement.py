"""Where a kernel computes the reductions it reads (decided when the kernel is formed).

A kernel loops over its output variables ``v0, v1, ...`` outermost first.  A
``ReduceRef`` whose output index depends on ``v0..vL-1`` *exactly* (a prefix) and maps
them one-to-one onto the reduction's outputs is computed in the kernel, once per
iteration of those loops, right where they are bound: softmax computes its max and
sum per row, then writes the row.  Any other reduction (e.g. a channel reduction read
by an NCHW element loop, which would recompute it per element) is realized first as its
own kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

from ziggurat.backends.cpu.lowering.index import Var
from ziggurat.backends.cpu.lowering.values import ReduceRef, Value, walk


def _prod(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def ref_level(ref: ReduceRef, vars_: Sequence[Var]) -> int | None:
    """``L`` when ``ref`` can be computed once per iteration of ``vars_[:L]``, else None."""
    deps: set[Var] = set()
    for e in ref.out:
        deps |= e.vars()
    if not deps <= set(vars_):
        return None
    level = max((vars_.index(v) + 1 for v in deps), default=0)
    if deps != set(vars_[:level]):
        return None
    if _prod([v.extent for v in vars_[:level]]) != _prod(ref.reduction.out_shape):
        return None
    return level


def top_level_refs(root: Value) -> list[ReduceRef]:
    return [n for n in walk(root) if isinstance(n, ReduceRef)]


def misplaced_reductions(vars_: Sequence[Var], root: Value) -> list[ReduceRef]:
    """The reductions read by ``root`` that this kernel cannot compute itself."""
    return [r for r in top_level_refs(root) if ref_level(r, vars_) is None]
