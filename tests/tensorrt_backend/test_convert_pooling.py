"""Pooling converters vs eager, including ceil_mode and non-divisible adaptive pooling."""

from __future__ import annotations

import pytest
import torch

from conversion_harness import check_converts, convert_and_run

torch.manual_seed(0)

POOLS = {
    "max1d": (torch.nn.MaxPool1d(3, 2, 1), (2, 3, 11)),
    "max2d": (torch.nn.MaxPool2d(3, 2, 1), (2, 3, 9, 8)),
    "max2d_ceil": (torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True), (1, 2, 8, 8)),
    "max2d_ceil_nopad": (torch.nn.MaxPool2d(2, 2, ceil_mode=True), (1, 2, 7, 5)),
    "max3d": (torch.nn.MaxPool3d(2), (1, 2, 4, 6, 4)),
    "avg1d": (torch.nn.AvgPool1d(3, 2, 1), (2, 3, 10)),
    "avg2d_include_pad": (torch.nn.AvgPool2d(3, 2, 1), (2, 3, 9, 8)),
    "avg2d_exclude_pad": (torch.nn.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 3, 9, 8)),
    "avg2d_ceil_exclude": (torch.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 8, 8)),
    "avg2d_ceil_include": (torch.nn.AvgPool2d(2, 2, ceil_mode=True), (1, 2, 7, 7)),
    "avg3d": (torch.nn.AvgPool3d(2, 1), (1, 2, 3, 4, 5)),
    "adaptive_avg_divisible": (torch.nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 8, 9)),
    "adaptive_avg_global": (torch.nn.AdaptiveAvgPool2d(1), (2, 3, 7, 5)),
    "adaptive_avg_uneven": (torch.nn.AdaptiveAvgPool2d((3, 4)), (2, 3, 7, 5)),
    "adaptive_avg1d": (torch.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    "adaptive_avg3d": (torch.nn.AdaptiveAvgPool3d((2, 1, 3)), (1, 2, 4, 3, 6)),
    "adaptive_max_divisible": (torch.nn.AdaptiveMaxPool2d((2, 3)), (2, 3, 8, 9)),
    "adaptive_max_uneven": (torch.nn.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 5)),
    "adaptive_max1d": (torch.nn.AdaptiveMaxPool1d(4), (2, 3, 7)),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pooling(name: str) -> None:
    module, shape = POOLS[name]
    check_converts(module.eval(), [torch.randn(shape)], rtol=1e-5, atol=1e-5)


def test_dilated_max_pool_stays_in_torch() -> None:
    result = convert_and_run(torch.nn.MaxPool2d(2, dilation=2).eval(), [torch.randn(1, 1, 6, 6)])
    assert any("dilation" in r.reason for r in result.report.fallback)
    torch.testing.assert_close(result.outputs[0], result.expected[0])
