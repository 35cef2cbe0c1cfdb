"""sort / topk / kthvalue of a fused producer rank keys computed once.

The sort ranks each key against every other one of its row (``rank[i] = #{j before i}``) and
then reads the element of rank ``p``.  With the producer fused into the rank kernel, the key
``x_i`` was computed by the vector loop (a mean or a softmax's sum as a vector reduction) and
the keys ``x_j`` by a scalar loop: one ulp apart, so a tie was broken both ways, two
elements got the same rank, no element got the other, and the sort returned a wrong element
with no error, on the vector ISAs only (fuzz seed 3, programs 5666: ``softmin`` then
``sort``, and 6549: ``instance_norm`` then ``sort``).  Grid values (multiples of 1/4) make
ties; with normal values a key rounded two ways is counted as sorting before itself.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule


def grid(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-16, 17, shape, generator=g) / 4.0


def normal(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Inexact row means: the vector and the scalar sums round differently."""
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


Fn = Callable[[torch.Tensor], torch.Tensor]
CASES: dict[str, tuple[Fn, tuple[int, ...], Callable[[tuple[int, ...], int], torch.Tensor]]] = {
    # fuzz seed 3 program 6549, minimized
    "instance_norm_sort_dim0": (lambda x: torch.sort(F.instance_norm(x, eps=1e-5), dim=0, descending=True)[0],
                                (2, 3, 3), grid),
    # fuzz seed 3 program 5666, minimized
    "softmin_sort_dim1": (lambda x: torch.sort(F.softmin(x, dim=-2), dim=1, descending=True)[0], (3, 8), grid),
    "centered_sort_dim0": (lambda x: torch.sort(x - x.mean(dim=-1, keepdim=True), dim=0)[0], (17, 4), normal),
    "centered_argsort_stable": (lambda x: torch.sort(x - x.mean(dim=-1, keepdim=True), dim=0,
                                                     stable=True)[1], (17, 4), normal),
    "centered_topk": (lambda x: torch.topk(x - x.mean(dim=-1, keepdim=True), 3, dim=0)[0], (17, 4), normal),
    "centered_kthvalue": (lambda x: torch.kthvalue(x - x.mean(dim=-1, keepdim=True), 5, dim=0)[0], (17, 4), normal),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_sort_of_fused_producer_matches_eager(isa: str, case: str) -> None:
    fn, shape, make = CASES[case]
    example = make(shape, 0)
    compiled = compile_cpu(OpModule(fn), (example,), isa=isa, threads=1)
    for seed in range(4):
        x = make(shape, seed)
        actual, expected = compiled(x), fn(x)
        if expected.dtype.is_floating_point:
            torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)
        else:
            assert torch.equal(actual, expected), (actual, expected)
