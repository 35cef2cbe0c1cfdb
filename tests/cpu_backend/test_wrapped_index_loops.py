"""Loops that take an index modulo a size (``roll``, wrapping reads of reduction stats).

LLVM 22's loop vectorizer miscompiled ``out[i] = x[(i + 7) % 128] - m[(i + 7) % 16]`` on a
kernel our own code did not vectorize (the scalar ISA): its run-time check covered the wide
mask's wrap only (fuzz seed 13, program 6700).  Codegen keeps that vectorizer off such loops.
"""

from __future__ import annotations

import pytest
import torch

import ziggurat


class LogSoftmaxRoll(torch.nn.Module):
    def __init__(self, dim: int, shift: int) -> None:
        super().__init__()
        self.dim, self.shift = dim, shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.roll(torch.special.log_softmax(x, self.dim), self.shift)

@pytest.mark.parametrize("shape,dim,shift", [((8, 1, 16), 0, -7), ((5, 3, 16), 0, 9), ((8, 32), 0, 3),
                                             ((4, 1, 16), 2, -13), ((7, 1, 8), 0, 1)])
def test_roll_of_a_dim0_reduction_matches_eager(isa: str, shape: tuple[int, ...], dim: int, shift: int) -> None:
    model = LogSoftmaxRoll(dim, shift)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    compiled = ziggurat.compile(model, (x,), backend="cpu", isa=isa)
    assert "fused_special_log_softmax_roll" in compiled.ir["loop"]
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


def test_wrapping_loop_is_marked_off_for_llvm_vectorizer() -> None:
    x = torch.randn(8, 1, 16)
    compiled = ziggurat.compile(LogSoftmaxRoll(0, -7), (x,), backend="cpu", isa="scalar")
    assert '!"llvm.loop.vectorize.enable", i1 0' in compiled.ir["llvm"]
