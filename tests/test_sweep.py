"""The each-choice cover of ``tests/support/sweep.py``: every value of every axis in make test."""

from __future__ import annotations

import itertools

import pytest

from tests.support.sweep import cover, each_choice


@pytest.mark.parametrize("lengths", [(1,), (3,), (8, 10), (3, 2, 7), (10, 3, 2), (4, 4)])
def test_the_cover_takes_every_value_of_every_axis_once_per_longest_value(lengths: tuple[int, ...]) -> None:
    chosen = cover(*lengths)
    assert len(chosen) == max(lengths)
    for axis, n in enumerate(lengths):
        assert {c[axis] for c in chosen} == set(range(n))
    assert chosen <= set(itertools.product(*(range(n) for n in lengths)))


def test_an_empty_axis_is_an_error() -> None:
    with pytest.raises(ValueError, match="each axis needs a value"):
        cover(3, 0)


def test_cases_outside_the_cover_are_slow_and_tuples_flatten() -> None:
    mark = each_choice(["isa", "which, top"], ["avx512", "avx2"], [("qk", 77), ("pv", 700), ("qkt", 70)],
                       ids=[None, lambda v: v[0]])
    params = mark.args[1]
    assert mark.args[0] == ["isa", "which", "top"]
    assert [p.values for p in params][:2] == [("avx512", "qk", 77), ("avx512", "pv", 700)]
    slow = [p.id for p in params if any(m.name == "slow" for m in p.marks)]
    quick = [p.id for p in params if not p.marks]
    assert sorted(quick) == ["avx2-pv", "avx512-qk", "avx512-qkt"]
    assert sorted(slow + quick) == sorted(f"{i}-{w}" for i in ("avx512", "avx2") for w in ("qk", "pv", "qkt"))


def test_a_tuple_value_of_a_one_name_axis_stays_one_value() -> None:
    mark = each_choice("spatial, weighted", [(), (3,), (2, 3)], [False, True])
    assert [p.values for p in mark.args[1]][:2] == [((), False), ((), True)]


def test_a_value_of_the_wrong_width_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a tuple of 2 values"):
        each_choice(["a", "b, c"], [1], [(2, 3, 4)])
    with pytest.raises(ValueError, match="2 axes named, 1 given"):
        each_choice("a, b", [1])


def test_a_param_value_brings_its_marks() -> None:
    skip = pytest.mark.skipif(True, reason="no such kernel here")
    mark = each_choice("kernel, m", [pytest.param("amx", marks=skip), "vnni"], [1, 2, 3], ids=[None, str])
    params = mark.args[1]
    assert [p.values for p in params][:2] == [("amx", 1), ("amx", 2)]
    assert all(any(getattr(m, "name", None) == "skipif" for m in p.marks) == (p.values[0] == "amx") for p in params)
    assert [p.id for p in params][:2] == ["amx-1", "amx-2"]
