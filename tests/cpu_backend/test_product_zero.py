"""A floating product of finite factors one of which is zero is that zero (signed by the parity of
the factors' signs), in whatever order the kernel's lanes multiply: fuzz seed 146, program 139,
where one lane's partial product passed float32's range before the zero met it (NaN; eager 0)."""

from __future__ import annotations

import math

import pytest
import torch

import ziggurat
from tests.support.host import each_isa


class Prod(torch.nn.Module):
    def __init__(self, dim: int | None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x) if self.dim is None else torch.prod(x, self.dim)


def _factors(shape: tuple[int, ...], zero_at: tuple[int, ...] | None, negatives: int) -> torch.Tensor:
    """7s (a few hundred of them pass float32's range) with ``negatives`` of them negated and
    one zero."""
    x = torch.full(shape, 7.0)
    x.view(-1)[1:2 * negatives:2] = -7.0
    if zero_at is not None:
        x[zero_at] = 0.0
    return x


@pytest.mark.parametrize("isa", each_isa())
@pytest.mark.parametrize("shape", [(3645,), (405, 3, 3), (9, 15, 9, 3)])
@pytest.mark.parametrize("negatives", [0, 3])
def test_a_zero_among_factors_past_float32_is_the_product(isa: str, shape: tuple[int, ...], negatives: int) -> None:
    x = _factors(shape, tuple(s // 2 for s in shape), negatives)
    compiled = ziggurat.compile(Prod(None), (x,), isa=isa)
    got = compiled(x)
    assert got.item() == 0.0 and bool(torch.signbit(got)) == (negatives % 2 == 1), got
    # (eager's own order overflows here as well, NaN even in float64: the exact product is 0)


@pytest.mark.parametrize("isa", each_isa(("avx512", "scalar")))
def test_rows_with_and_without_a_zero(isa: str) -> None:
    x = _factors((4, 600), None, 0)
    x[1, 599] = 0.0
    x[2, 0] = -0.0
    x[3] = torch.linspace(0.9, 1.1, 600)  # finite, no zero: the plain product
    compiled = ziggurat.compile(Prod(1), (x,), isa=isa)
    got = compiled(x)
    assert math.isinf(got[0].item()) and got[0].item() > 0
    assert got[1].item() == 0.0 and not bool(torch.signbit(got[1]))
    assert got[2].item() == 0.0 and bool(torch.signbit(got[2]))
    torch.testing.assert_close(got[3], torch.prod(x[3]), rtol=1e-5, atol=0.0)


def test_an_infinite_or_nan_factor_beside_a_zero_is_nan() -> None:
    x = _factors((300,), (10,), 0)
    compiled = ziggurat.compile(Prod(None), (x,))
    for special in (math.inf, -math.inf, math.nan):
        y = x.clone()
        y[200] = special
        assert math.isnan(compiled(y).item()) and math.isnan(torch.prod(y).item())
