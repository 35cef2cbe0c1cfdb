"""Wide operands (<32 x float>, <64 x float>): what the staged GEMM/conv epilogues emit.

LLVM splits a wide vector operation into register-sized ones, so every lane must come out
bit-identical to the register-width (<16 x float>) form of the same kind."""

from __future__ import annotations

import pytest
import torch

from ziggurat.backends.cpu.kernels.unary import VECMATH_KINDS

from .accuracy import _unary
from .harness import Kernels, Target, build_module, compile_module, host_has_avx512, targets


def _compiled(width: int) -> Kernels:
    host = targets()["avx512"]
    tg = Target(f"avx512x{width}", width, host.cpu, host.features)
    return compile_module(build_module(tg, {k: _unary(k) for k in sorted(VECMATH_KINDS)}), tg)


@pytest.mark.skipif(not host_has_avx512(), reason="host has no AVX-512")
@pytest.mark.parametrize("width", [32, 64])
def test_wide_form_is_bit_identical_to_register_width(width: int) -> None:
    narrow, wide = _compiled(16), _compiled(width)
    g = torch.Generator().manual_seed(5)
    x = torch.cat([
        torch.randn(4096, generator=g) * 4,
        torch.linspace(-20.0, 20.0, 4099),
        torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40, -1e-40, 88.0, -104.0]),
    ])
    for kind in sorted(VECMATH_KINDS):
        a, b = narrow.unary(kind, x), wide.unary(kind, x)
        assert torch.equal(a.view(torch.int32), b.view(torch.int32)), kind

