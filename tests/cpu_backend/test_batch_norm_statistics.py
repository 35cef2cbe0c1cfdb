"""Batch and instance norm give eager's bits, its overflows included.

Eager's CPU kernels sum a batch's statistics in float64 (``acc_type<float, false>``) and
contract ``x * alpha + beta`` and ``bias - mean * alpha`` into fused multiply-adds.  With a
float32 sum, values near 1e38 overflowed to an infinite mean and the output was NaN where
eager's is finite (fuzz seed 82, program 173); with separate multiply and add, a fifth of the
values of an affine norm were an ulp off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.support.opinfo import OpModule

SHAPES = [(2, 6, 5), (1, 6, 17, 3), (3, 6, 100), (2, 6, 33, 31)]


def _params() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    return {"w": torch.randn(6, generator=g), "b": torch.randn(6, generator=g),
            "mean": torch.randn(6, generator=g), "var": torch.rand(6, generator=g) + 0.5}


def _norms() -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    p = _params()
    return {
        "instance": lambda x: F.instance_norm(x),
        "instance_affine": lambda x: F.instance_norm(x, weight=p["w"], bias=p["b"]),
        "batch_train": lambda x: F.batch_norm(x, None, None, p["w"], p["b"], training=True),
        "batch_eval": lambda x: F.batch_norm(x, p["mean"], p["var"], p["w"], p["b"], training=False),
        "instance_running_stats": lambda x: F.instance_norm(x, p["mean"], p["var"], p["w"], p["b"],
                                                            use_input_stats=False),
    }


def _compile(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, isa: str) -> torch.nn.Module:
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        # passes="": the norm reaches the lowering as it is (graph-opt folds an eval batch norm)
        compiled = ziggurat.compile(OpModule(fn), (x,), backend="cpu", isa=isa, passes="")
    finally:
        logger.setLevel(level)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    return compiled


def _assert_bits(actual: torch.Tensor, expected: torch.Tensor) -> None:
    same = (actual == expected) | (actual.isnan() & expected.isnan())
    assert bool(same.all()), (f"{int((~same).sum())} of {same.numel()} differ; first at {(~same).nonzero()[0].tolist()}: "
                              f"eager {expected[~same][0].item()}, ours {actual[~same][0].item()}")


@pytest.mark.parametrize("name", list(_norms()))
def test_eagers_bits(name: str, isa: str) -> None:
    fn = _norms()[name]
    g = torch.Generator().manual_seed(3)
    for shape in SHAPES:
        x = torch.randn(shape, generator=g) * 3 + 1
        _assert_bits(_compile(fn, x, isa)(x), fn(x))


#: rows whose float32 sum overflows while eager's float64 mean does not, whose squares overflow
#: (eager: an infinite variance, a zero rstd) and whose scaled values overflow (eager's fused
#: multiply-add gives -inf, a rounded product then an add gives NaN)
HUGE_ROWS = [[3e38, 3e38, -1e38, 1.0], [1e30, -1e30, 5e29, 0.0], [3e38, 3e38, 3e38, 3e38],
             [3e38, -3e38, 3e38, -3e38], [1.0, 2.0, 3.0, 4.0]]


@pytest.mark.parametrize("name", ["instance", "instance_affine", "batch_train"])
def test_overflowing_statistics_as_eager(name: str, isa: str) -> None:
    fn = _norms()[name]
    x = torch.tensor(HUGE_ROWS + [[0.5, -0.25, 2.0, 8.0]]).reshape(1, 6, 4)
    expected = fn(x)
    assert not expected[0, 0].isnan().any()  # eager's float64 sum: a finite mean
    _assert_bits(_compile(fn, x, isa)(x), expected)


def test_wide_values_of_the_fuzz_program() -> None:
    """Fuzz seed 82, program 173: magnitudes from 2**-140 to 2**127, both signs."""
    g = torch.Generator().manual_seed(1262718379)
    shape = (9, 17, 17)
    exponent = torch.randint(-140, 128, shape, generator=g).to(torch.float64)
    mantissa = 1.0 + torch.rand(shape, generator=g, dtype=torch.float64)
    sign = torch.randint(0, 2, shape, generator=g).to(torch.float64) * 2 - 1
    x = (sign * mantissa * torch.exp2(exponent)).to(torch.float32)

    def fn(t: torch.Tensor) -> torch.Tensor:
        return F.instance_norm(t, eps=1e-5)

    _assert_bits(_compile(fn, x, "auto")(x), fn(x))
