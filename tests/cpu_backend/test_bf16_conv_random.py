"""Seeded random bf16 convolutions against eager: kernel sizes 1-7 (rectangular), strides 1-3,
padding, dilation, odd image sizes and channel counts, bias or none, an activation, a residual
(the image itself when the shapes allow, else a second input), NCHW or channels-last images.
Each result must be as close to the float64 result as eager's own bf16 result is (at most
twice its error, or 1e-2 of the output's scale), and every convolution must run natively."""

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
    "sigmoid": torch.sigmoid,
}


class ConvCase(nn.Module):
    def __init__(self, conv: nn.Conv2d, unary: str, residual: bool) -> None:
        super().__init__()
        self.conv, self.unary, self.residual = conv, unary, residual

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        y = UNARY[self.unary](self.conv(x))
        return y + r if self.residual else y


def _case(seed: int) -> tuple[nn.Module, nn.Module, torch.Tensor, torch.Tensor]:
    rng = random.Random(seed)
    cin, cout = rng.choice((1, 3, 8, 16, 19, 32, 40)), rng.choice((1, 5, 16, 33, 64))
    kh, kw = rng.choice((1, 2, 3, 5, 7)), rng.choice((1, 3, 5))
    sh, sw = rng.choice((1, 1, 2, 3)), rng.choice((1, 1, 2))
    dh, dw = rng.choice((1, 1, 2)), 1
    ph, pw = rng.randint(0, kh // 2 * dh), rng.randint(0, kw // 2 * dw)
    h = rng.randint((kh - 1) * dh + 1, 23)
    w = rng.randint((kw - 1) * dw + 1, 29)
    n = rng.choice((1, 2, 3))
    torch.manual_seed(seed)
    conv = nn.Conv2d(cin, cout, (kh, kw), (sh, sw), (ph, pw), (dh, dw), bias=rng.random() < 0.6)
    case = ConvCase(conv, rng.choice(list(UNARY)), rng.random() < 0.5).eval()
    x = torch.randn(n, cin, h, w)
    if rng.random() < 0.3:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        r = torch.randn_like(conv(x))
    model = ConvCase(nn.Conv2d(cin, cout, (kh, kw), (sh, sw), (ph, pw), (dh, dw), bias=conv.bias is not None),
                     case.unary, case.residual).eval()
    model.load_state_dict(case.state_dict())
    return case.double(), model.to(torch.bfloat16), x, r


@pytest.mark.parametrize("seed", range(24))
def test_random_convolution(seed: int) -> None:
    exact_model, model, x, r = _case(seed)
    xb, rb = x.bfloat16(), r.bfloat16()
    compiled = ziggurat.compile(model, (xb, rb), backend="cpu")
    assert compiled.report.fallback_ops == {}, compiled.report.unsupported
    with torch.no_grad():
        exact = exact_model(xb.double(), rb.double())
        eager = model(xb, rb)
    got = compiled(xb, rb)
    assert got.dtype == torch.bfloat16 and got.shape == eager.shape
    scale = exact.abs().max().clamp_min(1e-30)
    ours = ((got.double() - exact).abs().max() / scale).item()
    theirs = ((eager.double() - exact).abs().max() / scale).item()
    assert ours <= max(2 * theirs, 1e-2), (ours, theirs)
