"""A range build from static lowerings at sampled sizes (backends with ``sampled_range_builds``:
the CPU backend, whose lowerings compile static shapes).

The exported graph is specialized and lowered at a few sizes (``sample_points``: odd sizes,
the template near the top of the ranges, one variant per symbol, check points lower down);
the backend's ``symbolize_range`` fits the sizes that differ and rewrites the template into
one build for every size (``backends/cpu/symbolize.py``), or declines with the first
difference it cannot take, and the caller builds one size at a time.  Size 1 is left out
(``floor``): lowerings treat a dim of 1 as a broadcast and drop it, so the build serves sizes
from 2 and a call with a symbol at 1 gets a build of its own (a range build over the other
symbols with that one pinned, ``DynamicCompiledModule``).  Where the lowerings change
structure at small sizes, a symbol's floor is raised (``FLOOR_STEPS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ziggurat.backends.driver import Lowered
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.ir_levels import IRLevels
from ziggurat.ir.shape_symbols import ShapeSymbols, evaluate

#: sizes above this are not a range the arena can be planned for at its top
LARGEST_TOP = 1 << 20
#: a symbol with at most this many sizes is checked at every one of them
SMALL_RANGE = 6


@dataclass(frozen=True)
class SamplePoints:
    """Where a range build lowers, as values in symbol order."""

    #: the served ranges' ends: each symbol's declared range, from ``floor`` up
    lows: list[int]
    tops: list[int]
    #: the template: each symbol at the largest odd size of its range (its top if there is none)
    template: list[int]
    #: per symbol with more than one size: the template with that symbol moved down (by 2,
    #: to the next odd size, where the range allows)
    variants: dict[int, list[int]]
    #: the bottom of the ranges, the smallest odd sizes, an odd size between, and every size of
    #: a symbol whose range holds at most SMALL_RANGE of them
    checks: list[list[int]]


def _odd_at_most(n: int) -> int:
    return n if n % 2 else n - 1


def served_box(symbols: ShapeSymbols, floor: int) -> tuple[list[int], list[int]]:
    """Each symbol's served range: its declared one from ``floor`` up, to its declared top."""
    tops: list[int] = []
    lows: list[int] = []
    for s in symbols.symbols:
        if s.high is None or s.high > LARGEST_TOP:
            raise ZigguratError(f"'{s.name}' has no maximum (or one above {LARGEST_TOP}): the CPU backend plans its "
                                "buffers for the top of the range; declare max= in its Dim", op="compile")
        if s.high < floor:
            raise ZigguratError(f"'{s.name}' only takes sizes below {floor}, which are built one at a time",
                                op="compile")
        tops.append(s.high)
        lows.append(max(s.low, floor))
    return lows, tops


