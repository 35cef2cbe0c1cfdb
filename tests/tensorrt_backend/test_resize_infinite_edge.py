"""Linear resize at the last pixel of an axis, where an infinite input element stays infinite
(fuzz seed 7, program 71: ``interpolate(x, size=(7, 13), mode="bilinear")`` of a 23x5 input
whose last column holds -inf).  The reference's kLINEAR clamps the source coordinate to the
last pixel, whose two neighbours are then the same element with weights 1 and 0: ``0 * inf``
made a NaN where eager gives -inf.  That element is now taken as it is."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import convert_and_run

INF = float("inf")


def _classes(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t.isnan(), 2.0, torch.where(t.isinf(), torch.sign(t) * 3.0, 0.0))


@pytest.mark.parametrize("size", [(7, 13), (5, 9), (23, 5)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_linear_resize_keeps_infinite_edges(size: tuple[int, int]) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 23, 5, generator=g)
    x[0, 0, -1, -1] = -INF
    x[0, 1, :, -1] = INF
    x[1, 2, -1, :] = -INF
    converted = convert_and_run(lambda t: F.interpolate(t, size=size, mode="bilinear") * 2.0, [x])
    assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
    for got, expected in zip(converted.outputs, converted.expected, strict=True):
        assert torch.equal(_classes(got), _classes(expected))
        finite = torch.isfinite(expected)
        torch.testing.assert_close(got[finite], expected[finite], rtol=1e-5, atol=1e-5)
