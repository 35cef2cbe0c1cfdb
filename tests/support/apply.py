"""``Apply``: a module that applies a function to its inputs, for tests of one op or a short chain."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class Apply(nn.Module):
    """A module that applies ``fn`` to its inputs."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.fn(*args)
