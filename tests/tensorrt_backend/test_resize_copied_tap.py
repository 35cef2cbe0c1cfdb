"""Linear resize where torch reads one element for both taps of a scaled dim, weights 1 and 0:
an input of size 1 (``1 -> 7`` with align_corners), the last pixel at an exact coordinate.  An
inf there is NaN in eager (``inf * 0``), IResizeLayer copies it (fuzz seed 11 program 4478:
``interpolate(x, size=(7, 1), mode="bilinear", align_corners=True)`` of a ``[N, C, 1, 7]``
input holding inf gave inf where eager gives NaN)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts, convert_and_run
from tests.support.special_values import with_special_values
from ziggurat.backends.tensorrt.converters.linear_resize_taps import copied_with_zero_weight


def _special(shape: tuple[int, ...]) -> torch.Tensor:
    return with_special_values(shape)


@pytest.mark.parametrize(("shape", "size", "align"), [
    ((3, 7, 1, 7), (7, 1), True),  # the fuzz program: a dim 1 -> 7 and one 7 -> 1
    ((3, 7, 1, 7), (8, 1), False),
    ((2, 3, 1, 5), (4, 9), True),  # 1 -> 4
    ((2, 3, 1, 5), (4, 9), False),
    ((2, 3, 4, 5), (7, 9), True),  # the last pixel at an exact coordinate
    ((2, 3, 1, 5), (8, 5), False),  # 1 -> 8: rows 0-3 read the only one with weights (1, 0)
])
def test_copied_tap_keeps_eagers_nan_of_inf(shape: tuple[int, ...], size: tuple[int, int], align: bool) -> None:
    check_converts(lambda t: F.interpolate(t, size=size, mode="bilinear", align_corners=align), [_special(shape)])


def test_linear_1d_from_one_element() -> None:
    check_converts(lambda t: F.interpolate(t, size=5, mode="linear", align_corners=True), [_special((4, 3, 1))])


def test_copied_taps_match_eagers_nan_pattern() -> None:
    """The taps computed for the converter agree with eager's own NaNs (one inf per input)."""
    for i in range(1, 9):
        for o in range(1, 20):
            for align in (False, True):
                copied = copied_with_zero_weight(i, o, align, None)
                if copied is None:
                    continue
                for j in range(i):
                    x = torch.ones(1, 1, i)
                    x[0, 0, j] = float("inf")
                    y = F.interpolate(x, size=o, mode="linear", align_corners=align)[0, 0]
                    for k in range(o):
                        if copied[k] and y[k] == float("inf"):
                            raise AssertionError((i, o, align, j, k))


def test_rounding_dependent_taps_fall_back() -> None:
    """``1 -> 3`` half-pixel: torch's middle coordinate is 0 or a rounding error above it,
    depending on a fused multiply-add, so whether it makes NaN of an inf is not known."""
    assert copied_with_zero_weight(1, 3, False, None) is None
    x = _special((2, 3, 1, 4))
    converted = convert_and_run(lambda t: F.interpolate(t, size=(3, 4), mode="bilinear"), [x])
    assert any("upsample" in r.op for r in converted.report.fallback)


@pytest.mark.parametrize(("in_len", "out_len"), [(1, 3), (1, 7), (2, 6), (3, 1), (4, 7), (5, 9), (3, 9)])
@pytest.mark.parametrize("align", [False, True])
def test_each_infinite_element_gives_eagers_class(in_len: int, out_len: int, align: bool) -> None:
    """One +-inf per row at each position: converted results have eager's NaN/inf classes, or
    the resize falls back (``2 -> 6`` half-pixel: torch's float32 coordinate of row 1 is a
    rounding error above 0, so it weighs element 1 by 1.5e-8, IResizeLayer's formula by 0)."""
    x = torch.randn(2 * in_len, 1, in_len)
    for j in range(in_len):
        x[2 * j, 0, j] = float("inf")
        x[2 * j + 1, 0, j] = -float("inf")
    converted = convert_and_run(lambda t: F.interpolate(t, size=out_len, mode="linear", align_corners=align), [x])
    if converted.report.fallback:
        assert copied_with_zero_weight(in_len, out_len, align, None) is None
        return
    got, expected = converted.outputs[0], converted.expected[0]
    assert torch.equal(got.isnan(), expected.isnan()) and torch.equal(got.isinf(), expected.isinf())
