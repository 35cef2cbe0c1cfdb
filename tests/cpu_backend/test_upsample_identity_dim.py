"""Linear upsampling along a dim whose size does not change reads only that element.

torch's ``compute_source_index_and_lambda`` maps an unscaled dim to itself for both corners
(weights 1 and 0); reading the neighbour instead multiplies its inf/NaN by 0 and poisons a
finite result (seed 3 program 5192).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.support.special_values import with_special_values


class _Up(torch.nn.Module):
    def __init__(self, size: tuple[int, ...], align: bool) -> None:
        super().__init__()
        self.size, self.align = size, align

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[len(self.size)]
        return F.interpolate(x, size=self.size, mode=mode, align_corners=self.align)


@pytest.mark.parametrize(("shape", "size"), [((2, 3, 1, 5), (1, 5)), ((2, 3, 4, 5), (7, 5)),
                                             ((2, 3, 6), (6,)), ((1, 2, 3, 4, 5), (3, 8, 5))])
@pytest.mark.parametrize("align", [False, True])
def test_unscaled_dim_ignores_neighbour_inf(shape: tuple[int, ...], size: tuple[int, ...], align: bool) -> None:
    x = with_special_values(shape, negative_zero=False)
    model = _Up(size, align)
    expected = model(x)
    compiled = ziggurat.compile(model, (x,), backend="cpu", threads=1, isa="scalar")
    torch.testing.assert_close(compiled(x), expected, equal_nan=True)
