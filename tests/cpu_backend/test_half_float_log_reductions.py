"""bf16 and float16 ``log_softmax`` and ``logsumexp``, native and bit for bit eager's.

Eager's 16-bit kernels round inside both: ``log_softmax`` over the last dim rounds the row's
sum of exponentials and its log to the 16-bit type before ``(x - max) - log_sum``, and
``logsumexp`` is ATen's composite of 16-bit ops, each rounded.  Float32's result rounded once
differs from eager's on up to a third of the values (measured: 14,389 of 50,257 bf16 values of
one GPT-2-sized row), so both ran through torch before.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import WIDEST_ISA, compile_cpu
from tests.support.apply import Apply
from tests.support.host import each_isa

DTYPES = [torch.bfloat16, torch.float16]
IDS = ["bf16", "f16"]
#: shapes with vector tails, one-element rows, a row of GPT-2's vocabulary, and a long reduced dim
SHAPES = [(4, 7), (5, 31), (3, 33, 40), (2, 100, 17), (16, 257), (64, 1), (1, 50257), (2, 3, 300, 3)]


def _ulps_off(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """Per value, how many 16-bit steps apart ``got`` and ``expected`` are (0 for two NaNs)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    def ordered(t: torch.Tensor) -> torch.Tensor:
        bits = t.view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -32768 - bits, bits)
    return torch.where(got.isnan() & expected.isnan(), 0, (ordered(got) - ordered(expected)).abs())


def _inputs(shape: tuple[int, ...], dtype: torch.dtype, scale: float) -> torch.Tensor:
    g = torch.Generator().manual_seed(sum(shape))
    return (torch.randn(shape, generator=g) * scale).to(dtype)


def _check(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, isa: str = WIDEST_ISA, rare_ulp: bool = False) -> None:
    """Native, and bit for bit eager's; with ``rare_ulp``, up to one value in 1,000 may be one
    16-bit step off (float32's ``exp`` and sums an ulp of float32 from eager's, which crosses a
    16-bit rounding boundary that rarely)."""
    model = Apply(fn)
    compiled = compile_cpu(model, (x,), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    off = _ulps_off(compiled(x), model(x))
    allowed = max(1, off.numel() // 1000) if rare_ulp else 0
    assert int(off.max()) <= (1 if rare_ulp else 0) and int((off > 0).sum()) <= allowed, \
        f"{int((off > 0).sum())} of {off.numel()} values differ, by up to {int(off.max())} steps (allowed: {allowed})"


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("scale", [1.0, 12.0])
def test_log_softmax_over_each_dim(shape: tuple[int, ...], dtype: torch.dtype, scale: float) -> None:
    x = _inputs(shape, dtype, scale)
    for dim in range(-1, -len(shape) - 1, -1):
        if shape[dim] > 1000 and dim != -1:
            continue
        # over the last dim eager's float32 steps are ours; over another, its sums run elsewhere
        _check(lambda t, d=dim: torch.log_softmax(t, d), x, rare_ulp=dim != -1)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("dims", [[-1], [1], [0, 2], [0, 1, 2]], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dims: list[int], keepdim: bool, dtype: torch.dtype) -> None:
    _check(lambda t: torch.logsumexp(t, dims, keepdim), _inputs((3, 33, 40), dtype, 3.0))


@pytest.mark.parametrize("isa", each_isa())
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_each_isa(isa: str, dtype: torch.dtype) -> None:
    x = _inputs((6, 131), dtype, 4.0)
    _check(lambda t: torch.log_softmax(t, -1), x, isa)
    _check(lambda t: torch.log_softmax(t, 0), x, isa, rare_ulp=True)
    _check(lambda t: torch.logsumexp(t, 1), x, isa)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_infinities_and_nans(dtype: torch.dtype) -> None:
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([[1.0, 2.0, -inf, 0.5], [-inf, -inf, -inf, -inf], [inf, 1.0, 2.0, 3.0],
                         [nan, 1.0, 2.0, 3.0], [inf, inf, -inf, 0.0], [60000.0, -60000.0, 0.0, 1.0]]).to(dtype)
    for dim in (0, 1):
        _check(lambda t, d=dim: torch.log_softmax(t, d), rows, rare_ulp=dim == 0)
        _check(lambda t, d=dim: torch.logsumexp(t, d), rows)


def test_float32_dtype_argument_is_float32_log_softmax() -> None:
    x = _inputs((4, 70), torch.bfloat16, 2.0)
    _check(lambda t: torch.log_softmax(t, -1, dtype=torch.float32).to(torch.bfloat16), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_log_softmax_of_a_gemm_result(dtype: torch.dtype) -> None:
    """An LM head's log-probabilities: a 16-bit GEMM feeding the written-out log_softmax."""
    g = torch.Generator().manual_seed(3)
    head = torch.nn.Linear(64, 1001, bias=False).to(dtype)
    x = torch.randn(5, 64, generator=g).to(dtype)
    with torch.no_grad():
        compiled = compile_cpu(Apply(lambda t: torch.log_softmax(head(t), -1)), (x,))
        assert not compiled.report.fallback_ops, compiled.report.fallback_ops
        expected = torch.log_softmax(head(x), -1)
        got = compiled(x)
    # the GEMM's float32 sums run in another order than eager's: one ulp of a few logits, which
    # moves their log-probabilities by as much; the rest must be eager's
    assert float((got.float() - expected.float()).abs().max()) <= 4 * float(torch.finfo(dtype).eps) * \
        float(expected.float().abs().max())
