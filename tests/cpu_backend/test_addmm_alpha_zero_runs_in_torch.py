"""addmm/addmv/baddbmm/addbmm with alpha = 0: torch skips the product on some kernels and sizes
(an inf in the matrices does not reach the result) and not on others, so the CPU backend runs
them through torch, with a report line, rather than computing 0 * inf = NaN."""

from __future__ import annotations

import pytest
import torch

import ziggurat


class Addmm(torch.nn.Module):
    def __init__(self, op: str) -> None:
        super().__init__()
        self.op = op

    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return getattr(torch, self.op)(c, a, b, beta=0.5, alpha=0.0) * 2.0


@pytest.mark.parametrize("op, shapes", [
    ("addmm", ((3, 5), (3, 4), (4, 5))),
    ("addmv", ((3,), (3, 4), (4,))),
    ("baddbmm", ((2, 3, 5), (2, 3, 4), (2, 4, 5))),
    ("addbmm", ((3, 5), (2, 3, 4), (2, 4, 5))),
])
def test_alpha_zero_gives_eagers_answer(op: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    torch.manual_seed(0)
    c, a, b = (torch.randn(s) for s in shapes)
    a.view(-1)[1] = float("inf")
    model = Addmm(op)
    compiled = ziggurat.compile(model, (c, a, b), backend="cpu", threads=1)
    expected = model(c, a, b)
    torch.testing.assert_close(compiled(c, a, b), expected, equal_nan=True)
    assert any(k.startswith(f"aten::{op}") and "alpha = 0" in r[0] for k, r in compiled.report.fallback_ops.items()), \
        compiled.report.fallback_ops
