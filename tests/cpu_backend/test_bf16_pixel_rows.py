"""bf16 convolutions of small images as pixel rows (``conv_bf16._pixel_rows_conv``):
``out^T = im2col(x) @ W^T`` with the pixels as the GEMM's rows, where the channel-row form
would leave more than a fifth of its 32-pixel panels' lanes idle (ResNet's layer 4: 49 pixels
in 64 lanes).  Each case must run natively as pixel rows and be as close to the float64 result
as eager's own bf16 result is (at most twice its error, or 1e-2 of the output's scale)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.kernels import amx

def _pixel_rows(graph: str) -> int:
    """Convolutions computed as pixel rows in the loop IR: bf16 GEMMs of a convolution whose B is
    the prepacked weight (channel rows read the image as a run-time B, ``b_packed = false``).
    (Their im2col buffers do not count them: a 1x1 convolution of a dense channels-last bf16
    image reads its rows in place.)"""
    return sum(1 for line in graph.splitlines()
               if "loop.gemm @gemm_conv2d" in line and "bf16_kernel" in line and "b_packed = false" not in line)


def _assert_as_close_as_eager(compiled: Any, model: nn.Module, exact_model: nn.Module,
                              x: torch.Tensor) -> None:
    """The compiled bf16 result at most twice as far from float64 as eager's bf16 result (or
    1e-2 of the output's scale)."""
    with torch.no_grad():
        exact = exact_model.double()(x.double())
        eager = model(x)
    got = compiled(x)
    assert got.dtype == torch.bfloat16 and got.shape == eager.shape
    scale = exact.abs().max().clamp_min(1e-30)
    ours = ((got.double() - exact).abs().max() / scale).item()
    theirs = ((eager.double() - exact).abs().max() / scale).item()
    assert ours <= max(2 * theirs, 1e-2), (ours, theirs)


pytestmark = pytest.mark.skipif(amx.host_bf16_kernel() is None,
                                reason="this host has neither AMX-BF16 nor AVX512-BF16")


