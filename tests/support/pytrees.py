"""Comparing a compiled module's output with eager's as a whole value (pytrees of any shape)."""

from __future__ import annotations

import math
from typing import Any

import torch


def max_error(got: torch.Tensor, want: torch.Tensor) -> float:
    return (got.double() - want.double()).abs().max().item() if want.numel() else 0.0


def assert_same_tree(got: Any, want: Any, path: str = "out", tolerance: float = 1e-5) -> float:
    """Same types, keys, attributes and constants all the way down; tensors of the same shape and
    dtype within ``tolerance`` relative to eager's largest magnitude. Returns the largest error."""
    assert type(got) is type(want), f"{path}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, torch.Tensor):
        assert got.shape == want.shape and got.dtype == want.dtype, path
        err = max_error(got, want)
        assert err <= tolerance * (1 + (want.abs().max().item() if want.numel() else 0.0)), f"{path}: error {err}"
        return err
    if isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        return max((assert_same_tree(got[k], want[k], f"{path}[{k!r}]", tolerance) for k in want), default=0.0)
    if isinstance(want, tuple | list):
        assert len(got) == len(want), path
        return max((assert_same_tree(g, w, f"{path}[{i}]", tolerance) for i, (g, w) in enumerate(zip(got, want))),
                   default=0.0)
    if hasattr(want, "__dict__"):
        return assert_same_tree(vars(got), vars(want), path, tolerance)
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(got), path
    else:
        assert got == want, path
    return 0.0
