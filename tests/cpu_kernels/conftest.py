"""Fixtures for the native CPU kernel tests."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture
def force_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let even tiny GEMMs use every requested thread (the planner normally
    runs small problems on one thread)."""
    from ziggurat.backends.cpu.kernels import gemm_plan

    monkeypatch.setattr(gemm_plan.TUNING, "min_flops_per_thread", 0)
