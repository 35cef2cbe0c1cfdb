"""Softmax corners that read as NaN instead of eager's numbers (issue 14 items 8 and 9).

* ``scaled_dot_product_attention`` with a mask that hides a whole row (bool False or float
  -inf): torch's attention takes ``_safe_softmax`` and gives 0 there; the decomposition gave
  NaN on ``cpu`` and ``tensorrt-reference``.
* ``aten::_safe_softmax`` itself was lowered as plain softmax on ``cpu`` (its check compared
  the op name with a leading underscore that ``LoweringArgs.name`` strips).
* ``aten::_log_softmax_backward_data`` was lowered as the *softmax* backward for the same
  reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

BACKENDS = ("cpu", "tensorrt-reference")


def _qkv(length: int = 5, source: int = 7) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(9)
    return (torch.randn(2, 3, length, 8, generator=g), torch.randn(2, 3, source, 8, generator=g),
            torch.randn(2, 3, source, 8, generator=g))


def _masks() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(4)
    bool_mask = torch.rand(5, 7, generator=g) > 0.4
    bool_mask[1] = False
    float_mask = torch.randn(5, 7, generator=g)
    float_mask[2] = float("-inf")
    float_mask[3, :6] = float("-inf")  # one key left: not a masked row
    broadcast = torch.rand(2, 1, 5, 7, generator=g) > 0.3
    broadcast[0, 0, 4] = False
    broadcast[1, 0, 0] = False
    return {"bool": bool_mask, "float": float_mask, "bool_broadcast": broadcast}


def _check(fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...], backend: str, frontend: str) -> None:
    compiled = ziggurat.compile(OpModule(fn), inputs, backend=backend, frontend=frontend)
    got, expected = compiled(*inputs), fn(*inputs)
    assert not expected.isnan().any()
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mask", sorted(_masks()))
def test_sdpa_fully_masked_rows(mask: str, backend: str, frontend: str) -> None:
    q, k, v = _qkv()
    m = _masks()[mask]

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    _check(fn, (q, k, v, m), backend, frontend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("source", [5, 7])
def test_sdpa_causal(backend: str, source: int) -> None:
    q, k, v = _qkv(5, source)

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)

    _check(fn, (q, k, v), backend, "torchscript")


def test_safe_softmax_op(isa: str) -> None:
    x = torch.randn(4, 6, 19)
    x[0, 2] = float("-inf")  # a masked row: 0
    x[1, 3, :18] = float("-inf")  # one element left: 1 there
    x[2, 1, 5] = float("nan")  # NaN stays NaN
    x[3, :, 7] = float("-inf")  # the same column of every row (dim 1): that column is 0

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.ops.aten._safe_softmax(t, -1), torch.ops.aten._safe_softmax(t, 1)

    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, frontend="torchscript")
    assert compiled.report.fallback_ops == {}
    for got, expected in zip(compiled(x), fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("log", [True, False], ids=["log_softmax", "softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_backward_data(isa: str, log: bool, dim: int) -> None:
    g = torch.Generator().manual_seed(2)
    grad = torch.randn(5, 7, 3, generator=g)
    x = torch.randn(5, 7, 3, generator=g)
    out = torch.log_softmax(x, dim) if log else torch.softmax(x, dim)
    op = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data

    def fn(gr: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        return op(gr, o, dim, torch.float32)

    compiled = compile_cpu(OpModule(fn), (grad, out), isa=isa, frontend="torchscript")
    assert compiled.report.fallback_ops == {}
    torch.testing.assert_close(compiled(grad, out), fn(grad, out), rtol=1e-5, atol=1e-5)
