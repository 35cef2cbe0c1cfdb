"""A bf16 convolution's weight, the A of its GEMM, is stored for the AMX kernel at a row stride
of an odd number of 64-byte lines (``amx.tile_row_stride``: 16 rows of a tile load then fall in
16 of L1's sets, not 2), and for the AVX512-BF16 kernel at its rows' own length.  The rule is
checked on every host; the convolutions run on hosts with a bf16 GEMM kernel, against eager
under autocast, with the stride read from the loop IR.  (The int8 kernel's workspace rows:
``tests/cpu_kernels/test_gemm_int8_amx.py``.)"""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.kernels import amx

KERNEL = amx.host_bf16_kernel()


@pytest.mark.parametrize("row, stride", [(2048, 2112), (6144, 6208), (4096, 4160), (256, 320), (1152, 1216),
                                         (192, 192), (576, 576), (320, 320), (128, 128), (64, 64), (784, 784)])
def test_the_stride_is_an_odd_number_of_lines(row: int, stride: int) -> None:
    """Bytes: an even number of lines, 4 or more, gets one line more; odd numbers of lines, 2
    lines (K = 64 in bf16 measured no faster) and rows of part of a line keep theirs."""
    assert amx.tile_row_stride(row) == stride


class ConvAddRelu(nn.Module):
    def __init__(self, cin: int, cout: int, k: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2)

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x) + r)


# (input channels, kernel size): K = cin * k * k and the row of A it is stored in
CASES = [(1024, 1), (64, 3), (28, 3), (30, 3), (64, 1), (160, 1)]


@pytest.mark.skipif(KERNEL is None, reason="this host has neither AMX-BF16 nor AVX512-BF16")
@pytest.mark.parametrize("cin, k", CASES, ids=[f"cin{c}-k{k}" for c, k in CASES])
def test_convolution_weight_rows_and_values(cin: int, k: int) -> None:
    torch.manual_seed(cin + k)
    model = ConvAddRelu(cin, 40, k).eval()
    x, r = torch.randn(2, cin, 11, 13), torch.randn(2, 40, 11, 13)
    with torch.no_grad():
        compiled = ziggurat.compile(model, (x, r), backend="cpu", precision="bf16")
        out = compiled(x, r)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            expected = model(x, r)
    scale = expected.float().abs().max().item()
    torch.testing.assert_close(out.float(), expected.float(), rtol=2e-2, atol=2e-2 * scale)

    gemms = [line for line in compiled.ir["loop"].splitlines() if "loop.gemm" in line and "_rows :" in line]
    assert len(gemms) == 1, gemms  # the weight is the GEMM's A
    depth = int(re.search(r"\bk = (\d+)", gemms[0]).group(1))  # type: ignore[union-attr]
    lda = int(re.search(r"\blda = (\d+)", gemms[0]).group(1))  # type: ignore[union-attr]
    row = -(-depth // 32) * 32
    assert depth == cin * k * k
    assert lda == (amx.tile_row_stride(2 * row) // 2 if KERNEL == "amx" else row), gemms[0]
