"""Merging adjacent loops whose variables every access uses as one flat index.

``out[i, j] = x[i, j] + 1`` over ``[64, 7]`` is one loop over 448 elements (one masked
tail instead of 64), but ``out[i, j] = x[i, j] + b[j]`` keeps two loops (``b`` reads ``j``
alone).  A merge of ``v_k, v_{k+1}`` is tried by re-tracing the element function with
``v_k = m // E`` and ``v_{k+1} = m % E``: it is kept only if the simplified index
expressions of every access (reductions' bodies included) are affine in ``m`` again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ziggurat.backends.cpu.lowering.index import FloorDiv, IndexExpr, Indirect, Mod, Var, flat_index
from ziggurat.backends.cpu.lowering.values import IndexValue, Load, ReduceRef, Value, walk

Trace = Callable[[Sequence[IndexExpr]], Value]


def _exprs(root: Value, depth: int = 0) -> Iterator[IndexExpr]:
    from ziggurat.backends.cpu.loopgen.reductions import trace_body

    for node in walk(root):
        if isinstance(node, Load):
            yield flat_index(node.subs, node.buffer.shape)
            for d in node.guards:
                yield node.subs[d]
        elif isinstance(node, IndexValue):
            yield node.expr
        elif isinstance(node, ReduceRef):
            yield flat_index(node.out, node.reduction.out_shape)
            if depth < 4:
                _, body, _ = trace_body(node)
                yield from _exprs(body, depth + 1)


def _affine_in(expr: IndexExpr, var: Var) -> bool:
    for atom, _ in expr.terms:
        if isinstance(atom, FloorDiv | Mod) and var in atom.vars():
            return False
        inner = getattr(atom, "node", None)
        if isinstance(inner, Value) and var in inner.index_vars():
            for e in _exprs(inner):
                if not _affine_in(e, var):
                    return False
    return True


def merge_loops(vars_: list[Var], index: list[IndexExpr], trace: Trace,
                extra: Callable[[list[IndexExpr]], Sequence[IndexExpr]] = lambda idx: ()) -> tuple[
                    list[Var], list[IndexExpr], Value]:
    """Merge adjacent loop variables (innermost first) while every access stays affine;
    returns the loop variables, the index over the original dims and the traced root."""
    root = trace(index)
    k = len(vars_) - 2
    while k >= 0:
        outer, inner = vars_[k], vars_[k + 1]
        m = Var(outer.name, outer.extent * inner.extent)
        sub = {outer: IndexExpr.of(m) // inner.extent, inner: IndexExpr.of(m) % inner.extent}
        new_index = [e.substitute(sub) for e in index]
        new_root = trace(new_index)
        exprs = list(_exprs(new_root)) + list(extra(new_index))
        if all(_affine_in(e, m) for e in exprs):
            vars_ = vars_[:k] + [m] + vars_[k + 2:]
            index, root = new_index, new_root
        k -= 1
    return vars_, index, root


def merge_narrow_inner(vars_: list[Var], index: list[IndexExpr], root: Value, trace: Trace,
                       width: int) -> tuple[list[Var], list[IndexExpr], Value]:
    """An innermost loop narrower than a quarter of the vector width merged with the loop around
    it although an access is not affine in the merged variable: a vector loop of ``width``
    lanes, that access a gather of ``m // E`` and ``m % E`` lane-wise, instead of one vector of
    ``E`` lanes per outer step (the 3-channel NCHW -> NHWC input of a channels-last stem
    convolution: a 3-lane gather per pixel).  Only for plain loads: no reduction, no run-time
    index, no guarded (padded) access."""
    if width < 8 or len(vars_) < 2 or vars_[-1].extent * 4 > width or vars_[-1].extent < 2:
        return vars_, index, root
    for node in walk(root):
        if isinstance(node, ReduceRef | IndexValue):
            return vars_, index, root
        if isinstance(node, Load) and (node.guards or any(isinstance(atom, Indirect)
                                                          for sub in node.subs for atom, _ in sub.terms)):
            return vars_, index, root
    outer, inner = vars_[-2], vars_[-1]
    m = Var(outer.name, outer.extent * inner.extent)
    sub = {outer: IndexExpr.of(m) // inner.extent, inner: IndexExpr.of(m) % inner.extent}
    new_index = [e.substitute(sub) for e in index]
    return vars_[:-2] + [m], new_index, trace(new_index)
