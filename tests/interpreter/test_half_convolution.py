"""The reference interpreter's bf16/float16 convolutions run as float32 convolutions rounded once
(``ir/interpreter/half_convolution.py``): torch 2.13's oneDNN AMX kernels give garbage on some
16-bit convolutions (fuzz seed 95 program 132, seed 99 program 4), which ``backend="reference"``
inherited.  On a host whose oneDNN has no AMX the cases pass either way."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from ziggurat.ir.interpreter.half_convolution import convolve

#: (input shape, weight shape, conv2d keywords): the shapes oneDNN's AMX kernels got wrong
CASES = {
    "grouped-stride3": ((5, 2, 31, 3), (10, 1, 5, 3), {"stride": 3, "groups": 2}),
    "width1-stride1x3": ((2, 4, 6, 1), (5, 4, 1, 3), {"stride": (1, 3), "padding": (0, 1)}),
}


class Conv(torch.nn.Module):
    def __init__(self, weight_shape: tuple[int, ...], keywords: dict[str, object], relu: bool) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.weight = torch.nn.Parameter(torch.randn(weight_shape, generator=g), requires_grad=False)
        self.bias = torch.nn.Parameter(torch.randn(weight_shape[0], generator=g), requires_grad=False)
        self.keywords, self.relu = keywords, relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.weight, self.bias, **self.keywords)  # pyright: ignore[reportArgumentType, reportCallIssue]
        return torch.relu(y) if self.relu else y


@pytest.mark.parametrize("relu", [False, True], ids=["conv", "conv-relu"])
@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("case", list(CASES))
def test_reference_backend_16_bit_convolution_is_the_exact_one_rounded(case: str, precision: str, relu: bool) -> None:
    x_shape, w_shape, keywords = CASES[case]
    model = Conv(w_shape, keywords, relu).eval()
    x = torch.randn(x_shape, generator=torch.Generator().manual_seed(2))
    compiled = ziggurat.compile(model, (x,), backend="reference", precision=precision)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    exact = F.conv2d(x.to(dtype).double(), model.weight.to(dtype).double(), model.bias.to(dtype).double(),
                     **keywords)  # pyright: ignore[reportArgumentType, reportCallIssue]
    if relu:
        exact = torch.relu(exact)
    got = compiled(x).double()
    ulp = 2.0 ** -7 if dtype == torch.bfloat16 else 2.0 ** -10
    assert bool(torch.isfinite(got).all())
    assert float(((got - exact).abs() / exact.abs().clamp_min(1e-3)).max()) <= ulp


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_convolve_widens_16_bit_tensors_and_rounds_once(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(3)
    x, w, b = (torch.randn(s, generator=g).to(dtype) for s in ((2, 3, 7, 5), (4, 3, 3, 3), (4,)))
    got = convolve(F.conv2d, (x, w, b), {"padding": 1})
    want = F.conv2d(x.float(), w.float(), b.float(), padding=1).to(dtype)
    assert got.dtype == dtype and torch.equal(got, want)


def test_convolve_keeps_torch_kernel_for_a_non_finite_weight() -> None:
    """Eager's 16-bit kernel skips the padding's taps, a float32 one makes 0 * inf = NaN there:
    with inf in the weight the kernel stays torch's own (whatever this host's oneDNN gives)."""
    x = torch.ones(1, 1, 1, 3, dtype=torch.bfloat16)
    w = torch.tensor([[[[float("inf")], [1.0], [1.0]]]], dtype=torch.bfloat16)
    got = convolve(F.conv2d, (x, w), {"padding": (1, 0)})
    want = F.conv2d(x, w, padding=(1, 0))
    assert torch.equal(got.float().nan_to_num(1.0), want.float().nan_to_num(1.0))


def test_convolve_leaves_float32_and_mixed_calls_to_torch() -> None:
    x, w = torch.randn(1, 2, 4, 4), torch.randn(3, 2, 3, 3)
    assert torch.equal(convolve(F.conv2d, (x, w), {}), F.conv2d(x, w))
