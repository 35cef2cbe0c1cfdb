"""Reductions whose reduced dims all have size 1, of a value that does not move with the
vector loop (a 0-d input broadcast, a constant).

Such a reduction is its body; inside a vector loop over its output, the body was emitted as a
scalar and stored with ``loop.vstore``, so the compile stopped with an internal verifier error
(fuzz seed 3 program 2959: ``F.cosine_similarity(c, x, dim=-3)`` with a 0-d ``x`` and ``c`` of
shape ``[5, 1, 19, 1]``)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

CASES = {
    "sum": lambda x: (x * x).expand(5, 1, 19, 1).sum(1),
    "amax": lambda x: x.expand(3, 1, 40).amax(1),
    "mean_keepdim": lambda x: x.expand(2, 1, 1, 33).mean((1, 2), keepdim=True),
    "argmax": lambda x: x.expand(4, 1, 37).argmax(1),
    "argmin": lambda x: x.expand(37, 1).argmin(1),
    "prod": lambda x: (x + 1).expand(1, 50).prod(0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reduction_of_broadcast_scalar(isa: str, case: str) -> None:
    fn = CASES[case]
    x = torch.tensor(0.75)
    compiled = compile_cpu(OpModule(lambda t: fn(t)), (x,), isa=isa)
    for value in (x, torch.tensor(-2.5)):
        torch.testing.assert_close(compiled(value), fn(value))


def test_cosine_similarity_against_0d(isa: str) -> None:
    c = torch.rand(5, 1, 19, 1, generator=torch.Generator().manual_seed(0))

    def fn(x: torch.Tensor) -> torch.Tensor:
        return F.cosine_similarity(c, x, dim=-3, eps=1e-6)

    x = torch.tensor(0.5)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
    for value in (x, torch.tensor(-3.0)):
        torch.testing.assert_close(compiled(value), fn(value))
