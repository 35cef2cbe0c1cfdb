"""Shared helpers of the cpu backend tests."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import torch

import ziggurat

from tests.support.host import ISAS, WIDEST_ISA, host_isas

__all__ = ["ISAS", "WIDEST_ISA", "compile_cpu", "host_isas", "max_rel_error"]


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


@pytest.fixture(params=[i if i == WIDEST_ISA else pytest.param(i, marks=pytest.mark.slow) for i in ISAS])
def isa(request: pytest.FixtureRequest) -> str:
    """Each ISA the host runs: the widest (avx512, or avx2 on a host without AVX-512) in
    ``make test``, the others under ``-m slow`` too.
    ``make test`` still compiles for both through ``test_ops_opinfo``'s per-op sweep (each op's
    first sample on avx2 or scalar, alternating), the fuzz slice's configurations (which rotate
    the ISAs), ``test_masked_wide_vectors`` and the kernel tests' own ISA parameters.  The avx2
    and scalar variants of the tests here were about 200 s of ``make test``'s 1,260 s of CPU;
    a cold ``make test`` took 996 s on the 2-vCPU Intel host with them, 966 s without scalar."""
    if request.param not in host_isas():
        pytest.skip(f"host cannot run {request.param}")
    return request.param


@pytest.fixture
def model_isa(isa: str) -> str:
    """``isa`` for whole-model tests (10 s a build), named apart: they were avx512-only in
    ``make test`` before the other tests were."""
    return isa
