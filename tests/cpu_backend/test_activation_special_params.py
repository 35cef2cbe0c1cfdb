"""Activations whose parameters are infinite or NaN, on inputs holding NaN, +-inf and signed
zeros, on every ISA, against eager: standalone and as the fused epilogue of linear, conv and
matmul.

* ELU/CELU: eager computes ``x < 0 ? expm1(x) * alpha : x``; the lowering tested ``x > 0``,
  so a zero took the exponential branch (``0 * inf`` = NaN, and a zero of the wrong sign).
* Fused epilogues: an infinite parameter was read as "absent", so ``leaky_relu`` with an
  infinite slope used the default 0.01 and ``hardtanh(-inf, 1)`` clamped at -1.
* A NaN clamp/hardtanh bound makes every element NaN in eager; ``max(x, NaN)`` kept x.
* prelu is ``x > 0 ? x : weight * x`` (an infinite weight keeps positive inputs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

INF, NAN = float("inf"), float("nan")
# 19 values: a vector tail on every ISA
X = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.5, -2.0, 30.0, -30.0, 1e-8, -1e-8, 0.5, -0.25, 3.0, -3.0, 1e-40,
                  -1e-40, 7.0, -0.75])


def _check(fn: Callable[..., Any], inputs: list[torch.Tensor], isa: str) -> None:
    compiled = compile_cpu(OpModule(fn), tuple(inputs), isa=isa, frontend="torchscript")
    got, expected = compiled(*inputs), fn(*inputs)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)
    zeros = (got == 0) & (expected == 0)
    assert torch.equal(got[zeros].signbit(), expected[zeros].signbit()), "a zero of the wrong sign"


UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    **{f"elu_{a}": (lambda t, a=a: F.elu(t, a)) for a in (INF, -INF, NAN, -1.0, 0.0, 1.0)},
    **{f"celu_{a}": (lambda t, a=a: F.celu(t, a)) for a in (INF, -INF, NAN, -1.0, 2.0)},
    "selu": F.selu,
    **{f"leaky_relu_{s}": (lambda t, s=s: F.leaky_relu(t, s)) for s in (INF, -INF, NAN, -0.5, 0.0)},
    "hardtanh_nan_max": lambda t: F.hardtanh(t, -1.0, NAN),
    "hardtanh_nan_min": lambda t: F.hardtanh(t, NAN, 1.0),
    "hardtanh_inf": lambda t: F.hardtanh(t, -INF, 2.0),
    "clamp_nan": lambda t: torch.clamp(t, NAN, 2.0),
    **{f"prelu_{w}": (lambda t, w=w: F.prelu(t, torch.tensor([w]))) for w in (INF, -INF, NAN, 0.0, -0.5)},
}


@pytest.mark.parametrize("case", sorted(UNARY))
def test_unary_special_parameters(isa: str, case: str) -> None:
    fn = UNARY[case]
    _check(lambda t: fn(t * 1.0), [X.reshape(1, -1)], isa)


EPILOGUES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "leaky_inf": lambda y: F.leaky_relu(y, INF),
    "leaky_minus_inf": lambda y: F.leaky_relu(y, -INF),
    "leaky_nan": lambda y: F.leaky_relu(y, NAN),
    "leaky_negative": lambda y: F.leaky_relu(y, -0.5),
    "hardtanh_no_min": lambda y: F.hardtanh(y, -INF, 1.0),
    "hardtanh_no_max": lambda y: F.hardtanh(y, -2.0, INF),
    "hardtanh_nan": lambda y: F.hardtanh(y, -1.0, NAN),
    "clamp_no_min": lambda y: torch.clamp(y, -INF, 2.0),
    "clamp_nan": lambda y: torch.clamp(y, NAN, 2.0),
}
W = torch.tensor([[1.0, 0.0], [0.0, -1.0], [1.0, 1.0], [3.0, 0.5], [-2.0, 0.25]])
A = torch.tensor([[0.0, 1.0], [2.0, -3.0], [NAN, 0.5], [INF, 1.0], [-5.0, 0.0], [0.0, -0.0], [1e-3, 2.0]])


@pytest.mark.parametrize("producer", ["linear", "conv2d", "matmul"])
@pytest.mark.parametrize("case", sorted(EPILOGUES))
def test_fused_epilogue_special_parameters(isa: str, producer: str, case: str) -> None:
    post = EPILOGUES[case]
    if producer == "linear":
        fn, x = (lambda t: post(F.linear(t, W))), A
    elif producer == "matmul":
        fn, x = (lambda t: post(t @ W.t())), A
    else:
        fn, x = (lambda t: post(F.conv2d(t, W.reshape(5, 2, 1, 1)))), A.t().reshape(1, 2, 7, 1).contiguous()
    _check(fn, [x], isa)
