"""A vecmath activation compiled on its own and applied to a float32 tensor: what a GEMM's
fused (staged) epilogue must match bit for bit, the activation being a function of each value.
Built with the vecmath tests' harness (``tests/cpu_vecmath/harness.py``), on AVX-512 lanes."""

from __future__ import annotations

from functools import lru_cache

import torch

from tests.cpu_vecmath.harness import Kernels, build_module, compile_module, targets
from ziggurat.backends.cpu import vecmath


@lru_cache(maxsize=None)
def _kernels(kind: str) -> Kernels:
    target = targets()["avx512"]
    return compile_module(build_module(target, {kind: lambda b, x: vecmath.apply_unary(b, kind, x, {})}), target)


def activated(kind: str, x: torch.Tensor) -> torch.Tensor:
    """``kind`` applied to a float32 tensor by the AVX-512 vecmath kernel."""
    return _kernels(kind).unary(kind, x.contiguous())
