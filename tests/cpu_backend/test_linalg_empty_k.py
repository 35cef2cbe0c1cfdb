"""Products with an empty contraction (K = 0): zeros plus the fused post-ops, against eager."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu


class AddmmRelu(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.addmm(bias, a, b))


class AddmmClampResidual(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.clamp(torch.addmm(bias, a, b), -0.25, 0.5) + r


class MatmulResidual(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b) - 2.0 * r


@pytest.mark.parametrize("case", ["relu", "clamp-residual", "residual"])
def test_empty_k_products_apply_their_post_ops(case: str) -> None:
    a, b = torch.randn(5, 0), torch.randn(0, 7)
    bias, r = torch.randn(7), torch.randn(5, 7)
    model: torch.nn.Module
    if case == "relu":
        model, args = AddmmRelu(), (a, b, bias)
    elif case == "clamp-residual":
        model, args = AddmmClampResidual(), (a, b, bias, r)
    else:
        model, args = MatmulResidual(), (a, b, r)
    compiled = compile_cpu(model, args)
    torch.testing.assert_close(compiled(*args), model(*args))
