"""bf16 depthwise convolutions on the float32 depthwise kernel reading and writing bf16
(``ConvSpec.in_bf16``/``out_bf16``), and 1x1 convolutions reading a dense channels-last bf16
image's rows in place.

``widen-half-floats`` used to widen a bf16 depthwise convolution whole: a kernel copied its
bf16 input to float32, and another rounded its float32 result to bf16, which the next 1x1
convolution then copied again as its rows.  MobileNetV2 bf16 had 56 kernels, 34 of them such
copies (0.47 of 2.6 ms); it has 5 now.  The arithmetic is the same: eager's bf16 depthwise
convolution sums the exact products in float32 and rounds once, so the results are eager's
bits (where the native kernel does not apply, the scalar ISA, the widened float32 convolution
runs, also eager's bits).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.cpu_backend.conftest import WIDEST_ISA, compile_cpu
from tests.support.host import bf16_gemm_kernel

#: (channels, kernel, stride, padding, post-op): vector tails (40 channels on avx512, 20 on both
#: ISAs: 16 + 4 and 8 + 8 + 4 lanes), 5x5 windows, stride 2
CASES = [(32, 3, 1, 1, "relu6"), (40, 3, 2, 1, "none"), (24, 5, 1, 2, "relu"), (16, 3, 1, 0, "hardtanh"),
         (20, 3, 1, 1, "relu6")]


def _block(channels: int, kernel: int, stride: int, padding: int, post: str) -> nn.Module:
    act = {"relu6": nn.ReLU6(), "relu": nn.ReLU(), "none": nn.Identity(), "hardtanh": nn.Hardtanh(-1.5, 2.5)}[post]
    conv = nn.Conv2d(channels, channels, kernel, stride, padding, groups=channels)
    return nn.Sequential(conv, act).eval().to(torch.bfloat16)


@pytest.mark.parametrize("channels,kernel,stride,padding,post", CASES, ids=[f"c{c[0]}k{c[1]}s{c[2]}{c[4]}" for c in CASES])
def test_eagers_bits(channels: int, kernel: int, stride: int, padding: int, post: str, isa: str) -> None:
    torch.manual_seed(channels)
    model = _block(channels, kernel, stride, padding, post)
    x = torch.randn(2, channels, 13, 11).to(torch.bfloat16)
    compiled = compile_cpu(model, (x,), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    with torch.no_grad():
        expected = model(x)
    got = compiled(x)
    assert got.dtype == torch.bfloat16 and torch.equal(got, expected), int((got != expected).sum())
    loop_ir = compiled.ir["loop"]
    if isa in ("avx512", "avx2"):
        assert "in_bf16 = true, out_bf16 = true" in loop_ir
        assert '"extf"' not in loop_ir  # nothing widens the activations


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expansion, 3x3 depthwise, 1x1 projection, residual."""

    def __init__(self, c: int, e: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, e, 1), nn.ReLU6(), nn.Conv2d(e, e, 3, 1, 1, groups=e), nn.ReLU6(),
                                  nn.Conv2d(e, c, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)


@pytest.mark.skipif(bf16_gemm_kernel() is None, reason="no bf16 GEMM kernel here (AMX-BF16 or AVX512-BF16)")
def test_blocks_copy_no_activation() -> None:
    """Two blocks after a channels-last start: every convolution reads its input in place (no
    im2col copy, no cast), so the only kernels left are the residual adds."""
    torch.manual_seed(0)
    model = nn.Sequential(InvertedResidual(16, 64), InvertedResidual(16, 64)).eval().to(torch.bfloat16)
    x = torch.randn(1, 16, 14, 14).to(torch.bfloat16).contiguous(memory_format=torch.channels_last)
    compiled = compile_cpu(model, (x,), isa=WIDEST_ISA)
    loop_ir = compiled.ir["loop"]
    assert "%im2col_rows" not in loop_ir and '"extf"' not in loop_ir, loop_ir
    assert loop_ir.count("in_bf16 = true") == 2
    with torch.no_grad():
        expected = model(x).double()
    got = compiled(x).double()
    # the 1x1 GEMMs sum in another order than eager's: a bf16 rounding apart at most, per step
    assert float((got - expected).abs().max()) <= 0.05 * float(expected.abs().max())


def test_post_ops_that_do_not_commute_run_in_torch_without_the_split() -> None:
    """Without ``widen-half-floats`` (a custom pass list), a depthwise convolution + GELU reaches
    the lowering fused: eager rounds the convolution before the GELU, so the op runs in torch
    with the reason rather than rounding once after the GELU."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16), nn.GELU()).eval().to(torch.bfloat16)
    x = torch.randn(1, 16, 9, 9).to(torch.bfloat16)
    passes = (f"graph-opt,prepack-weights{{isa={WIDEST_ISA}}},convert-fused-to-kernel,kernel-fuse,kernel-layout,"
              "convert-kernel-to-loop")
    compiled = compile_cpu(model, (x,), passes=passes)
    reasons = compiled.report.fallback_ops.get("fused.conv2d", [])
    assert any("do not commute" in r for r in reasons), compiled.report.fallback_ops
    with torch.no_grad():
        assert torch.equal(compiled(x), model(x))
