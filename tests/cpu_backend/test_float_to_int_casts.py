"""float32 -> int32/int64/bool casts, alone and after a replicate pad (issue 14 item 10), on
every ISA, bit-exact against eager.

Truncation toward zero (-0.5 -> 0, -1.5 -> -1), values beyond 2**31 for int64, and the
values torch leaves undefined (NaN, infinities, beyond the integer's range): the native cast
selects the integer minimum there, which is what x86's ``cvtt*`` instructions, and so eager
on an x86 host, give; before, LLVM's ``fptosi`` was poison for them."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

SPECIAL = [-0.5, -1.5, 1.7, -2.9, -0.99, 0.99, 2.5, -2.5, 0.0, -0.0, 1e-30, -1e-30, 1.0, -1.0, 123456.7,
           3e9, -3e9, 5e15, -5e15, 2147483520.0, -2147483648.0, 9.2e18, -9.2e18,
           float("nan"), float("inf"), float("-inf"), 1e19, -1e19, 3e38]


def _values(n: int = 101) -> torch.Tensor:
    g = torch.Generator().manual_seed(10)
    return torch.cat([torch.tensor(SPECIAL), torch.randn(n, generator=g) * 1e3, torch.rand(n, generator=g) - 0.5])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool], ids=str)
def test_cast(isa: str, dtype: torch.dtype) -> None:
    x = _values()

    def fn(t: torch.Tensor) -> torch.Tensor:
        return t.to(dtype)

    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, frontend="torchscript")
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
def test_cast_after_replicate_pad(isa: str, dtype: torch.dtype) -> None:
    x = (torch.rand(2, 3, 9, generator=torch.Generator().manual_seed(3)) - 0.5) * 4

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (F.pad(t, (1, 1), mode="replicate").to(dtype),
                F.pad(t.unsqueeze(0), (2, 1, 1, 3), mode="replicate").to(dtype))

    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, frontend="torchscript")
    for got, expected in zip(compiled(x), fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
