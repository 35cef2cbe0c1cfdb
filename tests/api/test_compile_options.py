"""Compile options: a misspelt or foreign option is an error naming it and the closest known
one (it was silently ignored), for compile, explain and bisect alike."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import ziggurat
from ziggurat.backends.options import UnknownOptionError
from ziggurat.ir.errors import ZigguratError

MODEL, X = torch.nn.ReLU(), torch.randn(3)


@pytest.mark.parametrize("entry", [ziggurat.compile, ziggurat.explain, ziggurat.bisect])
@pytest.mark.parametrize("backend, option, match", [
    ("cpu", {"prepak": False}, r"unknown option 'prepak' \(did you mean 'prepack'\?\)"),
    ("cpu", {"treads": 2}, r"did you mean 'threads'"),
    ("reference", {"min_blok_size": 1}, r"did you mean 'min_block_size'"),
    ("tensorrt-reference", {"xyzzy": 1}, r"unknown option 'xyzzy'; the tensorrt-reference backend takes: .*min_block_size"),
    ("cpu", {"min_block_size": 1}, "'min_block_size' is an option of the tensorrt, tensorrt-reference backends, not of cpu"),
    ("reference", {"profile": True}, "'profile' is an option of the cpu backend, not of reference"),
])
def test_unknown_options_are_errors(entry: Any, backend: str, option: dict[str, Any], match: str) -> None:
    with pytest.raises(UnknownOptionError, match=match) as caught:
        entry(MODEL, (X,), backend=backend, **option)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ZigguratError)


def test_known_options_of_the_backend_are_taken() -> None:
    compiled = ziggurat.compile(MODEL, (X,), backend="tensorrt-reference", min_block_size=1,
                                torch_executed_ops="aten::relu")
    torch.testing.assert_close(compiled(X), MODEL(X))
    assert compiled.options.extra == {"min_block_size": 1, "torch_executed_ops": "aten::relu"}


def test_example_kwargs_must_be_a_dict() -> None:
    with pytest.raises(ZigguratError, match="example_kwargs must be a dict"):
        ziggurat.compile(MODEL, (X,), backend="reference", example_kwargs=[X])  # type: ignore[arg-type]
