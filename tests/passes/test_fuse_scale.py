"""``fuse-post-ops`` folds ``matmul(a, b) * c`` and ``/ c`` (a Python float: ``mul.Scalar``,
``div.Scalar``, as a scripted model keeps them) into the matmul's ``alpha``.

A division is folded as a multiplication by ``1 / c`` only where ``c`` and ``1 / c`` are
normal float32 numbers (then the two differ by one rounding); ``/ 3e-44`` (a denormal
divisor with 5 bits, whose reciprocal overflows float32) gave inf where eager is finite.
"""

from __future__ import annotations

import math

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu, host_isas


class ScaledMatmul(torch.nn.Module):
    def __init__(self, w: torch.Tensor, c: float, divide: bool) -> None:
        super().__init__()
        self.w, self.c, self.divide = w, c, divide

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.divide:
            return torch.matmul(x, self.w) / self.c
        return torch.matmul(x, self.w) * self.c


@pytest.mark.parametrize("isa", host_isas())
@pytest.mark.parametrize("c", [1e-40, 3e-44, -3e-39, 1e39, 0.0, math.inf, 8.0, math.sqrt(96), -0.125])
@pytest.mark.parametrize("divide", [False, True], ids=["mul", "div"])
def test_matmul_scaled_by_a_constant_matches_eager(divide: bool, c: float, isa: str) -> None:
    g = torch.Generator().manual_seed(0)
    # products near 1e-9: finite after a division by a denormal
    a, w = torch.randn(3, 17, generator=g) * 1e-9, torch.randn(17, 19, generator=g)
    model = ScaledMatmul(w, c, divide).eval()
    scripted = torch.jit.freeze(torch.jit.script(model))
    compiled = compile_cpu(scripted, (a,), isa=isa)
    expected = model(a)
    scale = float(expected.nan_to_num(posinf=0.0, neginf=0.0).abs().max())  # GEMM rounding, relative to it
    torch.testing.assert_close(compiled(a), expected, rtol=1e-5, atol=1e-6 * scale, equal_nan=True)
