"""Where eager's attention applies its scale.

Eager's math path (the shapes its CPU flash kernel does not take: another head dim for ``v``, 3-D
operands) multiplies q and k by the root of the scale *before* their product; the flash kernel
multiplies the product.  With large queries one order overflows to inf (and gives NaN after the
softmax) where the other is finite: fuzz seed 82, program 281, whose decomposition and lowerings
all scaled the product and gave NaN where eager gave a row of ``v``.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from ziggurat.passes.decompose_torch_ops import eager_flash_attention, math_attention_factors


class Attention(torch.nn.Module):
    def __init__(self, scale: float | None) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, scale=self.scale)


#: (backend, passes): the decomposition on both backends, and the CPU backend's own lowering of
#: the whole op and the TensorRT converter of it (no graph-opt: the op reaches them undecomposed)
ROUTES = [("cpu", None), ("cpu", ""), ("tensorrt-reference", None), ("tensorrt-reference", ""), ("reference", None)]


def _compile(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], backend: str,
             passes: str | None) -> torch.nn.Module:
    options: dict[str, Any] = {} if passes is None else {"passes": passes}
    if backend == "tensorrt-reference":
        options["min_block_size"] = 1
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        compiled = ziggurat.compile(model, inputs, backend=backend, **options)
    finally:
        logger.setLevel(level)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops  # none runs in torch
    return compiled


def _huge_queries(v_dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    q = torch.randn(1, 2, 3, 7)
    q[0, 0, 0, 2] = 3.2e38  # q @ k^T overflows to inf; (q * f) @ (k * f)^T does not
    q[0, 1, 1, 4] = -1.5e38
    k = torch.randn(1, 2, 5, 7)
    v = torch.randn(1, 2, 5, v_dim)
    return q, k, v


def test_math_factors_are_eagers() -> None:
    assert math_attention_factors(0.25) == (0.5, 0.5)
    assert math_attention_factors(-0.25) == (-0.5, 0.5)  # eager negates the query's factor
    assert not eager_flash_attention((1, 2, 3, 7), (1, 2, 5, 7), (1, 2, 5, 4))
    assert eager_flash_attention((1, 2, 3, 7), (1, 2, 5, 7), (1, 2, 5, 7))


@pytest.mark.parametrize("backend,passes", ROUTES, ids=[f"{b}-{'own' if p == '' else 'graph-opt'}" for b, p in ROUTES])
@pytest.mark.parametrize("scale", [None, 0.3, -0.3])
def test_math_path_scales_before_the_product(backend: str, passes: str | None, scale: float | None) -> None:
    q, k, v = _huge_queries(4)  # v's head dim differs: eager's math path
    model = Attention(scale)
    with torch.no_grad():
        expected = model(q, k, v)
    assert torch.isfinite(expected).all()  # eager's own result: finite (one-hot rows)
    actual = _compile(model, (q, k, v), backend, passes)(q, k, v)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("backend,passes", ROUTES, ids=[f"{b}-{'own' if p == '' else 'graph-opt'}" for b, p in ROUTES])
def test_flash_path_scales_the_product(backend: str, passes: str | None) -> None:
    q, k, v = _huge_queries(7)  # equal head dims: eager's flash kernel, whose product overflows
    model = Attention(None)
    with torch.no_grad():
        expected = model(q, k, v)
    assert torch.isnan(expected[0, 0, 0]).all() and torch.isfinite(expected[0, 0, 1:]).all()
    actual = _compile(model, (q, k, v), backend, passes)(q, k, v)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_math_path_rounds_as_eager() -> None:
    """On ordinary values the order changes the scores' rounding: the decomposition, run by the
    reference interpreter (torch ops), gives eager's math path bit for bit."""
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 3, 9, 8), torch.randn(2, 3, 11, 8), torch.randn(2, 3, 11, 5)
    model = Attention(1 / math.sqrt(3.0))
    with torch.no_grad():
        expected = model(q, k, v)
    actual = _compile(model, (q, k, v), "reference", "graph-opt")(q, k, v)
    assert torch.equal(actual, expected)
