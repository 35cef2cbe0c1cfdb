"""Negative indices where eager raises (``index_select``, ``gather``, ``embedding``, an
``nll_loss`` target) are run-time errors naming the op, as out-of-range ones are; before,
the native check wrapped them like Python indices and returned numbers.  Where eager wraps
(``x[idx]``, ``take_along_dim``) the native code still does.  In float32, bf16 and float16
(the 16-bit values move natively, bit for bit)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule
from ziggurat.ir.errors import InputError

Case = tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], torch.Tensor]

RAISING: dict[str, Case] = {
    "index_select": (lambda x, i: x.index_select(0, i), torch.tensor([0, 2])),
    "gather": (lambda x, i: x.gather(0, i), torch.tensor([[0, 2, 1]])),
    "embedding": (lambda x, i: F.embedding(i, x), torch.tensor([0, 2])),
    "nll_loss": (lambda x, i: F.nll_loss(x, i), torch.tensor([0, 2, 1, 1])),
}
WRAPPING: dict[str, Case] = {
    "index": (lambda x, i: x[i], torch.tensor([0, 2])),
    "take_along_dim": (lambda x, i: torch.take_along_dim(x, i, 0), torch.tensor([[0, 2, 1]])),
}


def _negative(i: torch.Tensor) -> torch.Tensor:
    j = i.clone()
    j.view(-1)[0] = -1
    return j


#: bf16 and float16 values move through these natively (16 bits copied), with the same checks
HALF_FLOATS = [torch.bfloat16, torch.float16]
DTYPES = [torch.float32, *HALF_FLOATS]


def _compiled(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], x: torch.Tensor, i: torch.Tensor):  # type: ignore[no-untyped-def]
    compiled = compile_cpu(OpModule(fn), (x, i), frontend="torchscript")
    if x.dtype in HALF_FLOATS:
        assert not compiled.report.fallback_ops, compiled.report.fallback_ops  # pyright: ignore[reportAttributeAccessIssue]
    return compiled


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("case", sorted(RAISING))
def test_negative_index_raises(case: str, dtype: torch.dtype) -> None:
    if case == "nll_loss" and dtype != torch.float32:
        pytest.skip("a bf16/float16 nll_loss runs in torch (eager rounds inside it)")
    fn, i = RAISING[case]
    x = torch.randn(4, 3).to(dtype)
    compiled = _compiled(fn, x, i)
    exact = {"rtol": 0, "atol": 0} if dtype != torch.float32 else {}  # nll_loss sums in float32
    torch.testing.assert_close(compiled(x, i), fn(x, i), **exact)
    with pytest.raises((IndexError, RuntimeError)):
        fn(x, _negative(i))
    with pytest.raises(InputError, match="out of range"):
        compiled(x, _negative(i))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("case", sorted(WRAPPING))
def test_negative_index_wraps(case: str, dtype: torch.dtype) -> None:
    fn, i = WRAPPING[case]
    x = torch.randn(4, 3).to(dtype)
    compiled = _compiled(fn, x, i)
    torch.testing.assert_close(compiled(x, _negative(i)), fn(x, _negative(i)), rtol=0, atol=0)
