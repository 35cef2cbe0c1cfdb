"""Linear resize along a dim whose size does not change: torch reads the element itself with
weights 1 and 0, so an inf there comes out NaN; IResizeLayer copies it (seed 3 program 5192)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts
from tests.support.special_values import with_special_values


@pytest.mark.parametrize(("shape", "size"), [((2, 3, 1, 5), (1, 5)), ((2, 3, 4, 5), (7, 5)), ((2, 3, 4, 5), (4, 9))])
@pytest.mark.parametrize("align", [False, True])
def test_unscaled_dim_keeps_eagers_nan_of_inf(shape: tuple[int, ...], size: tuple[int, int], align: bool) -> None:
    x = with_special_values(shape)
    check_converts(lambda t: F.interpolate(t, size=size, mode="bilinear", align_corners=align), [x])
