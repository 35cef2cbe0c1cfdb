"""Helpers shared by the native CPU kernel tests."""

from __future__ import annotations

import torch

from tests.support.host import host_isas
from ziggurat.backends.cpu.isa import Isa

ALL_ISAS = [Isa(i) for i in host_isas()]


def assert_close_to(got: torch.Tensor, want: torch.Tensor, k: int) -> None:
    """f32 results agree with eager up to a K-dependent tolerance."""
    tol = 2e-6 * max(k, 16) ** 0.5 * max(1.0, want.abs().max().item())
    torch.testing.assert_close(got, want, rtol=1e-4, atol=tol)
