"""An element-wise reader of a window kernel (softmax, a norm, a pool) is that kernel's
epilogue (``kernel_fuse.elementwise_epilogue``): one kernel, each element computed once, and
eager's numbers, bit for bit where eager rounds the same way (a cast, relu, a comparison)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

Fn = Callable[[torch.Tensor], torch.Tensor]

#: name -> (function, input shape, dtype of the input)
CASES: dict[str, tuple[Fn, tuple[int, ...], torch.dtype]] = {
    "softmax_to_bf16": (lambda x: torch.softmax(x, -1).to(torch.bfloat16), (3, 5, 37), torch.float32),
    "softmax_to_fp16": (lambda x: torch.softmax(x, -1).half(), (2, 129), torch.float32),
    "log_softmax_relu": (lambda x: F.relu(F.log_softmax(x, -1) + 3.0), (4, 23), torch.float32),
    "softmax_dim0_gt": (lambda x: torch.softmax(x, 0) > 0.2, (5, 19), torch.float32),
    "layer_norm_gelu": (lambda x: F.gelu(F.layer_norm(x, (x.shape[-1],))), (6, 33), torch.float32),
    "group_norm_silu": (lambda x: F.silu(F.group_norm(x, 2)), (2, 4, 5, 7), torch.float32),
    "max_pool_sigmoid": (lambda x: torch.sigmoid(F.max_pool2d(x, 3, 2)), (2, 3, 11, 9), torch.float32),
    "avg_pool_to_bf16": (lambda x: F.avg_pool2d(x, 3).to(torch.bfloat16), (1, 4, 12, 10), torch.float32),
    "bf16_softmax_float": (lambda x: torch.softmax(x, -1).float(), (3, 41), torch.bfloat16),
    "softmax_times_sum": (lambda x: torch.softmax(x, -1) * x.sum(), (6, 29), torch.float32),
}
#: outputs that eager computes with another formula (gelu's erf, sigmoid's exp): ulps apart
CLOSE = {"layer_norm_gelu", "group_norm_silu", "max_pool_sigmoid", "log_softmax_relu", "softmax_times_sum"}


def _input(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(math.prod(shape))) * 3
    x.view(-1)[1] = math.inf  # a row of softmax with an infinity: NaN there, as eager's
    x.view(-1)[-2] = -math.inf
    return x.to(dtype)


@pytest.mark.parametrize("name", sorted(CASES))
def test_epilogue_of_a_window_matches_eager(name: str, isa: str) -> None:
    fn, shape, dtype = CASES[name]
    x = _input(shape, dtype)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
    expected = fn(x)
    actual = compiled(x)
    assert actual.dtype == expected.dtype
    if name in CLOSE:
        torch.testing.assert_close(actual, expected, rtol=2e-6, atol=2e-6, equal_nan=True)
    else:
        assert torch.equal(actual.isnan(), expected.isnan())
        assert torch.equal(actual.nan_to_num(), expected.nan_to_num()), f"{name}: {(actual.float() - expected.float()).abs().nan_to_num().max()}"


@pytest.mark.parametrize("name", ["softmax_to_bf16", "bf16_softmax_float", "layer_norm_gelu", "avg_pool_to_bf16",
                                  "log_softmax_relu"])
def test_the_reader_is_no_kernel_of_its_own(name: str) -> None:
    fn, shape, dtype = CASES[name]
    x = _input(shape, dtype)
    kernels = [line for line in compile_cpu(OpModule(fn), (x,)).ir["loop"].splitlines() if "loop.kernel @" in line]
    assert len(kernels) == 1, "\n".join(kernels)