class Block(nn.Module):
    """conv (+ bias) -> relu, then a second 3x3 conv reading the first's (channels-last) result
    with a residual of it, then a 1x1 conv: the layer-4 pattern of a ResNet."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int, padding: int, dilation: int, bias: bool) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, kernel, stride, padding, dilation, bias=bias)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.c3 = nn.Conv2d(cout, 2 * cout, 1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.c1(x))
        y = torch.relu(self.c2(y) + y)
        return torch.nn.functional.silu(self.c3(y))


# (n, cin, cout, h, w, kernel, stride, padding, dilation, bias)
CASES = [
    (1, 64, 64, 7, 7, 3, 1, 1, 1, True),  # ResNet layer 4, reduced channels
    (2, 32, 32, 5, 5, 3, 1, 1, 1, False),  # 25 of 64 lanes: a batch of two
    (1, 64, 64, 14, 14, 3, 2, 1, 1, True),  # the stride-2 entry of layer 4
    (1, 64, 32, 7, 7, 1, 1, 0, 1, True),  # 1x1
    (2, 64, 64, 14, 14, 1, 2, 0, 1, False),  # 1x1, stride 2: ResNet-50's layer-4 downsample
    (3, 32, 64, 6, 5, 3, 1, 2, 2, True),  # dilated, padded past the taps
    (1, 3, 32, 4, 4, 3, 1, 1, 1, True),  # K = 27: not a whole 32-deep step
    (1, 40, 64, 7, 9, 5, 1, 2, 1, False),  # 5x5 taps, a wider-than-high image
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "n{}c{}o{}_{}x{}_k{}s{}p{}d{}{}".format(*c[:9], "b" if c[9] else ""))
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_pixel_rows_convolution(case: tuple[int, ...], layout: str) -> None:
    n, cin, cout, h, w, kernel, stride, padding, dilation, bias = case
    torch.manual_seed(sum(case))
    exact_model = Block(cin, cout, kernel, stride, padding, dilation, bool(bias)).eval()
    model = Block(cin, cout, kernel, stride, padding, dilation, bool(bias)).eval()
    model.load_state_dict(exact_model.state_dict())
    model = model.to(torch.bfloat16)
    x = torch.randn(n, cin, h, w).to(torch.bfloat16)
    if layout == "nhwc":
        x = x.contiguous(memory_format=torch.channels_last)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert compiled.report.fallback_ops == {}, compiled.report.unsupported
    # the two spatial convolutions at least (the 1x1 too where its pixels leave lanes idle)
    assert _pixel_rows(compiled.ir["graph"]) >= 2, compiled.ir["graph"].count("b_conv")
    _assert_as_close_as_eager(compiled, model, exact_model, x)


@pytest.mark.parametrize("cin", [16, 64])
def test_a_channel_major_image_is_copied_channels_last(cin: int) -> None:
    """A channel-major image (here the NCHW input; in ResNet-50 the last 14x14 channel-rows result)
    is copied channels-last before a multi-tap pixel-rows convolution, whose im2col rows are then
    (tap, channel): copied in (channel, tap) order straight from the planes, each pixel's rows were
    vectors of 3 lanes (ResNet-50's layer-4 entry, 0.35 ms of a 19 ms model)."""
    torch.manual_seed(cin)
    exact_model = Block(cin, 64, 3, 2, 1, 1, True).eval()
    model = Block(cin, 64, 3, 2, 1, 1, True).eval()
    model.load_state_dict(exact_model.state_dict())
    model = model.to(torch.bfloat16)
    x = torch.randn(1, cin, 14, 14).to(torch.bfloat16)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    loop_ir = compiled.ir["loop"]
    assert f"x3x3x{cin}xbf16>" in loop_ir and f"x{cin}x3x3xbf16>" not in loop_ir
    assert re.search(rf"loop.kernel @\w+ ins\(%\w+ : memref<1x{cin}x14x14xbf16>\) outs\(%channels_last", loop_ir)
    _assert_as_close_as_eager(compiled, model, exact_model, x)


def test_channel_rows_where_lanes_are_used() -> None:
    """A 16x16 image (256 of 288 lanes) and an output channel count that is not a multiple of
    32 keep the channel-row forms."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 33, 3, padding=1)).eval()
    model = model.to(torch.bfloat16)
    for x in (torch.randn(1, 32, 16, 16), torch.randn(1, 32, 7, 7)):
        compiled = ziggurat.compile(model, (x.bfloat16(),), backend="cpu")
        graph = compiled.ir["graph"]
        expected = 0 if x.shape[-1] == 16 else 1  # at 7x7 the first (32 channels) computes pixel rows
        assert _pixel_rows(graph) == expected and graph.count("b_conv") == 2 - expected, graph.count("b_conv")


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expand -> depthwise 3x3 -> 1x1 project (+ the input)."""

    def __init__(self, c: int, expand: int, stride: int) -> None:
        super().__init__()
        self.expand = nn.Conv2d(c, expand, 1)
        self.dw = nn.Conv2d(expand, expand, 3, stride, 1, groups=expand)
        self.project = nn.Conv2d(expand, c, 1)
        self.residual = stride == 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.project(nn.functional.relu6(self.dw(nn.functional.relu6(self.expand(x)))))
        return y + x if self.residual else y


@pytest.mark.parametrize("channels", [(24, 144), (16, 96), (32, 192)], ids=lambda c: f"c{c[0]}e{c[1]}")
def test_a_depthwise_result_feeds_pixel_rows(channels: tuple[int, int]) -> None:
    """The float32 depthwise kernel's result is channels-last: the 1x1 convolution after it
    computes pixel rows (any output channel count) and writes channels-last, so the chain of
    blocks never transposes an image (MobileNetV2 bf16, 1 thread: 4.2 -> 2.8 ms)."""
    c, e = channels
    torch.manual_seed(c)
    exact_model = nn.Sequential(InvertedResidual(c, e, 1), InvertedResidual(c, e, 1), InvertedResidual(c, e, 2)).eval()
    model = nn.Sequential(InvertedResidual(c, e, 1), InvertedResidual(c, e, 1), InvertedResidual(c, e, 2)).eval()
    model.load_state_dict(exact_model.state_dict())
    model = model.to(torch.bfloat16)
    x = torch.randn(1, c, 20, 20).to(torch.bfloat16)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert compiled.report.fallback_ops == {}, compiled.report.unsupported
    graph = compiled.ir["graph"]
    # every projection (after a depthwise), and the expansions of the blocks after the first
    assert _pixel_rows(graph) >= 5, _pixel_rows(graph)
    assert "%compact" not in graph
    _assert_as_close_as_eager(compiled, model, exact_model, x)
