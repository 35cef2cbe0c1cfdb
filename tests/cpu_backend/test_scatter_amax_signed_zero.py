"""scatter_reduce amax/amin where +0.0 and -0.0 meet in one element: eager replaces its
running max/min only by a strictly greater/smaller value, so a zero result carries the sign
of the first zero it visits (the destination's with ``include_self``, then the sources' by
position).  The cpu backend's max/min reduction kept whichever its vector order met last.

Compared bit for bit, the sign of every zero and NaN included, on every ISA, natively."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu

NaN = float("nan")
#: destinations: -0.0 / +0.0 met by zeros of the other sign, nonzero ones below and above
#: zero, a NaN, and elements no source reaches
BASE = [-0.0, 0.0, -0.0, 1.0, -1.0, 0.0, NaN, -0.0, 0.0]
INDEX = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
SOURCE = [0.0, -0.0, -0.0, 0.0, 0.0, 0.0, -0.0, 0.0, -0.0, 0.0, NaN, 0.0, -0.0]


class ScatterReduce(torch.nn.Module):
    def __init__(self, reduce: str, include_self: bool, dim: int = 0) -> None:
        super().__init__()
        self.reduce, self.include_self, self.dim = reduce, include_self, dim

    def forward(self, b: torch.Tensor, i: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return b.scatter_reduce(self.dim, i, s, self.reduce, include_self=self.include_self)


def _same_bits(z: torch.Tensor, e: torch.Tensor) -> bool:
    return torch.equal(z.view(torch.int32), e.view(torch.int32))


@pytest.mark.parametrize("include_self", [True, False], ids=["include_self", "sources_only"])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_zero_keeps_first_sign(reduce: str, include_self: bool, isa: str) -> None:
    model = ScatterReduce(reduce, include_self)
    inputs = (torch.tensor(BASE), torch.tensor(INDEX), torch.tensor(SOURCE))
    compiled = compile_cpu(model, inputs, isa=isa, threads=1)
    assert compiled.report.fallback_ops == {}, compiled.report.fallback_ops
    for flip in (False, True):  # the same elements with every zero's sign flipped
        b, i, s = (torch.where(t == 0, -t, t) if flip and t.is_floating_point() else t for t in inputs)
        expected, got = model(b, i, s), compiled(b, i, s)
        assert _same_bits(got, expected), f"{got.tolist()} vs eager {expected.tolist()}"


def test_scatter_reduce_zero_sign_along_a_dim(isa: str) -> None:
    """Random zeros of both signs along dim 1 of a 2-d tensor, every reduction of the four."""
    g = torch.Generator().manual_seed(0)
    pool = torch.tensor([0.0, -0.0, 1.0, -1.0, -0.0, 0.0])
    x = pool[torch.randint(0, 6, (3, 7), generator=g)]
    i = torch.randint(0, 7, (3, 11), generator=g)
    s = pool[torch.randint(0, 6, (3, 11), generator=g)]
    for reduce in ("amax", "amin"):
        for include_self in (True, False):
            model = ScatterReduce(reduce, include_self, dim=1)
            expected = model(x, i, s)
            got = compile_cpu(model, (x, i, s), isa=isa, threads=1)(x, i, s)
            assert _same_bits(got, expected), f"{reduce} {include_self}: {got.tolist()} vs eager {expected.tolist()}"
