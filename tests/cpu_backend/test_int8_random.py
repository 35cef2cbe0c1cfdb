"""Seeded random PT2E-style quantized linears and convolutions against eager: odd sizes and ranks, uint8 zero
points from 0 to 255, narrow and full quantization ranges, bias or none, every fused
activation, residuals that broadcast.  On an avx512 host with AVX512-VNNI they run on the int8
kernel; the result must be eager's to float32 rounding (no quantize follows the linear, so no
rounding boundary can flip): within 1e-5 of the output's scale."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from torch import nn

import ziggurat
from ziggurat.backends.cpu.isa import host_features

pytestmark = pytest.mark.skipif(not host_features().get("avx512vnni"),
                                reason="this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")

qd = torch.ops.quantized_decomposed
UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "none": lambda x: x, "relu": torch.relu, "gelu": nn.functional.gelu, "silu": nn.functional.silu,
    "tanh": torch.tanh, "hardtanh": lambda x: nn.functional.hardtanh(x, -0.5, 0.5),
}
SIZES = (1, 2, 3, 4, 5, 7, 13, 16, 17, 31, 33, 37, 64, 100)


class QuantizedLinearCase(nn.Module):
    w: torch.Tensor
    s: torch.Tensor
    z: torch.Tensor
    b: torch.Tensor

    def __init__(self, rng: random.Random, k: int, n: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(rng.randrange(1 << 30))
        self.register_buffer("w", torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g))
        self.register_buffer("s", torch.rand(n, generator=g) * 0.01 + 1e-4)
        self.register_buffer("z", torch.zeros(n, dtype=torch.int64))
        self.register_buffer("b", torch.randn(n, generator=g))
        self.bias = rng.random() < 0.7
        self.unary = rng.choice(sorted(UNARY))
        self.residual = rng.choice(["none", "full", "row"])
        low = rng.choice([0, 0, 10])
        high = rng.choice([255, 255, 200])
        self.q = (rng.choice([0.01, 0.03, 0.1]), rng.randint(low, high), low, high)

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        scale, zp, low, high = self.q
        x = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, scale, zp, low, high, torch.uint8),
                                     scale, zp, low, high, torch.uint8)
        w = qd.dequantize_per_channel(self.w, self.s, self.z, 0, -128, 127, torch.int8)
        y = UNARY[self.unary](nn.functional.linear(x, w, self.b if self.bias else None))
        return y + r if self.residual != "none" else y


def _check_int8(model: nn.Module, x: torch.Tensor, r: torch.Tensor) -> None:
    """Compiled on avx512, the op's weight is packed for the int8 kernel and the result is
    eager's within 1e-5 of the output's scale."""
    compiled = ziggurat.compile(model, (x, r), backend="cpu", isa="avx512")
    report = compiled.report.format()
    assert "int8 weights packed 1" in report, report
    got, want = compiled(x, r), model(x, r)
    scale = float(want.abs().max()) + 1e-6
    assert float((got - want).abs().max()) <= 1e-5 * scale + 1e-6, (float((got - want).abs().max()), scale)


@pytest.mark.parametrize("seed", range(16))
def test_random_quantized_linear(seed: int) -> None:
    rng = random.Random(seed)
    k, n = rng.choice(SIZES), rng.choice(SIZES)
    lead = [rng.choice(SIZES) for _ in range(rng.randint(0, 2))] + [rng.choice(SIZES)]
    model = QuantizedLinearCase(rng, k, n)
    x = torch.randn(*lead, k) * 3
    r = torch.randn(*lead, n) if model.residual == "full" else torch.randn(n)
    _check_int8(model, x, r)


class QuantizedConvCase(nn.Module):
    w: torch.Tensor
    s: torch.Tensor
    z: torch.Tensor
    b: torch.Tensor

    def __init__(self, rng: random.Random, cin: int, cout: int, ksize: int = 1) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(rng.randrange(1 << 30))
        self.register_buffer("w", torch.randint(-128, 128, (cout, cin, ksize, ksize), dtype=torch.int8, generator=g))
        self.register_buffer("s", torch.rand(cout, generator=g) * 0.01 + 1e-4)
        self.register_buffer("z", torch.zeros(cout, dtype=torch.int64))
        self.register_buffer("b", torch.randn(cout, generator=g))
        self.bias = rng.random() < 0.7
        self.unary = rng.choice(sorted(UNARY))
        self.residual = rng.random() < 0.5
        self.q = (rng.choice([0.01, 0.03, 0.1]), rng.randint(0, 255))
        self.stride = rng.choice([1, 1, 2, (2, 1)])
        self.padding = 0 if ksize == 1 else rng.choice([0, 1, ksize // 2, (1, 0)])
        self.dilation = 1 if ksize == 1 else rng.choice([1, 1, 2])

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        scale, zp = self.q
        x = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, scale, zp, 0, 255, torch.uint8), scale, zp, 0, 255, torch.uint8)
        w = qd.dequantize_per_channel(self.w, self.s, self.z, 0, -128, 127, torch.int8)
        y = UNARY[self.unary](nn.functional.conv2d(x, w, self.b if self.bias else None, stride=self.stride,
                                                   padding=self.padding, dilation=self.dilation))
        return y + r if self.residual else y


@pytest.mark.parametrize("seed", range(20))
def test_random_quantized_convolution(seed: int) -> None:
    """Convolutions on the int8 GEMM: 1x1 over the pixels, 3x3 and 5x5 over the implicit
    im2col (padding, strides, dilations); odd channels, batches and images."""
    rng = random.Random(1000 + seed)
    cin, cout = rng.choice(SIZES), rng.choice(SIZES)
    n, h, w = rng.choice((1, 2, 3)), rng.choice((5, 7, 14)), rng.choice((5, 7, 9))
    ksize = rng.choice((1, 1, 3, 3, 5))
    model = QuantizedConvCase(rng, cin, cout, ksize=ksize)
    reach = model.dilation * (ksize - 1) + 1  # the kernel's extent: the image holds it
    h, w = max(h, reach), max(w, reach)
    x = torch.randn(n, cin, h, w) * 3
    r = torch.randn(model(x, torch.zeros(())).shape)
    _check_int8(model, x, r)
