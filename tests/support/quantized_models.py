"""PT2E-quantized models shared by the int8 tests (``quantize_per_tensor -> dequantize_per_tensor``
pairs and ``dequantize_per_channel`` int8 weights, as ``convert_pt2e`` writes them), and a
float32 tensor's bits for bit-for-bit comparisons."""

from __future__ import annotations

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from torch import nn

qd = torch.ops.quantized_decomposed


def float32_bits(t: torch.Tensor) -> torch.Tensor:
    """A float32 tensor's bits as int32 (``torch.equal`` of them: bit for bit, NaN included)."""
    return t.contiguous().view(torch.int32)


def int8_weight(g: torch.Generator, *shape: int) -> tuple[torch.Tensor, torch.Tensor]:
    """An int8 weight and its per-output-channel scales."""
    return (torch.randint(-128, 128, shape, dtype=torch.int8, generator=g),
            torch.rand(shape[0], generator=g) * 0.004 + 1e-3)


class QuantizedStack(nn.Module):
    """PT2E's pieces for the models below: ``w`` (int8 weights, scales), ``b`` (biases), ``q``
    (the pairs' uint8 scales and zero points)."""

    w: list[tuple[torch.Tensor, torch.Tensor]]
    b: list[torch.Tensor]
    q: list[tuple[float, int]]

    def _pair(self, x: torch.Tensor, i: int) -> torch.Tensor:
        scale, zp = self.q[i]
        return qd.dequantize_per_tensor(qd.quantize_per_tensor(x, scale, zp, 0, 255, torch.uint8), scale, zp, 0, 255, torch.uint8)

    def _w(self, i: int) -> torch.Tensor:
        w, s = self.w[i]
        return qd.dequantize_per_channel(w, s, torch.zeros(w.shape[0], dtype=torch.int64), 0, -128, 127, torch.int8)


class Uint8Chain(QuantizedStack):
    """conv(3x3, padded) -> relu -> pair -> conv(1x1) + residual(the first pair) -> relu -> pair ->
    conv(3x3, strided) -> flatten -> pair -> linear -> pair -> linear: the three pairs after an
    int8 op and before int8 ops only are stored as uint8 (inputs and a residual read as bytes);
    the input's and the one after the flatten, read by int8 ops only, stop at their integers
    (a cast to uint8)."""

    def __init__(self, c: int, seed: int, hw: tuple[int, int] = (6, 6)) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        pixels = ((hw[0] + 1) // 2) * ((hw[1] + 1) // 2)
        shapes = [(c, 3, 3, 3), (c, c, 1, 1), (c + 3, c, 3, 3), (9, (c + 3) * pixels), (5, 9)]
        self.w = [int8_weight(g, *shape) for shape in shapes]
        self.b = [torch.randn(w.shape[0], generator=g) * 0.1 for w, _ in self.w]
        self.q = [(0.03, 128), (0.02, 0), (0.05, 3), (0.04, 10), (0.07, 0)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self._pair(x, 0)
        a = self._pair(torch.relu(nn.functional.conv2d(x, self._w(0), self.b[0], padding=1)), 1)
        y = self._pair(torch.relu(nn.functional.conv2d(a, self._w(1), self.b[1]) + a), 2)
        y = self._pair(nn.functional.conv2d(y, self._w(2), self.b[2], stride=2, padding=1).flatten(1), 3)
        y = self._pair(nn.functional.linear(y, self._w(3), self.b[3]), 4)
        return nn.functional.linear(y, self._w(4), self.b[4])


class InvertedResidual(QuantizedStack):
    """MobileNetV2's block: 1x1 expansion -> relu6 -> 3x3 depthwise -> relu6 -> 1x1 projection +
    the input, quantized with PT2E pairs as X86InductorQuantizer places them."""

    def __init__(self, c: int, expand: int, stride: int, seed: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        e = c * expand
        self.w = [int8_weight(g, e, c, 1, 1), int8_weight(g, e, 1, 3, 3), int8_weight(g, c, e, 1, 1)]
        self.b = [torch.randn(w.shape[0], generator=g) * 0.1 for w, _ in self.w]
        self.q = [(0.03, 128), (0.025, 0), (0.02, 0), (0.04, 120)]
        self.e, self.stride = e, stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self._pair(x, 0)
        y = self._pair(nn.functional.relu6(nn.functional.conv2d(x, self._w(0), self.b[0])), 1)
        y = self._pair(nn.functional.relu6(nn.functional.conv2d(y, self._w(1), self.b[1], stride=self.stride,
                                                                padding=1, groups=self.e)), 2)
        y = nn.functional.conv2d(y, self._w(2), self.b[2])
        return self._pair(y + x, 3) if self.stride == 1 else y


class QuantizedMlp(nn.Module):
    """Two PT2E-style quantized linears with a relu between (fused into the first) and a residual-free head."""

    w1: torch.Tensor
    s1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    s2: torch.Tensor
    zero: torch.Tensor

    def __init__(self, k: int = 133, hidden: int = 70, n: int = 45) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(5)
        self.register_buffer("w1", torch.randint(-128, 128, (hidden, k), dtype=torch.int8, generator=g))
        self.register_buffer("s1", torch.rand(hidden, generator=g) * 0.002 + 0.001)
        self.register_buffer("b1", torch.randn(hidden, generator=g) * 0.1)
        self.register_buffer("w2", torch.randint(-128, 128, (n, hidden), dtype=torch.int8, generator=g))
        self.register_buffer("s2", torch.rand(n, generator=g) * 0.002 + 0.001)
        self.register_buffer("zero", torch.zeros(hidden, dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.03, 128, 0, 255, torch.uint8), 0.03, 128, 0, 255, torch.uint8)
        w1 = qd.dequantize_per_channel(self.w1, self.s1, self.zero, 0, -128, 127, torch.int8)
        y = torch.relu(nn.functional.linear(x, w1, self.b1))
        y = qd.dequantize_per_tensor(qd.quantize_per_tensor(y, 0.02, 0, 0, 255, torch.uint8), 0.02, 0, 0, 255, torch.uint8)
        w2 = qd.dequantize_per_channel(self.w2, self.s2, self.zero[: self.w2.shape[0]], 0, -128, 127, torch.int8)
        return nn.functional.linear(y, w2)
