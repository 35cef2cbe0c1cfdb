"""Layer and group norm of values near float32's largest: eager's Welford keeps each row's mean
finite while its squares overflow, so ``rstd`` is 0 and the output is the bias.  The native
statistics summed the row in float32, whose infinite mean made ``(x - mean) * 0`` NaN (fuzz
seed 96, program 151).  The mean is now a float64 sum rounded once."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ziggurat


def _huge_rows(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    big = x.flatten(1)
    big[0] = (torch.rand(big.shape[1], generator=g) + 1.0) * 1.5e38  # same sign: the sum overflows
    return x


class _LayerNorm(torch.nn.Module):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.w, self.b = torch.nn.Parameter(torch.randn(n)), torch.nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.w, self.b)


class _GroupNorm(torch.nn.Module):
    def __init__(self, c: int, groups: int) -> None:
        super().__init__()
        self.groups = groups
        self.w, self.b = torch.nn.Parameter(torch.randn(c)), torch.nn.Parameter(torch.randn(c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.group_norm(x, self.groups, self.w, self.b)


@pytest.mark.parametrize("case", ["layer_norm", "group_norm"])
def test_overflowing_rows_give_eagers_bias(case: str, isa: str) -> None:
    if case == "layer_norm":
        model: torch.nn.Module = _LayerNorm(57).eval()
        x = _huge_rows((3, 57), 1)
    else:
        model = _GroupNorm(5, 5).eval()
        x = _huge_rows((3, 5, 3, 19), 2)
    with torch.no_grad():
        want = model(x)
        got = ziggurat.compile(model, (x,), backend="cpu", isa=isa)(x)
    assert torch.isfinite(want).any()
    assert torch.equal(torch.isnan(got), torch.isnan(want)), "NaN where eager is finite (or the other way)"
    finite = torch.isfinite(want)
    assert torch.allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)
