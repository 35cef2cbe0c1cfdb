"""A Python number combined with a bf16/fp16 tensor (``x * 0.1``) computes as eager does.

Eager's bf16 ``mul``/``div`` kernels use the number at float32 precision (``round(x * 0.1f)``);
a literal in the tensor's dtype would round 0.1 to bf16 first and give other values (one bf16
ulp apart, on both frontends, every backend: found while adding ``precision="bf16"``). The
other ops compute the same with the number in the tensor's dtype, and ``index_put`` needs it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

import ziggurat

NUMBERS = (0.1, 0.3, 1.7, 257.0, 1e-3, 3)


class WithNumber(nn.Module):
    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


def _in_place_mul(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.mul_(0.1)
    y.div_(0.3)
    return y


def _index_put(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[torch.tensor([0, 2])] = 0.1
    return y


FUNCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    **{f"mul_{n}": (lambda n: lambda x: x * n)(n) for n in NUMBERS},
    **{f"div_{n}": (lambda n: lambda x: x / n)(n) for n in NUMBERS},
    **{f"floordiv_{n}": (lambda n: lambda x: torch.floor_divide(x, n))(n) for n in NUMBERS},
    "true_divide": lambda x: torch.true_divide(x, 0.7),
    "rmul_add": lambda x: 0.1 * x + 0.3,
    "sub_pow": lambda x: (x - 0.1) ** 2,
    "masked_fill": lambda x: x.masked_fill(x > 0, 0.1),
    "in_place": _in_place_mul,
    "index_put": _index_put,
}


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int16) if t.dtype in (torch.bfloat16, torch.float16) else t


@pytest.mark.parametrize("frontend", ["export", "torchscript"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_number_with_reduced_float(name: str, dtype: torch.dtype, frontend: str) -> None:
    torch.manual_seed(0)
    model = WithNumber(FUNCTIONS[name])
    x = (torch.randn(257) * 4).to(dtype)
    compiled = ziggurat.compile(model, (x,), backend="reference", frontend=frontend)
    x2 = (torch.randn(257) * 4).to(dtype)
    expected = model(x2)
    got = compiled(x2)
    assert got.dtype == expected.dtype
    assert torch.equal(_bits(got), _bits(expected)), (got - expected).abs().max()
