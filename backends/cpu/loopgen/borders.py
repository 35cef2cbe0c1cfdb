"""Border splits: a kernel whose loads check their subscripts at run time runs its interior,
where no check can fail, in a loop nest of its own.

A padded window (max pooling, an im2col copy, a convolution's zero-padded phases, ``pad``)
reads ``x[..., s*o + r - p]``: each load is guarded (``Load.guards``: the load yields the
padding value where the subscript is out of range), which costs a compare, a mask and a
masked load per vector, though only the first and last few output rows and columns can fail
a check.  :func:`border_pieces` splits those output dims into a border before, the interior
and a border after; ``loopgen/kernel.py`` emits one loop nest per block of the split, and the
element function traced over a block's ranges has no guard where its subscripts stay in
range there (``Load`` computes its guards from the subscripts' ranges).  The values are the
same: each element is computed by the same ops from the same loads, only without the checks
that could not fail.  A 3x3/2 max pool of 1x64x112x112 bf16 (ResNet's stem): 0.354 ms,
against 0.158 ms with no padding at all.

Only a kernel whose elements each make several guarded loads (a window's taps) is split: the
checks of a padded copy's one load cost less than the loop nests of the split.  A dim is split
when every guarded subscript of the kernel is affine in exactly one output
variable with a positive coefficient (a window's row or column); else nothing is split.  The
vector dim's interior is a whole number of vectors, and at most :data:`MAX_SPLIT_DIMS` dims
(the innermost ones) are split.
"""

from __future__ import annotations

from ziggurat.backends.cpu.loopgen.reductions import trace_body
from ziggurat.backends.cpu.lowering.index import IndexExpr, Var, loop_vars
from ziggurat.backends.cpu.lowering.nodes import ComputeNode
from ziggurat.backends.cpu.lowering.tensors import begin_trace
from ziggurat.backends.cpu.lowering.values import Load, ReduceRef, Value, walk

#: kernels of fewer output elements keep one nest (each nest is code to compile)
MIN_ELEMENTS = 4096
#: at most this many output dims are split (3 x 3 = 9 nests at most)
MAX_SPLIT_DIMS = 2
#: ... and only kernels whose output elements each make at least this many guarded loads (a
#: window's taps): a padded copy's one load a element ran slower split (conv-silu-stack's
#: zero-padded 1x32x58x58 images, 0.0095 -> 0.019 ms: nine nests of short vector loops)
MIN_GUARDED_LOADS = 4

#: a dim's pieces: (start, size) each, in order
Pieces = list[tuple[int, int]]


def _guarded_subscripts(root: Value, taps: int = 1,
                        seen: set[int] | None = None) -> tuple[list[tuple[IndexExpr, int]], int]:
    """(subscript, dim size) of every guarded subscript reachable from ``root``, also inside
    reductions' bodies, and the guarded loads an output element makes (a load in a reduction's
    body counts once per step of the reduction)."""
    seen = set() if seen is None else seen
    out: list[tuple[IndexExpr, int]] = []
    loads = 0
    for node in walk(root):
        if node.uid in seen:
            continue
        seen.add(node.uid)
        if isinstance(node, Load) and node.guards:
            out.extend((node.subs[d], node.buffer.shape[d]) for d in node.guards)
            loads += taps
        elif isinstance(node, ReduceRef):
            vars_, body, _ = trace_body(node)
            steps = 1
            for v in vars_:
                steps *= v.extent
            inner, inner_loads = _guarded_subscripts(body, taps * steps, seen)
            out.extend(inner)
            loads += inner_loads
    return out, loads


def _interiors(vars_: list[Var], subscripts: list[tuple[IndexExpr, int]]) -> dict[Var, tuple[int, int]] | None:
    """Per output variable, the range ``[lo, hi)`` where every guarded subscript of it is in
    range whatever the other variables are; None if a guarded subscript is not affine in
    exactly one output variable with a positive coefficient."""
    bounds: dict[Var, tuple[int, int]] = {}
    for sub, size in subscripts:
        mine = [v for v in vars_ if v in sub.vars()]
        if len(mine) != 1:
            return None
        v = mine[0]
        a = sub.coeff(v)
        if a is None or a <= 0:
            return None
        rest_lo, rest_hi = sub.without(v).range()
        lo = max(0, -(rest_lo // a))  # a*v + rest_lo >= 0
        hi = min(v.extent, (size - 1 - rest_hi) // a + 1)  # a*v + rest_hi <= size - 1
        old_lo, old_hi = bounds.get(v, (0, v.extent))
        bounds[v] = (max(old_lo, lo), min(old_hi, hi))
    return bounds


def _pieces(extent: int, lo: int, hi: int, width: int) -> Pieces | None:
    """A dim of ``extent`` split around its interior ``[lo, hi)`` (rounded to whole vectors
    when ``width`` > 1), or None when there is no border or no interior."""
    if width > 1:
        lo = -(-lo // width) * width
        if hi < extent:
            hi = lo + (hi - lo) // width * width
            if 0 < extent - hi < 2:  # a one-element last piece would not be a vector loop
                hi -= width
    if hi - lo < max(width, 1) or (lo == 0 and hi >= extent):
        return None
    pieces = [(0, lo)] if lo else []
    pieces.append((lo, min(hi, extent) - lo))
    if hi < extent:
        pieces.append((hi, extent - hi))
    return pieces


def border_pieces(node: ComputeNode, width: int) -> dict[int, Pieces] | None:
    """The output dims to split and their pieces (see the module doc), or None."""
    shape = node.out.shape
    total = 1
    for n in shape:
        total *= n
    if total < MIN_ELEMENTS:
        return None
    vars_, index = loop_vars(shape, "i")
    begin_trace()
    subscripts, loads = _guarded_subscripts(node.fn(index))
    if loads < MIN_GUARDED_LOADS:
        return None
    bounds = _interiors(vars_, subscripts)
    if not bounds:
        return None
    dims = [d for d, n in enumerate(shape) if n > 1]
    vector_dim = dims[-1] if dims else None
    split: dict[int, Pieces] = {}
    for v, d in reversed(list(zip(vars_, dims, strict=True))):
        if v not in bounds or len(split) == MAX_SPLIT_DIMS:
            continue
        pieces = _pieces(v.extent, *bounds[v], width if d == vector_dim else 1)
        if pieces is not None:
            split[d] = pieces
    return split or None
