"""``threads``: big kernels run on the libgomp team; one thread calls the bodies directly; without
``threads=`` each call follows ``torch.get_num_threads()``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from tests.cpu_backend.conftest import compile_cpu
from ziggurat.backends.cpu.threads import default_threads


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


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(257, 515)
        self.fc2 = torch.nn.Linear(515, 131)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return Big()(self.fc2(torch.nn.functional.gelu(self.fc1(x))))


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _calls_follow_torch(compiled: Any, model: torch.nn.Module, x: torch.Tensor) -> None:
    expected = model(x)
    for n in (1, 2, 1):
        with torch_threads(n):
            torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=1e-5)
            assert compiled.executable.threads_used == n


@pytest.mark.skipif(default_threads() < 2, reason="needs two cores")
def test_default_threads_follow_torch_at_call_time(tmp_path: Path) -> None:
    """Without ``threads=``, each call runs on ``torch.get_num_threads()`` threads as of that
    call (the team the kernels saw, read back from the native code), without recompiling;
    a saved and loaded module does the same."""
    torch.manual_seed(0)
    model = Mlp().eval()
    x = torch.randn(67, 257)
    with torch_threads(1):  # the count at compile time does not fix it
        compiled = compile_cpu(model, (x,))
    assert "GOMP_parallel" in compiled.ir["llvm"]
    _calls_follow_torch(compiled, model, x)
    path = tmp_path / "mlp.zig"
    compiled.save(path)
    _calls_follow_torch(ziggurat.load(path), model, x)


@pytest.mark.skipif(default_threads() < 2, reason="needs two cores")
def test_explicit_threads_win_over_torch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = Mlp().eval()
    x = torch.randn(67, 257)
    two = compile_cpu(model, (x,), threads=2)
    path = tmp_path / "mlp.zig"
    two.save(path)
    for compiled in (two, ziggurat.load(path)):
        with torch_threads(1):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
            assert compiled.executable.threads_used == 2
    one = compile_cpu(model, (x,), threads=1)
    with torch_threads(2):
        torch.testing.assert_close(one(x), model(x), rtol=1e-4, atol=1e-5)
        assert one.executable.threads_used is None  # no parallel region at all
