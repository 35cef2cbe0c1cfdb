"""The native profiler: ``profile=True`` (or ``ZIGGURAT_PROFILE=1``) times every kernel and GEMM."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import ziggurat
from tests.cpu_backend.conftest import compile_cpu
from ziggurat.backends.cpu.profile import profile, profiling_requested


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), -1)


def test_profile_table_lists_gemms_and_kernels() -> None:
    torch.manual_seed(0)
    model, x = Block().eval(), torch.randn(16, 64)
    compiled = compile_cpu(model, (x,), threads=1, profile=True)
    assert "readcyclecounter" in compiled.ir["llvm"]
    assert "profiling" in compiled.report.stats
    for _ in range(3):
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-6)
    table = profile(compiled)
    assert table.runs == 3
    gemms = [r for r in table.rows if r.entry.kind == "gemm"]
    kernels = [r for r in table.rows if r.entry.kind == "kernel"]
    assert len(gemms) == 2 and all(r.calls == 3 and r.seconds > 0 for r in gemms)
    assert {r.entry.flops for r in gemms} == {2 * 16 * 64 * 128, 2 * 16 * 128 * 32}
    assert kernels and "softmax" in kernels[0].entry.origins
    assert table.total_seconds >= sum(r.seconds for r in gemms + kernels) > 0
    text = table.format()
    assert "GFLOP/s" in text and "gemm linear" in text
    compiled.executable.profile(reset=True)
    assert profile(compiled).runs == 0


def test_profiling_off_by_default_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZIGGURAT_PROFILE", raising=False)
    assert not profiling_requested({})
    monkeypatch.setenv("ZIGGURAT_PROFILE", "1")
    assert profiling_requested({})
    assert not profiling_requested({"profile": False})
    monkeypatch.delenv("ZIGGURAT_PROFILE")
    compiled = compile_cpu(torch.nn.ReLU(), (torch.randn(4, 8),), threads=1)
    assert "readcyclecounter" not in compiled.ir["llvm"]
    with pytest.raises(RuntimeError, match="without profiling"):
        compiled.executable.profile()


def test_profiled_module_saves_and_loads(tmp_path: Path) -> None:
    model, x = Block().eval(), torch.randn(16, 64)
    compiled = compile_cpu(model, (x,), threads=1, profile=True)
    path = tmp_path / "m.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    torch.testing.assert_close(loaded(x), model(x), rtol=1e-5, atol=1e-6)
    assert profile(loaded).runs == 1
    assert [r.entry for r in profile(loaded).rows] == [r.entry for r in profile(compiled).rows]
