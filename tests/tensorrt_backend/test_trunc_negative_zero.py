"""trunc on the TensorRT path keeps -0.0 (fuzz seed 5, program 2309): TensorRT has no trunc,
and ``sign(x) * floor(|x|)`` made +0.0 of -0.0 (sign(-0.0) is +0.0), so ``atan2(-0.0,
trunc(-0.0))`` came out -0.0 where eager gives -pi; ``frac(-0.0)``, ``div(-0.0, 3,
rounding_mode="trunc")`` and the truncation of values in (-1, 0) agree too.  It is now
``ceil(x)`` where ``x < 0``, else ``floor(x)``.  Compared bit for bit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from conversion_harness import convert_and_run

NAN, INF = float("nan"), float("inf")
VALUES = [-0.0, 0.0, -0.5, 0.5, -1.5, 2.5, NAN, -INF, INF, -3.0, 1e30, -1e30, -0.999, 7.0]

CASES: dict[str, Callable[[torch.Tensor], Any]] = {
    "trunc": torch.trunc,
    "frac": torch.frac,
    "div_trunc": lambda x: torch.div(x, 3.0, rounding_mode="trunc"),
    "atan2_of_trunc": lambda x: torch.atan2(x, torch.trunc(x)),
}


def _bits(t: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isnan(t), torch.full_like(t, NAN), t).view(torch.int32)


@pytest.mark.parametrize("case", sorted(CASES))
def test_trunc_keeps_negative_zero(case: str) -> None:
    converted = convert_and_run(CASES[case], [torch.tensor(VALUES)])
    assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
    for got, expected in zip(converted.outputs, converted.expected, strict=True):
        assert torch.equal(_bits(got), _bits(expected)), f"{got.tolist()} vs eager {expected.tolist()}"
