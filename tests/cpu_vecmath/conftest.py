"""Fixtures for the vecmath tests: compiled kernel modules and OpInfo samples (session-wide)."""

from __future__ import annotations

import pytest
import torch

from .accuracy import kernels, opinfo_samples
from tests.support.host import WIDEST_ISA

from .harness import Kernels
from .references import OPINFO_NAME


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():  # type: ignore[no-untyped-def]
    """Reference computations on ~1e5-element tensors: threads only add contention here."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="session")
def kwide() -> Kernels:
    """The widest code this host runs: AVX-512 (W=16), or AVX2 (W=8) on a host without."""
    return kernels(WIDEST_ISA)


@pytest.fixture(scope="session")
def k_avx2() -> Kernels:
    """AVX2-only (Haswell) code, W=8: every unary kind without the parameter variants."""
    return kernels("avx2", full=False)


@pytest.fixture(scope="session")
def k64() -> Kernels:
    return kernels(WIDEST_ISA, "f64", full=False)


class OpInfoSamples(dict[str, torch.Tensor]):
    """OpInfo float32 sample inputs by op name; ``error`` says why they could not be loaded."""

    error: str | None = None


@pytest.fixture(scope="session")
def opinfo() -> OpInfoSamples:
    out = OpInfoSamples()
    try:
        out.update(opinfo_samples(set(OPINFO_NAME.values())))
    except ImportError as exc:  # torch.testing._internal needs the 'expecttest' package
        out.error = f"{type(exc).__name__}: {exc}"
    return out
