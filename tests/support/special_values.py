"""Inputs seeded with non-finite values, for converters and lowerings whose formulas must keep
eager's NaN/inf pattern (resizes, norms...)."""

from __future__ import annotations

import torch


def with_special_values(shape: tuple[int, ...], negative_zero: bool = True) -> torch.Tensor:
    """``randn(shape)`` (seed 0) with +inf every 7th element, NaN every 11th from 3, -inf every
    13th from 5 and, with ``negative_zero``, -0.0 every 17th from 2."""
    torch.manual_seed(0)
    x = torch.randn(shape)
    flat = x.view(-1)
    flat[::7] = float("inf")
    flat[3::11] = float("nan")
    flat[5::13] = float("-inf")
    if negative_zero:
        flat[2::17] = -0.0
    return x
