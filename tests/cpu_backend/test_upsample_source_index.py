"""Linear upsampling computes each output's source coordinate ``scale * (dst + 0.5) - 0.5`` as
eager's kernels do, with one rounding (an FMA): ``2.5 * 0.2f - 0.5`` is 7.45e-9, not 0.  The
weight that tiny coordinate gives the neighbour decides between inf and ``inf * 0 = NaN`` for an
infinite element (fuzz seed 148, program 22: a [2, 1] image upsampled to [3, 5])."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.support.host import each_isa


class Upsample(torch.nn.Module):
    def __init__(self, size: tuple[int, ...], mode: str) -> None:
        super().__init__()
        self.size, self.mode = size, mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=self.size, mode=self.mode, align_corners=False)


CASES = [
    ((1, 3, 2, 1), (3, 5), "bilinear"),
    ((1, 2, 1, 3), (7, 10), "bilinear"),
    ((2, 2, 3, 2), (5, 9), "bilinear"),
    ((1, 3, 1), (5,), "linear"),
    ((1, 2, 3), (10,), "linear"),
    ((1, 2, 1, 2, 1), (3, 5, 5), "trilinear"),
]


@pytest.mark.parametrize("isa", each_isa())
@pytest.mark.parametrize(("shape", "size", "mode"), CASES, ids=[f"{m}-{'x'.join(map(str, s))}" for _, s, m in CASES])
def test_infinite_elements_give_eager_infinities_and_nans(isa: str, shape: tuple[int, ...], size: tuple[int, ...],
                                                         mode: str) -> None:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(len(size)))
    x.view(-1)[::3] = math.inf
    x.view(-1)[1::5] = -math.inf
    model = Upsample(size, mode)
    compiled = ziggurat.compile(model, (x,), isa=isa)
    want, got = model(x), compiled(x)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
