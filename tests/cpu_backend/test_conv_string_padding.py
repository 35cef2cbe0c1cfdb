"""``conv2d`` with a string padding (``padding="valid"`` / ``"same"``, the ``aten::conv2d.padding``
overload) is rewritten to the integer-padding ``conv2d`` by ``torch-canonicalize``, so it fuses
its post-ops and runs on the native kernels in float32 and in bf16.  Before, a bf16 one ran
torch's oneDNN convolution, which on an AMX host gives NaN where the float32
convolution of the same values gives inf (fuzz seed 123, ``tests/fuzz/repros/cpu_bf16_conv_string_padding_torch_kernel.json``).
A ``"same"`` that pads one side more than the other stays the string overload."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.kernels import amx


class ConvRelu(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: tuple[int, int], padding: str,
                 stride: int = 1, dilation: tuple[int, int] = (1, 1)) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


CASES = {
    "same-3x3": (ConvRelu, (5, 7, (3, 3), "same")),
    "same-dilated": (ConvRelu, (5, 7, (3, 5), "same", 1, (2, 1))),
    "valid-strided": (ConvRelu, (5, 7, (3, 2), "valid", 3, (1, 2))),
}


def _build(name: str) -> nn.Module:
    cls, args = CASES[name]
    torch.manual_seed(len(name))
    return cls(*args).eval()


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_fuses_and_matches_eager(name: str) -> None:
    model = _build(name)
    x = torch.randn(2, 5, 13, 17)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    assert "conv2d.padding" not in compiled.ir["graph"]
    assert "fused.conv2d" in compiled.ir["graph"]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(amx.host_bf16_kernel() is None, reason="this host has neither AMX-BF16 nor AVX512-BF16")
@pytest.mark.parametrize("name", sorted(CASES))
def test_bf16_runs_natively_against_eager_autocast(name: str) -> None:
    model = _build(name)
    x = torch.randn(2, 5, 13, 17)
    compiled = ziggurat.compile(model, (x,), backend="cpu", precision="bf16")
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    assert "bf16_kernel" in compiled.ir["loop"]  # on the bf16 GEMM kernels, not widened to float32
    with torch.no_grad():
        out = compiled(x)
        exact = model(x.bfloat16().float())  # float32 of the bf16 inputs: the bf16 weights differ
        with torch.autocast("cpu", dtype=torch.bfloat16):
            expected = model(x)
    scale = exact.abs().max().item()
    assert out.dtype == torch.float32  # the model's dtype
    torch.testing.assert_close(out.float(), expected.float(), rtol=2e-2, atol=2e-2 * scale)


def test_asymmetric_same_stays_and_matches_eager() -> None:
    """A 2x4 kernel's "same" pads 0/1 rows and 1/2 columns: not an integer padding of conv2d."""
    torch.manual_seed(0)
    model = ConvRelu(3, 4, (2, 4), "same").eval()
    x = torch.randn(1, 3, 9, 10)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert "torch.aten.conv2d.padding" in compiled.ir["graph"]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
