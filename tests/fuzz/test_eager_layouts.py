"""The oracle's run of eager on contiguous operands (``eager_layouts.py``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.fuzz.eager_layouts import ContiguousOperands
from tests.fuzz.tolerance import Reference, compare


def _bn(y: torch.Tensor) -> torch.Tensor:
    weight = torch.tensor([-float("inf"), 0.5])
    return F.batch_norm(y, torch.tensor([-0.25, 0.0]), torch.ones(2), weight, torch.tensor([-0.1, 0.0]), False, 0.1, 1e-5)


def test_batch_norm_formula_follows_the_layout() -> None:
    """Eager's inference batch_norm is NaN on a contiguous tensor and -inf/inf on a strided one
    (an infinite weight): the contiguous-operands run sees the other answer."""
    y = torch.tensor([[[-0.5, -1.0, -2.0], [1.0, 2.0, 3.0]]]).transpose(1, 2).contiguous().transpose(1, 2)
    assert not y.is_contiguous()
    plain = _bn(y)
    with ContiguousOperands():
        contiguous = _bn(y)
    assert not plain[0, 0].isnan().any()
    assert contiguous[0, 0].isnan().all()


def test_layout_dependent_element_is_masked() -> None:
    """A compiler giving eager's contiguous answer (NaN) where eager's plain run gave inf passes
    once the contiguous-operands run is among the alternates."""
    y = torch.tensor([[[-0.5, -1.0, -2.0], [1.0, 2.0, 3.0]]]).transpose(1, 2).contiguous().transpose(1, 2)
    plain = _bn(y)
    with ContiguousOperands():
        contiguous = _bn(y)
    ref64 = [plain.double()]
    without = compare([contiguous], Reference([plain], ref64, [[plain]], [[plain]], []))
    with_alternate = compare([contiguous], Reference([plain], ref64, [[plain]], [[plain]], [[contiguous]]))
    assert not without.ok
    assert with_alternate.ok, with_alternate.detail
