"""A GEMM whose batch folds into its rows (``[b, m, k] @ [k, n]``, a linear over ``[b, m, k]``)
with a fused ``+ other`` that broadcasts (``[1, 1, 1]``, ``[1, m, 1]``, ``[n]``...).

The epilogue read ``other`` as a ``[b*m, n]`` matrix with its own strides instead of
broadcasting it to the output first: an ``other`` of one element was read past its end
(garbage such as -9.7e32), a ``[1, m, 1]`` one with the wrong rows (fuzz program
s20261201_g259: ``F.leaky_relu(x1 @ x2 + x3, 0.2)``)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

OTHER_SHAPES = [(1, 1, 1), (1, 1), (1,), (1, 5, 1), (3, 1, 1), (3, 5, 1), (1, 1, 7), (7,), (5, 7), (3, 5, 7)]


@pytest.mark.parametrize("other_shape", OTHER_SHAPES, ids=str)
def test_matmul_fused_broadcast_add(isa: str, other_shape: tuple[int, ...]) -> None:
    g = torch.Generator().manual_seed(len(other_shape))
    a, b = torch.randn(3, 5, 31, generator=g), torch.randn(31, 7, generator=g)
    o = torch.randn(*other_shape, generator=g)

    def fn(x: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return F.leaky_relu(x @ w + y, 0.2), (x @ w - y).relu(), x @ w[:, :1] + y[..., :1]

    compiled = compile_cpu(OpModule(fn), (a, b, o), isa=isa, frontend="torchscript")
    for got, expected in zip(compiled(a, b, o), fn(a, b, o), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("other_shape", [(1, 1, 1), (1, 5, 1), (6,), (2, 1, 6)], ids=str)
def test_linear_fused_broadcast_add(other_shape: tuple[int, ...]) -> None:
    g = torch.Generator().manual_seed(3)
    linear = torch.nn.Linear(9, 6).eval()
    x, o = torch.randn(2, 5, 9, generator=g), torch.randn(*other_shape, generator=g)

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = linear

        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(self.linear(x) + y)

    model = Model().eval()
    compiled = compile_cpu(model, (x, o), frontend="torchscript")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, o), model(x, o), rtol=1e-5, atol=1e-5)


CONV_OTHER_SHAPES = [(3, 1, 1, 7), (1, 2, 1, 1), (2, 1, 1), (1,), (7,), (3, 2, 2, 7), (1, 1, 2, 1)]


@pytest.mark.parametrize("post", ["sub_leaky_relu", "add_relu"])
@pytest.mark.parametrize("other_shape", CONV_OTHER_SHAPES, ids=str)
@pytest.mark.parametrize("weight_input", [False, True], ids=["constant_weight", "weight_input"])
def test_conv_fused_broadcast_other(other_shape: tuple[int, ...], weight_input: bool, post: str) -> None:
    """Fuzz program s4242_g138: F.leaky_relu(F.conv2d(x, w, b, stride=(2, 1), padding=(1, 5),
    dilation=(2, 2)) - c, 0.2) with c of [3, 1, 1, 7]; the conv GEMM's epilogue permuted and
    reshaped c as it stood instead of broadcasting it to the output first."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 7, 1, 5, generator=g)
    w = torch.randn(2, 7, 1, 5, generator=g)
    b = torch.randn(2, generator=g)
    c = torch.randn(*other_shape, generator=g)

    def epilogue(y: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(y - c, 0.2) if post == "sub_leaky_relu" else torch.relu(y + c)

    def conv(t: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return epilogue(F.conv2d(t, weight, b, stride=(2, 1), padding=(1, 5), dilation=(2, 2)))

    if weight_input:
        model, inputs = OpModule(conv), (x, w)
    else:
        model, inputs = OpModule(lambda t: conv(t, w)), (x,)
    compiled = compile_cpu(model, inputs, frontend="torchscript")
    assert any("conv" in k for k in compiled.report.native_ops), compiled.report.native_ops
    torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-5, atol=1e-4)
