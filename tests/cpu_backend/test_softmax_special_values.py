"""softmax / log_softmax / logsumexp on rows holding NaN, +-inf, all -inf and only negative
values, at lengths that leave vector tails, over the last and a middle dim, on every ISA.

The row max of these ops is a ``shift_max`` reduction that skips NaN (one vmaxps per vector):
the NaN must still reach the output through the sum of exponentials, exactly where eager
puts it, and the masked tail lanes must never win the max."""

from __future__ import annotations

import math

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

OPS = {
    "softmax": lambda x, d: torch.softmax(x, d),
    "log_softmax": lambda x, d: torch.log_softmax(x, d),
    "logsumexp": lambda x, d: torch.logsumexp(x, d),
}


def _rows(n: int) -> torch.Tensor:
    """Eight rows of length n: plain, only negative, a NaN, +inf, -inf, all -inf, a NaN
    last (in the tail), and a large spread."""
    g = torch.Generator().manual_seed(n)
    x = torch.randn(8, n, generator=g)
    x[1] = -x[1].abs() - 100.0
    x[2, n // 2] = math.nan
    x[3, n // 3] = math.inf
    x[4, 0] = -math.inf
    x[5] = -math.inf
    x[6, n - 1] = math.nan
    x[7] *= 60.0
    return x


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("n", [1, 7, 17, 100, 129])
def test_last_dim_special_values(isa: str, op: str, n: int) -> None:
    fn = OPS[op]
    x = _rows(n)
    compiled = compile_cpu(OpModule(lambda t: fn(t, -1)), (x,), isa=isa)
    torch.testing.assert_close(compiled(x), fn(x, -1), rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("op", sorted(OPS))
def test_middle_dim_special_values(isa: str, op: str) -> None:
    """The reduction's output moves with the vector lanes (lanes mode)."""
    fn = OPS[op]
    x = _rows(21).reshape(2, 4, 21).transpose(1, 2).contiguous()  # the rows now run along dim 1
    compiled = compile_cpu(OpModule(lambda t: fn(t, 1)), (x,), isa=isa)
    torch.testing.assert_close(compiled(x), fn(x, 1), rtol=1e-5, atol=1e-6, equal_nan=True)
