"""Shared helpers of the cpu backend tests."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import torch

import ziggurat

ISAS = ("avx512", "avx2", "scalar")


def host_isas() -> tuple[str, ...]:
    from ziggurat.backends.cpu.isa import Isa, host_supports

    return tuple(i for i in ISAS if host_supports(Isa(i)))


def compile_cpu(model: Any, inputs: Any, **options: Any) -> Any:
    """``ziggurat.compile(..., backend="cpu")`` with fallback warnings silenced."""
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return ziggurat.compile(model, inputs, backend="cpu", **options)
    finally:
        logger.setLevel(level)


def max_rel_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    if expected.numel() == 0:
        return 0.0
    return float((actual.double() - expected.double()).abs().max() / expected.double().abs().max().clamp_min(1e-30))


@pytest.fixture(params=[*ISAS[:2], pytest.param(ISAS[2], marks=pytest.mark.slow)])
def isa(request: pytest.FixtureRequest) -> str:
    """Each ISA the host runs: avx512 and avx2 in ``make test``, scalar under ``-m slow`` too
    (``make test`` still compiles for scalar through ``test_ops_opinfo``'s per-op sweep, which
    alternates avx2 and scalar, the fuzz slice's configurations and the kernel tests; the
    scalar variants of these tests were about 90 s of its 1,260 s of CPU)."""
    if request.param not in host_isas():
        pytest.skip(f"host cannot run {request.param}")
    return request.param


@pytest.fixture(params=[ISAS[0], *(pytest.param(i, marks=pytest.mark.slow) for i in ISAS[1:])])
def model_isa(request: pytest.FixtureRequest) -> str:
    """``isa`` for whole-model tests (10 s a build): avx512 in ``make test``, the others under
    ``-m slow``; every ISA's kernels keep their own tests in ``make test``."""
    if request.param not in host_isas():
        pytest.skip(f"host cannot run {request.param}")
    return request.param
