"""The float64 reference run without eager's own cancellations.

``e64`` (the program in float64, ``tolerance.py``) stands for the exact answer: where it and
eager's float32 answer disagree, the difference is eager's error and counts as noise.  It can
only do that where eager's float64 kernels are accurate.  ``gelu`` is not in its tail: torch
computes ``x * 0.5 * (1 + erf(x / sqrt 2))`` (and ``x * 0.5 * (1 + tanh(u))``), where
``1 + erf`` cancels to 0 once erf rounds to -1: gelu(x) is -0.0 for every x below -5.3 in
float32 and below -8.3 in float64, where it is a tiny negative number (-1.4e-19 at -9.2,
normal down to about -13 in float32).  Downstream of a discontinuity (``floor(gelu(x) / 3)``
is -1, not 0) eager's -0.0 is an artifact of its formula that both of its runs share, and a
compiler computing the tail accurately was reported wrong (seed 3, program 6001).

``Exact64`` computes the float64 run's gelu without the cancellation (``0.5 * x *
erfc(-x / sqrt 2)``; ``x * sigmoid(2u)`` for the tanh form), so eager's saturated float32 tail
is measured against the true value like any other rounding error.

The ops that return the position of an order statistic (``sort``, ``argmax``, ``max(x, dim)``,
``topk`` ...) choose their indices by the operand's float32 values (``ORDER_OPS``): the
program compares float32 values, so an exact float32 implementation ties two values its
rounding makes equal and keeps them in stable order.  Ordered by their float64 values, the
run says one order where every float32 implementation says another: eager float32's
``gelu`` tail cancels to 0 at three elements of a stable sort's row, float64 keeps
1e-169 and 7e-29 there, a compiler computing the tail accurately keeps 0 (1e-169 is below
float32's range) and 7e-29, so its order agreed with neither run at a position where the
two agreed, and a permutation's positions are masked one by one (seed 11, program 1438).
Their values stay float64.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

_GELU = (torch.ops.aten.gelu.default,)
_A = torch.ops.aten
#: ops returning indices of an order statistic (first returns indices, the others values, indices)
ORDER_OPS = (_A.argmax.default, _A.argmin.default, _A.sort.default, _A.sort.stable, _A.max.dim, _A.min.dim,
             _A.topk.default, _A.kthvalue.default, _A.median.dim, _A.nanmedian.dim, _A.mode.default)


def gelu64(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """gelu without the cancellation of ``1 + erf`` (``1 + tanh``) in its negative tail."""
    if approximate == "tanh":
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return x * torch.sigmoid(2.0 * u)  # 0.5 * (1 + tanh(u)) == sigmoid(2u)
    return 0.5 * x * torch.special.erfc(-x * math.sqrt(0.5))


class Exact64(TorchDispatchMode):
    """Float64 ops whose eager kernel cancels replaced by an accurate formula (see the module)."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in _GELU and isinstance(args[0], torch.Tensor) and args[0].dtype == torch.float64:
            approximate = kwargs.get("approximate", args[1] if len(args) > 1 else "none")
            return gelu64(args[0], approximate)
        if func in ORDER_OPS and isinstance(args[0], torch.Tensor) and args[0].dtype == torch.float64:
            return ordered_by_float32(func, args, kwargs)
        if getattr(func, "namespace", None) == "quantized_decomposed":
            return quantized_in_float32(func, args, kwargs)
        return func(*args, **kwargs)


def quantized_in_float32(func: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    """A PT2E ``quantized_decomposed`` op in the float64 run: its float operands (values,
    scales) narrowed to the float32 they are in the program (the ops assert float32 input),
    its float32 results widened back.  Without it the float64 run failed on every quantized
    program, and eager's float32 inaccuracies there (gelu's tail) counted as exact: an
    accurate gelu tail after a quantized linear was reported wrong (seed 164, program 141)."""
    from tests.fuzz.wide_ops import narrow, widen

    return tree_map(widen, func(*tree_map(narrow, args), **tree_map(narrow, kwargs)))


def ordered_by_float32(func: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    """``func`` (one of ``ORDER_OPS``) of a float64 tensor: indices chosen by its float32
    values, values (if it returns them) from the float64 ones."""
    by32 = func(args[0].to(torch.float32), *args[1:], **kwargs)
    if isinstance(by32, torch.Tensor):  # argmax, argmin
        return by32
    return func(*args, **kwargs)[0], by32[1]
