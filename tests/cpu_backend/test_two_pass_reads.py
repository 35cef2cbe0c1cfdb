"""A two-pass reduction (softmax, log_softmax, logsumexp: a max, then a sum of exponentials, then
the output) reads its input once per pass; an input that is itself a reduction is computed once.

A small ``conv_transpose1d`` lowers to a direct reduction.  Recomputed in each pass's loops, it
summed in another order in each, so a softmax over dim 0 took its denominator from other
logits than its numerator: values of 1.0000072 on AVX2 (fuzz seed 88, program 130).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1993939850)
    x = (torch.randint(-16, 17, (16, 8, 5), generator=g) / 4.0).float()  # the fuzzer's grid values
    w = torch.randn(8, 4, 4, generator=g) * 2
    b = torch.randn(4, generator=g)
    return x, w, b


FUNCTIONS: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "softmax_dim0": lambda x, w, b: F.softmax(F.conv_transpose1d(x, w, b), dim=0),
    "log_softmax_dim1": lambda x, w, b: F.log_softmax(F.conv_transpose1d(x, w, b), dim=1),
    "logsumexp_dim0": lambda x, w, b: torch.logsumexp(F.conv_transpose1d(x, w, b), dim=0),
    "softmax_of_a_sum": lambda x, w, b: F.softmax(x.sum(dim=2), dim=0),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_each_pass_reads_the_same_values(name: str, isa: str) -> None:
    x, w, b = _inputs()
    fn = FUNCTIONS[name]
    compiled = compile_cpu(OpModule(lambda t: fn(t, w, b)), (x,), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, want = compiled(x), fn(x, w, b)
    # each pass saw the same logits: probabilities sum to 1 (log-probabilities' logsumexp is 0)
    # to float32 rounding, none above 1
    if name.startswith("softmax"):
        assert float(got.max()) <= 1.0, float(got.max())
        torch.testing.assert_close(got.sum(dim=0), torch.ones_like(got.sum(dim=0)), rtol=0, atol=1e-6)
    if name.startswith("log_softmax"):
        lse = torch.logsumexp(got.double(), dim=1)
        torch.testing.assert_close(lse, torch.zeros_like(lse), rtol=0, atol=1e-6)
    # and eager's values, but for the logits' own rounding (|x| up to ~40: the convolutions sum
    # in other orders)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=3e-5)
