"""The indices of max pooling (``max_pool*d(return_indices=True)``, ``adaptive_max_pool*d``)
where windows hold NaN, -inf, ties and padding, against eager, on every ISA of the host.

torch's pooling kernels update a window's maximum where ``val > max || isnan(val)``, starting
from -inf at the window's first element inside the input: the index is the *last* NaN of a
window, else its first maximum, and a window whose maximum is -inf (all -inf, or -inf and
padding) points at its first element inside the input.  The cpu backend gave the first NaN
(``torch.argmax``'s rule; fuzz seed 3, program 6609: adaptive_max_pool2d over a plane with two
NaN) and, for padded windows of -inf, a negative index into the padding.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu, host_isas

NAN, INF = math.nan, math.inf


def _special(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Small integers (ties) with NaN, +-inf and runs of -inf sprinkled in."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-2, 3, shape, generator=g).float()
    flat = x.view(-1)
    picks = torch.randperm(flat.numel(), generator=g)[: flat.numel() // 3]
    flat[picks] = torch.tensor([NAN, INF, -INF, -INF])[torch.randint(0, 4, picks.shape, generator=g)]
    # whole rows of -inf, so padded windows see nothing but -inf
    if x.dim() >= 3:
        x[..., 0, :] = -INF
    return x


class Pool(torch.nn.Module):
    def __init__(self, fn: object) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.fn(x)  # type: ignore[operator]


CASES = {
    "max_pool1d_pad_dilation": ((2, 3, 17), lambda x: F.max_pool1d(x, 3, 1, 1, 2, return_indices=True)),
    "max_pool1d_ceil": ((2, 3, 17), lambda x: F.max_pool1d(x, 4, 3, 2, ceil_mode=True, return_indices=True)),
    "max_pool2d_pad": ((2, 3, 9, 19), lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)),
    "max_pool2d_pad_dilation": ((1, 2, 11, 13), lambda x: F.max_pool2d(x, (3, 2), (1, 2), (1, 1), (2, 3),
                                                                       return_indices=True)),
    "max_pool3d_pad": ((1, 2, 5, 6, 7), lambda x: F.max_pool3d(x, 3, 2, 1, return_indices=True)),
    "adaptive_max_pool1d": ((2, 3, 17), lambda x: F.adaptive_max_pool1d(x, 5, return_indices=True)),
    "adaptive_max_pool2d_global": ((1, 5, 5, 19), lambda x: F.adaptive_max_pool2d(x, (1, 1), return_indices=True)),
    "adaptive_max_pool2d": ((2, 3, 9, 19), lambda x: F.adaptive_max_pool2d(x, (4, 6), return_indices=True)),
    "adaptive_max_pool3d": ((1, 2, 5, 6, 7), lambda x: F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True)),
}


@pytest.mark.parametrize("isa", host_isas())
@pytest.mark.parametrize("name", list(CASES))
def test_max_pool_index_is_last_nan_or_first_max(name: str, isa: str) -> None:
    shape, fn = CASES[name]
    model = Pool(fn).eval()
    x = _special(shape, 1)
    compiled = compile_cpu(model, (x,), threads=1, isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    for seed in (1, 2, 3):
        x = _special(shape, seed)
        want_v, want_i = model(x)
        got_v, got_i = compiled(x)
        torch.testing.assert_close(got_v, want_v, equal_nan=True, rtol=0, atol=0)
        assert torch.equal(got_i, want_i), (name, seed, (got_i != want_i).nonzero()[:5].tolist())


def test_adaptive_max_pool2d_two_nan_in_a_plane() -> None:
    """Fuzz seed 3 program 6609, minimized: the index of a global max pool over a plane with
    NaN at flat positions 28 and 70 is 70."""
    x = torch.arange(95, dtype=torch.float32).reshape(1, 1, 5, 19)
    x[0, 0, 1, 9] = NAN
    x[0, 0, 3, 13] = NAN
    model = Pool(lambda t: F.adaptive_max_pool2d(t, (1, 1), return_indices=True)).eval()
    compiled = compile_cpu(model, (x,), threads=1, isa="scalar")
    assert int(model(x)[1]) == 70
    assert int(compiled(x)[1]) == 70
