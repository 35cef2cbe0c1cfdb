"""Non-finite constants survive printing and parsing: xDSL prints them as bit patterns
(``dense<[0x7F800000, 1.0]>``) and read them back as integers near 2e9, so a saved module
with an inf/NaN buffer computed with 2.1e9 after ``ziggurat.load``."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

import ziggurat
from ziggurat.ir.context import make_context

SPECIAL = [float("inf"), float("nan"), -float("inf"), 1.0, -0.0, 1e-45]


class AddBuffer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("c", torch.tensor(SPECIAL))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.c


@pytest.mark.parametrize("backend", ["cpu", "reference", "tensorrt-reference"])
def test_saved_module_keeps_non_finite_constants(backend: str, tmp_path: Path) -> None:
    x = torch.zeros(len(SPECIAL))
    compiled = ziggurat.compile(AddBuffer(), (x,), backend=backend)
    compiled.save(tmp_path / "m.zg")
    loaded = ziggurat.load(tmp_path / "m.zg")
    torch.testing.assert_close(loaded(x), AddBuffer()(x), equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype, text", [("f32", "0x7F800000"), ("f64", "0x7FF0000000000000"), ("f16", "0x7C00"),
                                         ("bf16", "0x7F80")])
def test_hex_elements_of_a_float_literal_are_bits(dtype: str, text: str) -> None:
    attr = Parser(make_context(), f"dense<[{text}, 0xFFC00000, 2.5]> : tensor<3x{dtype}>".replace(
        "0xFFC00000", {"f32": "0xFFC00000", "f64": "0xFFF8000000000000", "f16": "0xFE00", "bf16": "0xFFC0"}[dtype])
    ).parse_attribute()
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    values = list(attr.get_values())
    assert values[0] == float("inf") and values[1] != values[1] and values[2] == 2.5
    assert Parser(make_context(), str(attr)).parse_attribute() == attr


@pytest.mark.parametrize("text", ["dense<[-0x7F800000]> : tensor<1xf32>", "dense<[0x7F8000001]> : tensor<1xf32>"])
def test_a_hex_float_element_with_a_sign_or_too_wide_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        Parser(make_context(), text).parse_attribute()
