"""Comparing a backend's outputs with eager's."""

from __future__ import annotations

from typing import Any

import torch

# The house rule: any max relative error above this is flagged in the table.
MISMATCH_THRESHOLD = 1e-4


def flatten_tensors(value: Any) -> list[torch.Tensor]:
    """All tensors in a (nested) tensor / tuple / list / dict output, in a stable order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in flatten_tensors(item)]
    if isinstance(value, dict):
        return [t for key in sorted(value, key=str) for t in flatten_tensors(value[key])]
    raise TypeError(f"unsupported output type {type(value).__name__}")


def snapshot(value: Any) -> list[torch.Tensor]:
    """Detached copies of every output tensor (so later calls cannot change what we compare)."""
    return [t.detach().clone() for t in flatten_tensors(value)]


def max_relative_error(actual: list[torch.Tensor], expected: list[torch.Tensor]) -> float:
    """max |a - b| / max |b| over all outputs (b = eager), computed in float64.

    Structural mismatches (count, shape, dtype class) and non-finite differences count as
    infinite error rather than raising, so the table shows them instead of crashing.
    """
    if len(actual) != len(expected):
        return float("inf")
    num = 0.0
    den = 0.0
    for a, b in zip(actual, expected):
        if a.shape != b.shape or a.is_floating_point() != b.is_floating_point():
            return float("inf")
        a64 = a.detach().to(torch.float64)
        b64 = b.detach().to(torch.float64)
        if a64.numel() == 0:
            continue
        finite_b = torch.isfinite(b64)
        # inf/nan must sit in the same places (e.g. a masked -inf) with the same value/sign.
        if not torch.equal(torch.isfinite(a64), finite_b) or not torch.equal(a64.isnan(), b64.isnan()):
            return float("inf")
        infinite_b = b64.isinf()
        if not torch.equal(a64[infinite_b], b64[infinite_b]):
            return float("inf")
        if finite_b.any():
            num = max(num, (a64[finite_b] - b64[finite_b]).abs().max().item())
            den = max(den, b64[finite_b].abs().max().item())
    if den == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / den
