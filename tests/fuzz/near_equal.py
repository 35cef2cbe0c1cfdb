"""Eager with float ``==`` and ``!=`` holding values within rounding distance equal.

An equality of two float values sits on a discontinuity of measure zero: the ``big`` runs
(``tolerance.py``) push values by +-2**-16 and find a ``<`` whose operands are that close,
but a push never lands two values exactly on each other, so ``a != b`` with ``a`` one ulp
from ``b`` stayed unmasked.  Another implementation rounds one ulp the other way and finds
them equal: eager's ``sinh(x)`` is correctly rounded at x = 4.66e-4 (one ulp above x), the
CPU backend's ``(expm1(x) - expm1(-x)) / 2`` is 0.58 ulp off (the math library's bound is
3.5) and returns x, and ``sinh(x) != x`` flipped (seed 11, program 7469).  In this run
``a == b`` also holds where ``|a - b| <= 2**-16 max(|a|, |b|)`` (the scale of the ``big``
push), so the oracle masks the elements where that changes the answer.  Operands that are
both exact (``on_grid``: any implementation computes them exactly) compare exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.fuzz.tolerance import BIG_DELTA, on_grid

_A = torch.ops.aten
_EQ = (_A.eq.Tensor, _A.eq.Scalar)
_NE = (_A.ne.Tensor, _A.ne.Scalar)


def near_equal(a: torch.Tensor, b: torch.Tensor | float | int | bool) -> torch.Tensor | None:
    """``a == b`` with float operands within ``BIG_DELTA`` relative of each other equal too;
    None where the comparison is not of floats (left to eager)."""
    dtype = torch.result_type(a, b)
    if not dtype.is_floating_point:
        return None
    x = a.to(dtype)
    y = b.to(dtype) if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=dtype)
    exact = x == y
    if on_grid(x) and on_grid(y):
        return exact
    finite = torch.isfinite(x) & torch.isfinite(y)
    close = (x - y).abs() <= BIG_DELTA * torch.maximum(x.abs(), y.abs())
    return exact | (finite & close)


class NearEqual(TorchDispatchMode):
    """``eq``/``ne`` of floats as ``near_equal`` (see the module)."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if (func in _EQ or func in _NE) and not kwargs and isinstance(args[0], torch.Tensor):
            eq = near_equal(args[0], args[1])
            if eq is not None:
                return eq if func in _EQ else ~eq
        return func(*args, **kwargs)


def run_eager_near_equal(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> list[Any]:
    from tests.fuzz.execute import run_eager

    with NearEqual():
        return run_eager(module, inputs)