def sample_points(lows: Sequence[int], tops: Sequence[int]) -> SamplePoints:
    """The template and the variants at odd sizes near the top of the box ``lows``..``tops``
    (a symbol with ``low == top`` is pinned): a lowering specializes a size that is a
    multiple of its vector width (no masked tail), an odd size is a multiple of none, so the
    template is the general code.  The checks start at the very bottom of the ranges: a size
    that is a min or a max of a symbol and a constant (a diagonal's length is ``min(n, 3)``) is
    constant near the top and only differs below its kink, so a kink anywhere above the bottom
    shows up as a difference there (fuzz seed 25, program 309: a range [2, 5] sampled at 5
    and 3 only returned 3 diagonal elements for ``n = 2``)."""
    lows, tops = list(lows), list(tops)
    template = [max(low, _odd_at_most(top)) for low, top in zip(lows, tops, strict=True)]
    variants: dict[int, list[int]] = {}
    for i, (low, t) in enumerate(zip(lows, template, strict=True)):
        moved = t - 2 if t - 2 >= low else t - 1
        if moved >= low:
            variants[i] = [moved if j == i else v for j, v in enumerate(template)]
    seen = [template, *variants.values()]
    points = [list(lows), [low if low % 2 else min(low + 1, t) for low, t in zip(lows, template, strict=True)],
              [max(low, min(t, _odd_at_most((low + t) // 2))) for low, t in zip(lows, template, strict=True)]]
    for i, (low, top) in enumerate(zip(lows, tops, strict=True)):
        if 1 < top - low + 1 <= SMALL_RANGE:
            points += [[n if j == i else v for j, v in enumerate(template)] for n in range(low, top + 1)]
    checks: list[list[int]] = []
    for point in points:
        if point not in seen:
            checks.append(point)
            seen.append(point)
    return SamplePoints(lows, tops, template, variants, checks)


def input_shapes(symbols: ShapeSymbols, static: Sequence[Sequence[int | None]], values: dict[str, int]) -> list[list[int]]:
    """Every input's shape at the symbols' ``values``."""
    exprs = {(d.input, d.dim): d.expr for d in symbols.dims}
    return [[n if n is not None else evaluate(exprs[(i, k)], values) for k, n in enumerate(shape)]
            for i, shape in enumerate(static)]


def sampled_range_lowering(symbols: ShapeSymbols, static: Sequence[Sequence[int | None]],
                           lower_at: Callable[[dict[str, int], list[list[int]]], Lowered],
                           backend: Any, input_types: Sequence[Any], torch_ir: str, lows: Sequence[int],
                           tops: Sequence[int]) -> tuple[Lowered, list[int]]:
    """The template's lowering rewritten into one for every size of the box ``lows``..``tops``
    (``backend.symbolize_range``), and the lows it serves, or a :class:`ZigguratError` saying
    why not.

    Where the lowerings differ in structure at small sizes (a reduction vectorized across its
    outputs near the top, along its own dim at 2; a broadcast the lowering spells as a
    constant), each symbol's floor is raised to the smallest of :data:`FLOOR_STEPS` at which
    the lowering, with that symbol moved there alone, has the template's structure
    (``backend.same_structure``), and the box is tried again from those floors: sizes below
    them get builds of their own."""
    names = [s.name for s in symbols.symbols]
    made: dict[tuple[int, ...], Lowered] = {}

    def at(point: Sequence[int]) -> Lowered:
        """The lowering at ``point``, made once (a second attempt from raised floors reuses the
        template, the variants and the grid of the first)."""
        key = tuple(point)
        hit = made.get(key)
        if hit is None:
            values = dict(zip(names, point, strict=True))
            hit = made[key] = lower_at(values, input_shapes(symbols, static, values))
        return hit

    def attempt(box_lows: Sequence[int]) -> Lowered:
        points = sample_points(box_lows, tops)
        shared = at(points.template)
        template = replace(shared, module=shared.module.clone())  # symbolize rewrites it in place
        ranges = [(n, low, top) for n, low, top in zip(names, points.lows, points.tops, strict=True)]
        backend.symbolize_range(template.module, points.template, lambda point: at(point).module, ranges,
                                points.variants, points.checks)
        return template

    served = list(lows)
    try:
        template = attempt(served)
    except ZigguratError:
        raised = _raised_floors(served, tops, at, backend)
        if raised == served:
            raise
        served = raised
        template = attempt(served)
    ir = IRLevels(template.ir)
    ir["torch"] = torch_ir
    return replace(template, ir=ir, input_types=list(input_types)), served


#: the floors a symbol's served range may be raised to, lowest first (past the vector widths
#: and the small-size choices of the lowering)
FLOOR_STEPS = (3, 5, 9, 17, 33, 65)


def _raised_floors(lows: Sequence[int], tops: Sequence[int], at: Callable[[Sequence[int]], Lowered],
                   backend: Any) -> list[int]:
    """Per symbol, the lowest of its low and :data:`FLOOR_STEPS` below the template at which
    its lowering (that symbol moved alone) has the template's structure."""
    template = sample_points(lows, tops).template
    base = at(template).module
    out = list(lows)
    for i, low in enumerate(lows):
        candidates = [low] + [c for c in FLOOR_STEPS if low < c < template[i]]
        if len(candidates) == 1 and low == template[i]:
            continue
        for c in candidates:
            if backend.same_structure(base, at([c if j == i else v for j, v in enumerate(template)]).module):
                out[i] = c
                break
    return out
