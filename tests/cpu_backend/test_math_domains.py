"""Element functions at the edges of their domains, compiled on every ISA, against eager:

* ``sin``/``cos``/``tan`` of finite ``|x| >= 2^49`` were NaN (the Cody-Waite reduction stops
  being exact there); they take a Payne-Hanek reduction now;
* ``acosh`` below 1 gave numbers for ``x <= -1`` (-inf at -4128, 0 at -5.6e14, +inf at -1e30),
  where it is NaN.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.cpu_backend.conftest import compile_cpu, host_isas

HUGE = [2.0 ** 49, -(2.0 ** 49), 5.6e14, -1e15, 1e20, -1e30, 3.0e38, -3.4028234663852886e38, 123.0, -0.0]
BELOW_ONE = [-1e30, -5.6e14, -4128.0, -1.5, -1.0, 0.0, 0.5, 0.999, 1.0, 1.5, 1e20, float("nan")]


class Elementwise(nn.Module):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(torch, self.name)(x)


def _column(values: list[float]) -> torch.Tensor:
    # 16 lanes and a tail: each value goes through the vector body and the scalar tail
    return torch.tensor(values, dtype=torch.float32).repeat_interleave(3).reshape(-1, 1).repeat(1, 19)


@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_of_huge_arguments(name: str, isa: str) -> None:
    if isa not in host_isas():
        pytest.skip(f"host cannot run {isa}")
    x = _column(HUGE)
    compiled = compile_cpu(Elementwise(name), (x,), isa=isa)
    got, expected = compiled(x), getattr(torch, name)(x)
    assert not got.isnan().any()
    truth = getattr(torch, name)(x.double())
    assert ((got.double() - truth).abs() <= 3e-7 * truth.abs().clamp_min(1.0)).all()
    assert torch.allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
def test_acosh_below_one_is_nan(isa: str) -> None:
    if isa not in host_isas():
        pytest.skip(f"host cannot run {isa}")
    x = _column(BELOW_ONE)
    compiled = compile_cpu(Elementwise("acosh"), (x,), isa=isa)
    got, expected = compiled(x), torch.acosh(x)
    assert torch.equal(got.isnan(), expected.isnan())
    assert torch.allclose(got, expected, rtol=1e-6, atol=1e-6, equal_nan=True)
