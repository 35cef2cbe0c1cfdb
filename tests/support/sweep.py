"""Parameter sweeps that ``make test`` covers value by value and ``-m slow`` covers whole.

``each_choice("m, k", M_SIZES, K_SIZES)`` parametrizes a test over the product of its axes.
The cases ``make test`` runs are an each-choice cover: case ``i`` takes value ``i`` of every
axis (cycling the shorter ones), so every value of every axis runs at least once, and the
longest axis decides how many cases run.  The rest of the product is marked ``slow``
(``pytest -m slow``).  An axis may bind several names: its values are then tuples of them
(``each_choice(["isa", "which, top"], ISAS, [("qk", 77), ("pv", 700)])``).

A kernel or model compiled cold costs 0.3-4 s; a product of three axes of 3-10 values each
held ``make test`` minutes past its 15-minute limit on 2 cores, for interactions that the
sweep under ``-m slow`` and the fuzzer keep checking.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from _pytest.mark.structures import ParameterSet


def cover(*lengths: int) -> set[tuple[int, ...]]:
    """The index tuples of the each-choice cover of axes of these lengths."""
    if not lengths or min(lengths) < 1:
        raise ValueError(f"each axis needs a value, got lengths {lengths}")
    return {tuple(i % n for n in lengths) for i in range(max(lengths))}


AxisIds = Sequence[str] | Callable[[Any], str] | None


def each_choice(argnames: str | Sequence[str], *axes: Sequence[Any],
                ids: Sequence[AxisIds] | None = None) -> pytest.MarkDecorator:
    """``pytest.mark.parametrize`` over the product of ``axes``, the cases outside the
    each-choice cover marked ``slow``.  ``argnames``: one name per axis (``"m, k"``), or per
    axis its names (``["which, top", "isa"]``: that axis's values are tuples of that width).
    ``ids``: per axis, its values' ids (a list, a function of the value, or None for ``str``),
    joined by ``-``; by default pytest's own."""
    groups = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
    if len(groups) != len(axes):
        raise ValueError(f"each_choice({argnames!r}): {len(groups)} axes named, {len(axes)} given")
    widths = [len(g.split(",")) for g in groups]
    names = [n.strip() for g in groups for n in g.split(",")]
    quick = cover(*(len(a) for a in axes))
    params: list[Any] = []
    for index in itertools.product(*(range(len(a)) for a in axes)):
        values: list[Any] = []
        marks: list[Any] = []
        for axis, i, width in zip(axes, index, widths, strict=True):
            value: Any = axis[i]
            if isinstance(value, ParameterSet):  # pytest.param(value, marks=...): its marks apply
                marks.extend(value.marks)
                value = value.values if width > 1 else value.values[0]
            if width > 1 and not (isinstance(value, tuple) and len(value) == width):
                raise ValueError(f"each_choice({argnames!r}): {value!r} is not a tuple of {width} values")
            values.extend(value if width > 1 else (value,))
        if index not in quick:
            marks.append(pytest.mark.slow)
        case_id = None if ids is None else "-".join(
            _axis_id(axis_ids, axis, i) for axis_ids, axis, i in zip(ids, axes, index, strict=True))
        params.append(pytest.param(*values, marks=marks, id=case_id))
    return pytest.mark.parametrize(names, params)


def _axis_id(axis_ids: AxisIds, axis: Sequence[Any], i: int) -> str:
    value: Any = axis[i]
    if isinstance(value, ParameterSet):
        if isinstance(value.id, str):
            return value.id
        value = value.values if len(value.values) > 1 else value.values[0]
    if axis_ids is None:
        return "-".join(map(str, value)) if isinstance(value, tuple) else str(value)
    return axis_ids(value) if callable(axis_ids) else axis_ids[i]
