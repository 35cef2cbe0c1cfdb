"""Eager once more with every op reading contiguous copies of its tensors.

Some eager kernels pick their formula by the layout of their operands, and an intermediate's
layout is eager's own choice (a ``conv1d`` of one input channel comes out with the channels
innermost).  ``batch_norm`` in inference mode computes ``x * a + (beta - mean * a)`` with
``a = weight * invstd`` on contiguous (and channels-last 4-D) inputs and
``((x - mean) * invstd) * weight + beta`` on other layouts: with an infinite weight the first is
NaN where the second is +-inf (seed 11 program 5074).  Neither answer can be held against a
compiler, which cannot know eager's intermediate layouts; where this run and the plain one
differ the oracle counts the difference as eager's own (``alternates`` in ``tolerance.py``),
as it does for the strided copies of ``ScalarLoops`` (``execute.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tests.fuzz.execute import CopiedOperands, run_eager


def _contiguous_copy(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or value.is_sparse or value.is_contiguous():
        return value
    return value.contiguous()


class ContiguousOperands(CopiedOperands):
    """Every op that neither mutates nor aliases reads contiguous copies of its tensors."""

    copy = staticmethod(_contiguous_copy)


def run_eager_contiguous_operands(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    with ContiguousOperands():
        return run_eager(module, inputs)
