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
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from tests.fuzz.execute import run_eager


def _contiguous_copy(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or value.is_sparse or value.is_contiguous():
        return value
    return value.contiguous()


class ContiguousOperands(TorchDispatchMode):
    """Every op that neither mutates nor aliases reads contiguous copies of its tensors."""

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        schema = func._schema
        if not schema.is_mutable and all(r.alias_info is None for r in schema.returns):
            try:
                return func(*tree_map(_contiguous_copy, args), **tree_map(_contiguous_copy, kwargs))
            except Exception:
                pass
        return func(*args, **kwargs)


def run_eager_contiguous_operands(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    with ContiguousOperands():
        return run_eager(module, inputs)
