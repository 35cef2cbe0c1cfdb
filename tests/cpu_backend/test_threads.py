"""``threads``: big kernels run on the libgomp team; one thread calls the bodies directly."""

from __future__ import annotations

import torch

from tests.cpu_backend.conftest import compile_cpu


class Big(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(x) * x
        return torch.softmax(y, -1) + y.mean(0)


def test_threads_option() -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 257)
    one = compile_cpu(Big(), (x,), threads=1)
    two = compile_cpu(Big(), (x,), threads=2)
    assert "GOMP_parallel" not in one.ir["llvm"]
    assert "GOMP_parallel" in two.ir["llvm"]
    assert "loop.parallel" in two.ir["loop"]
    expected = Big()(x)
    torch.testing.assert_close(one(x), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(two(x), expected, rtol=1e-5, atol=1e-6)


def test_flat_kernel_is_split_for_the_team() -> None:
    x = torch.randn(1, 64, 56, 56)
    compiled = compile_cpu(torch.nn.ReLU(), (x,), threads=2)
    assert "loop.parallel %chunk" in compiled.ir["loop"]
    torch.testing.assert_close(compiled(x), torch.relu(x))
