"""Seeded random bf16 GEMM programs against eager: linear (every epilogue, odd ranks and sizes,
residuals that broadcast), products of two computed operands (batched, broadcast batches,
transposed and non-contiguous operands), baddbmm's alpha and beta, and attention with boolean
and causal masks.  Each result must be as close to the float64 result as eager's own bf16
result is (at most twice its error, or 1e-2 of the output's scale; attention: twice, with
float32 scores as eager's, its two products on the bf16 kernels with a float32 output)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.kernels import amx

pytestmark = pytest.mark.skipif(amx.host_bf16_kernel() is None,
                                reason="this host has neither AMX-BF16 nor AVX512-BF16")

UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "none": lambda x: x, "relu": torch.relu, "gelu": nn.functional.gelu, "silu": nn.functional.silu,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid,
}
SIZES = (1, 2, 3, 5, 7, 13, 16, 17, 31, 33, 37, 64)


class LinearCase(nn.Module):
    def __init__(self, k: int, n: int, bias: bool, unary: str, residual: str) -> None:
        super().__init__()
        self.fc = nn.Linear(k, n, bias=bias)
        self.unary, self.residual = unary, residual

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        y = UNARY[self.unary](self.fc(x))
        return y + r if self.residual != "none" else y


class ProductCase(nn.Module):
    def __init__(self, transpose_b: bool, slice_a: bool, unary: str) -> None:
        super().__init__()
        self.transpose_b, self.slice_a, self.unary = transpose_b, slice_a, unary

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if self.slice_a:
            a = a[..., 1:, :]
        return UNARY[self.unary](a @ (b.transpose(-1, -2) if self.transpose_b else b))


class BaddbmmCase(nn.Module):
    def __init__(self, alpha: float, beta: float) -> None:
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(c, a, b, beta=self.beta, alpha=self.alpha)


class AttentionCase(nn.Module):
    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.causal = causal

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.causal:
            return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _case(seed: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    rnd = random.Random(seed)
    g = torch.Generator().manual_seed(seed)

    def t(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    kind = ("linear", "product", "baddbmm", "attention")[seed % 4]
    if kind == "linear":
        lead = [rnd.choice(SIZES) for _ in range(rnd.randint(0, 2))]
        m, k, n = rnd.choice(SIZES), rnd.choice(SIZES), rnd.choice(SIZES)
        residual = rnd.choice(["none", "full", "row"])
        model: nn.Module = LinearCase(k, n, rnd.random() < 0.7, rnd.choice(list(UNARY)), residual)
        r = t(*lead, m, n) if residual == "full" else t(n)
        return model, (t(*lead, m, k), r)
    if kind == "product":
        batch = [rnd.choice((1, 2, 3)) for _ in range(rnd.randint(0, 2))]
        b_batch = [rnd.choice((1, d)) for d in batch]
        m, k, n = rnd.choice(SIZES) + 1, rnd.choice(SIZES), rnd.choice(SIZES)
        transpose_b = rnd.random() < 0.5
        model = ProductCase(transpose_b, rnd.random() < 0.3, rnd.choice(["none", "relu", "gelu"]))
        b = t(*b_batch, n, k) if transpose_b else t(*b_batch, k, n)
        return model, (t(*batch, m, k), b)
    if kind == "baddbmm":
        batch, m, k, n = rnd.choice((1, 2, 5)), rnd.choice(SIZES), rnd.choice(SIZES), rnd.choice(SIZES)
        model = BaddbmmCase(rnd.choice((1.0, 0.5, -2.0)), rnd.choice((1.0, 0.25)))
        return model, (t(batch, m, n), t(batch, m, k), t(batch, k, n))
    heads, s, d = rnd.choice((1, 2, 4)), rnd.choice((3, 17, 33)), rnd.choice((8, 16, 12))
    mask = torch.rand(s, s, generator=g) > 0.3
    mask[:, 0] = True  # no fully masked row (eager's math and flash paths differ there)
    return AttentionCase(rnd.random() < 0.4), (t(2, heads, s, d), t(2, heads, s, d), t(2, heads, s, d), mask)


@pytest.mark.parametrize("seed", range(24))
def test_random_bf16_gemm_program(seed: int) -> None:
    model, inputs = _case(seed)
    model.eval()
    low = tuple(x.bfloat16() if x.is_floating_point() else x for x in inputs)
    compiled = ziggurat.compile(model.to(torch.bfloat16), low, backend="cpu")
    attention = isinstance(model, AttentionCase)
    gemms = compiled.ir["graph"].count("bf16_kernel")
    # the product runs on a bf16 kernel (attention's: float32 out, for its float32 softmax)
    assert gemms >= (2 if attention else 1), compiled.report.unsupported  # 4-D: eager's flash shapes
    with torch.no_grad():
        eager = model(*low).double()
        exact = model.double()(*(x.double() if x.is_floating_point() else x for x in low))
    got = compiled(*low)
    assert got.dtype == torch.bfloat16 and got.shape == eager.shape
    scale = max(exact.abs().max().item(), 1e-6)
    ours = (got.double() - exact).abs().max().item() / scale
    eagers = (eager - exact).abs().max().item() / scale
    # attention: no absolute floor (scores rounded to bf16 were 2-13x eager's error, under 1e-2)
    assert ours <= (max(2 * eagers, 1e-4) if attention else max(2 * eagers, 1e-2)), (ours, eagers)
