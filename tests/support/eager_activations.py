"""Eager's activations by the kernels' unary kind names: the independent reference the vecmath
and bf16-table tests compare with (written with torch's functions, not the reference
interpreter's ``apply_unary``, which the code under test uses)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

EAGER: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu_erf": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "sigmoid": torch.sigmoid,
    "silu": F.silu,
    "tanh": torch.tanh,
    "softplus": F.softplus,
    "mish": F.mish,
}
