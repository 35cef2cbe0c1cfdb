"""The mean that ``var_mean``/``std_mean`` return on rows holding infinities (fuzz program
s20261201_g91).  Eager computes it with Welford's update: once the running mean is
infinite, the next element makes it NaN (``x - inf``), so it is NaN unless the only
infinity is the row's last element; the lowering returned ``sum / n`` (inf), as
``torch.mean`` does."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

INF, NAN = float("inf"), float("nan")
ROWS = [[1.0, 2.0, INF], [INF, 1.0, 2.0], [1.0, INF, 2.0], [INF, INF, 1.0], [1.0, 2.0, -INF],
        [1.0, NAN, 2.0], [1.0, 2.0, 3.0], [INF, -INF, INF]]


def _fn(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    pairs = (torch.std_mean(t, dim=-1), torch.var_mean(t, dim=1, keepdim=True), torch.var_mean(t.t(), dim=0),
             torch.std_mean(t.reshape(2, 4, 3), dim=(1, 2)), torch.var_mean(t[:, :1], dim=1))
    return tuple(v for pair in pairs for v in pair)


def test_var_mean_with_infinities(isa: str) -> None:
    x = torch.tensor(ROWS)
    compiled = compile_cpu(OpModule(_fn), (x,), isa=isa, frontend="torchscript")
    for got, expected in zip(compiled(x), _fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("n", [2, 17, 100])
def test_var_mean_infinity_position(n: int) -> None:
    x = torch.ones(n, n)
    x[torch.arange(n), torch.arange(n)] = INF  # row r has its infinity at position r
    compiled = compile_cpu(OpModule(lambda t: torch.var_mean(t, dim=-1)), (x,))
    for got, expected in zip(compiled(x), torch.var_mean(x, dim=-1), strict=True):
        torch.testing.assert_close(got, expected, equal_nan=True)
