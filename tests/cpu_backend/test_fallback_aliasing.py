"""Ops that run through torch between native segments, when their result is a view of their
operand (int16 is not computed natively, so every op here falls back).

The memory plan freed an operand's buffer at the torch op, so the buffer receiving the
result could be placed over it: copying a view of the operand into it raised torch's raw
``RuntimeError: unsupported operation: some elements of the input tensor and the written-to
tensor refer to a single memory location`` (or, with exact overlap, silently reordered)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

CASES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "t": lambda t: ((t + 1).t() * 2)[1:] + 3,
    "slice_flatten": lambda t: (t * 3)[1:].flatten()[2:] - 1,
    "narrow_t_contiguous": lambda t: (t + 5).narrow(0, 1, 2).t().contiguous() * 2,
    "select_unsqueeze": lambda t: (t - 1).select(1, 2).unsqueeze(0) * (t - 1).sum(),
    "two_views": lambda t: torch.cat([(t * 2)[:2], (t * 2)[2:].flip(0)]) + 1,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fallback_view_results(case: str) -> None:
    fn = CASES[case]
    x = torch.arange(12, dtype=torch.int16).reshape(4, 3)
    compiled = compile_cpu(OpModule(fn), (x,), frontend="torchscript")
    assert compiled.report.fallback_ops  # the ops do run in torch
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
    y = torch.randint(-100, 100, (4, 3), dtype=torch.int16)
    torch.testing.assert_close(compiled(y), fn(y), rtol=0, atol=0)
