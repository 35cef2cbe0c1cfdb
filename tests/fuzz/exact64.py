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
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_GELU = (torch.ops.aten.gelu.default,)


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
        return func(*args, **kwargs)
