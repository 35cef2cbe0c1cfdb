"""The reductions eager's CPU kernels accumulate in float64 give eager's bits, overflows included.

* ``var``/``std`` (and ``var_mean``/``std_mean``): ``WelfordOps<scalar_t, double>``, the
  variance or its root rounded once.  In float32 the squared deviations of values past 1.8e19
  overflowed where eager's are finite (fuzz seed 87, program 198: ``std`` of values near 1e36
  gave inf), and 8-40 % of ordinary results were an ulp off.
* ``trace``: ``acc_type<scalar_t, false>``; in float32 ``3e38 + 3e38 - 3e38`` overflowed.

(``cumsum``/``cumprod`` accumulate in float64 too; they already gave eager's bits.  Batch and
instance norm: ``test_batch_norm_statistics.py``.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

Fn = Callable[[torch.Tensor], torch.Tensor | tuple[torch.Tensor, torch.Tensor]]

FUNCTIONS: dict[str, Fn] = {
    "var_dim": lambda x: torch.var(x, dim=1),
    "std_correction_0": lambda x: torch.std(x, dim=0, correction=0),
    "var_all": lambda x: torch.var(x),
    "std_mean_correction_2": lambda x: torch.std_mean(x, dim=-1, correction=2),
    "var_mean_keepdim": lambda x: torch.var_mean(x, dim=(0, 1), keepdim=True),
}


def _assert_bits(actual: object, expected: object) -> None:
    got = actual if isinstance(actual, tuple) else (actual,)
    want = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(want)
    for a, e in zip(got, want, strict=True):
        assert isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and a.shape == e.shape
        same = (a == e) | (a.isnan() & e.isnan())
        assert bool(same.all()), f"{int((~same).sum())} of {same.numel()} differ: ours {a[~same][:4]}, eager {e[~same][:4]}"


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_eagers_bits(name: str, isa: str) -> None:
    fn = FUNCTIONS[name]
    g = torch.Generator().manual_seed(4)
    for shape in [(7, 33, 5), (5, 100, 3), (64, 17, 2), (3, 1000, 4)]:
        x = torch.randn(shape, generator=g) * 3 + 10
        compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
        assert not compiled.report.fallback_ops, compiled.report.fallback_ops
        with warnings.catch_warnings():  # std_mean's correction of 2 over 2 values warns
            warnings.simplefilter("ignore", UserWarning)
            expected = fn(x)
        _assert_bits(compiled(x), expected)


def test_values_whose_squares_overflow_float32(isa: str) -> None:
    x = torch.tensor([[1e36, -1e36, 5e35, 0.0], [3e38, -3e38, 1.0, 2.0], [1e20, 3e19, -2e19, 0.5]])
    for fn in (lambda t: torch.std(t, dim=1, correction=0), lambda t: torch.var(t, dim=1)):
        _assert_bits(compile_cpu(OpModule(fn), (x,), isa=isa)(x), fn(x))
    std = torch.std(x, dim=1, correction=0)
    assert torch.isfinite(std).all()  # eager's float64 sums: finite roots of 1e72 variances


@pytest.mark.parametrize("shape", [(4, 4), (300, 300), (7, 13), (13, 7)])
def test_trace(shape: tuple[int, int], isa: str) -> None:
    g = torch.Generator().manual_seed(6)
    x = torch.randn(shape, generator=g) * 3 + 10
    if shape == (4, 4):
        x = torch.diag(torch.tensor([3e38, 3e38, -3e38, 1.0]))
    compiled = compile_cpu(OpModule(torch.trace), (x,), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    _assert_bits(compiled(x), torch.trace(x))
