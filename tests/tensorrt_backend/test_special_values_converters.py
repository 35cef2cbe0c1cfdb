"""Converters on NaN and infinities, against eager (fuzz programs s20261201_g93, _g132).

* Adaptive average pooling over non-divisible sizes was a product with a matrix of window
  weights: the 0 weight of an element outside a window times a NaN (or inf) made that
  window NaN; it is now an average reduce per window.
* ``argmin`` / ``min.dim`` were a kMIN top-1, whose order puts NaN above every number: eager
  returns the NaN (and its index), the conversion returned the smallest number."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import convert_and_run

NAN, INF = float("nan"), float("inf")


def _check(fn: Callable[..., Any], inputs: list[torch.Tensor]) -> None:
    converted = convert_and_run(fn, inputs)
    assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
    for got, expected in zip(converted.outputs, converted.expected, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)


POOLS = {
    "avg1d_3_to_2": (lambda x: F.adaptive_avg_pool1d(x, 2), [1, 2, 3]),
    "avg1d_7_to_3": (lambda x: F.adaptive_avg_pool1d(x, 3), [2, 1, 7]),
    "avg2d_5x7_to_3x2": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)), [1, 2, 5, 7]),
    "max2d_5x7_to_3x2": (lambda x: F.adaptive_max_pool2d(x, (3, 2)), [1, 2, 5, 7]),
}


@pytest.mark.parametrize("case", sorted(POOLS))
def test_adaptive_pool_special_values(case: str) -> None:
    fn, shape = POOLS[case]
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    flat = x.view(-1)
    flat[0], flat[-1] = NAN, INF
    if flat.numel() > 8:
        flat[5] = -INF
    _check(fn, [x])


ARG = {
    "argmin": lambda x: torch.argmin(x, dim=-1),
    "argmax": lambda x: torch.argmax(x, dim=-1),
    "argmin_flat": lambda x: torch.argmin(x),
    "min_dim": lambda x: torch.min(x, dim=1),
    "max_dim": lambda x: torch.max(x, dim=1),
}


@pytest.mark.parametrize("case", sorted(ARG))
def test_arg_extrema_special_values(case: str) -> None:
    x = torch.tensor([[3.0, NAN, 1.0, -INF, NAN],   # the first NaN wins, for min as for max
                      [2.0, -1.0, -1.0, 5.0, 5.0],  # ties: the first index
                      [INF, -INF, 0.0, -0.0, 4.0],
                      [NAN, NAN, NAN, NAN, NAN]])
    _check(ARG[case], [x])


def test_argmin_integers() -> None:
    x = torch.tensor([[3, -2**31, 5, -2**31], [7, 7, 1, 1]], dtype=torch.int32)
    _check(lambda t: (torch.argmin(t, dim=-1), torch.min(t, dim=1)), [x])


@pytest.mark.parametrize("value", [0.0, -2.0])
def test_threshold_keeps_nan(value: float) -> None:
    """Fuzz program s99_g149: torch's threshold is x <= t ? value : x, so NaN stays NaN;
    x > t ? x : value (and kTHRESHOLDED_RELU) replaced it."""
    x = torch.tensor([NAN, 0.25, 0.1, 3.0, -INF, INF, -0.0])
    _check(lambda t: F.threshold(t * 1.0, 0.25, value) * 1.0, [x])


LOG1P_EXPM1_VALUES = torch.tensor([3.08e-4, -3.08e-4, 1e-7, -1e-7, 0.0, -0.0, 0.49, -0.49, 0.5, -0.5, -1.0, -2.0,
                                   1e30, 3e38, INF, -INF, NAN, 2.0, -0.999, 1e-30, 5e-38, -80.0, 88.0, 89.0])


@pytest.mark.parametrize("fn", [torch.log1p, torch.expm1], ids=["log1p", "expm1"])
def test_log1p_expm1_keep_relative_precision(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """log1p was log(1 + x) and expm1 exp(x) - 1: no relative precision for small |x|
    (log1p(3.08e-4) 1.4e-4 relatively off, amplified by a division: fuzz program s3_g1405).
    Kahan's forms below |x| = 0.5 keep it; special values as eager."""
    converted = convert_and_run(fn, [LOG1P_EXPM1_VALUES])
    assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
    got, want = converted.outputs[0], converted.expected[0]
    torch.testing.assert_close(got, want, rtol=4e-7, atol=0.0, equal_nan=True)
