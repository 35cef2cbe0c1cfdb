"""``ziggurat.backends.passes.parse_pipeline`` parses each spec once and hands out the same
frozen pass instances; a bad spec is a ``ZigguratError`` on every call, never a cached one."""

from __future__ import annotations

import dataclasses

import pytest

from ziggurat.backends.passes import parse_pipeline
from ziggurat.ir.errors import ZigguratError


def test_a_spec_is_parsed_once_into_frozen_passes() -> None:
    spec = "graph-opt{duplicate=true},prepack-weights{isa=avx2},cse"
    first, second = parse_pipeline(spec), parse_pipeline(spec)
    assert [p.name for p in first] == ["graph-opt", "prepack-weights", "cse"]
    assert first is not second and first == second
    assert all(a is b for a, b in zip(first, second, strict=True))
    for p in first:  # shared between compiles: nothing may change one in place
        assert dataclasses.is_dataclass(p) and type(p).__dataclass_params__.frozen  # type: ignore[attr-defined]
    first.pop()
    assert len(parse_pipeline(spec)) == 3  # the caller's list is its own
    assert parse_pipeline("graph-opt")[0] != first[0]  # options make a different pass


def test_a_bad_spec_raises_every_time() -> None:
    for _ in range(2):  # in one process: a cached failure would not raise the second time
        with pytest.raises(ZigguratError, match="no-such-pass"):
            parse_pipeline("graph-opt,no-such-pass")
