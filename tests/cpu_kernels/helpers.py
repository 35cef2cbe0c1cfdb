"""Helpers shared by the native CPU kernel tests."""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.isa import Isa, host_supports

ALL_ISAS = [isa for isa in (Isa.AVX512, Isa.AVX2, Isa.SCALAR) if host_supports(isa)]


def assert_close_to(got: torch.Tensor, want: torch.Tensor, k: int) -> None:
    """f32 results agree with eager up to a K-dependent tolerance."""
    tol = 2e-6 * max(k, 16) ** 0.5 * max(1.0, want.abs().max().item())
    torch.testing.assert_close(got, want, rtol=1e-4, atol=tol)
