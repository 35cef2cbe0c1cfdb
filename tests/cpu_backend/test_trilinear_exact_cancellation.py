"""Trilinear upsampling evaluates like torch's contiguous kernel (one dim at a time, the last
innermost, ``t0 * w0 + t1 * w1``), so a value that cancels exactly in eager is exactly zero
compiled too.

Fuzz seed 3, program 7214: ``count_nonzero(interpolate(x, size=(5, 1, 7), mode="trilinear"))``
counted 5 where eager counts 4.  The H dim (2 -> 1) averages -1.5 and 1.5, the W dim (1 -> 7)
reads its one element with weights 1 - l and l; weighting each of the 8 corners by the product
of its weights and summing them (torch's channels-last kernel) left +-3e-8 instead of 0.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu, host_isas


class CountTrilinear(torch.nn.Module):
    def __init__(self, size: tuple[int, int, int], align: bool) -> None:
        super().__init__()
        self.size, self.align = size, align

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        up = F.interpolate(x, size=self.size, mode="trilinear", align_corners=self.align)
        return up, torch.count_nonzero(up, dim=[-5, -3])


def _opposites(channels: int) -> torch.Tensor:
    """[1, C, 2, 2, 1]: per channel and depth, a value and its negation along H (grid values)."""
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-16, 17, (1, channels, 2, 1, 1), generator=g).float() / 4
    return torch.cat([a, -a], dim=3)


@pytest.mark.parametrize("isa", host_isas())
def test_trilinear_cancellation_is_exact(isa: str) -> None:
    x = _opposites(7)
    model = CountTrilinear((5, 1, 7), align=False).eval()
    compiled = compile_cpu(model, (x,), threads=1, isa=isa)
    want_up, want_count = model(x)
    got_up, got_count = compiled(x)
    assert bool((want_up == 0).all())  # the exact answer, and eager's
    assert torch.equal(got_up == 0, want_up == 0), got_up[got_up != 0][:5]
    assert torch.equal(got_count, want_count)


@pytest.mark.parametrize("isa", host_isas())
def test_trilinear_matches_eager_bit_for_bit_on_its_generic_kernel(isa: str) -> None:
    """With align_corners the source index is ``scale * o`` (without align_corners torch's
    ``scale * (o + 0.5) - 0.5`` may be a fused multiply-add, depending on its build), so the
    evaluation order is all that can differ from eager's generic kernel: it must be the same."""
    torch.manual_seed(0)
    x = torch.randn(1, 3, 4, 5, 6)
    model = CountTrilinear((7, 3, 11), align=True).eval()
    compiled = compile_cpu(model, (x,), threads=1, isa=isa)
    assert torch.equal(compiled(x)[0], model(x)[0])
