"""Gathers whose lanes are a small step apart (``loop.vindex base step 2..4``: a pooling window
or a strided slice read along the vectorized dim) are one masked load of the span and a
shuffle (``codegen/memory_ops.py``): bit for bit eager's, with the padding's lanes never read."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import ziggurat
from tests.support.host import each_isa
from ziggurat.backends.cpu.isa import Isa, host_supports

ISAS = each_isa(("avx512", "avx2"))


class Strided(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (nn.functional.max_pool2d(x, 3, 2, 1), x[..., 1::3] * 2, x[..., ::4] + 1,
                nn.functional.avg_pool2d(x, 2, 2))


class StridedInt(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return x[..., ::2] + 1, x[..., 2::3] * 3, nn.functional.max_pool2d(x, 3, 2, 1)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_strided_reads_are_eagers(isa: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 5, 37, 71).to(dtype)
    x[0, 0, 0, :5] = float("nan")
    compiled = ziggurat.compile(Strided(), (x,), backend="cpu", isa=isa)
    for got, want in zip(compiled(x), Strided()(x), strict=True):
        torch.testing.assert_close(got, want, rtol=0.0, atol=0.0, equal_nan=True)
    if isa == "avx512":
        assert "llvm.masked.gather" not in compiled.ir["llvm"]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_strided_integer_reads_are_eagers(isa: str, dtype: torch.dtype) -> None:
    x = torch.randint(0, 100, (3, 4, 19, 45)).to(dtype)
    compiled = ziggurat.compile(StridedInt(), (x,), backend="cpu", isa=isa)
    for got, want in zip(compiled(x), StridedInt()(x), strict=True):
        assert torch.equal(got, want)


def test_the_span_is_one_masked_load() -> None:
    if not host_supports(Isa("avx512")):
        pytest.skip("host has no avx512")
    x = torch.randn(1, 64, 112, 112)
    compiled = ziggurat.compile(_Pool(), (x,), backend="cpu", isa="avx512")
    llvm = compiled.ir["llvm"]
    assert "llvm.masked.load.v32f32" in llvm or "llvm.masked.load.v16f32" in llvm
    assert "llvm.masked.gather" not in llvm
    torch.testing.assert_close(compiled(x), _Pool()(x), rtol=0.0, atol=0.0)


class _Pool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.max_pool2d(x, 3, 2, 1)
