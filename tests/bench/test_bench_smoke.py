"""The benchmark harness end to end, in-process, on the smoke set.

These tests check the harness itself; they pass whether or not the Ziggurat CPU backend
exists (a missing backend must show up as an n/a column). Backend behaviour the harness must
handle (failing, wrong, mutating, working) is simulated by patching `ziggurat.compile`.
"""

from __future__ import annotations

import gc
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.bench.run import main
from ziggurat.bench.table import MISMATCH_FLAG

COLUMN_TITLES = ("model", "backend", "median ms", "min ms", "IQR %", "x eager", "x ind", "x ind-frz", "compile s", "peak MB", "max rel err", "flags")


def run_bench(argv: list[str], tmp_path: Path) -> tuple[str, dict[str, Any]]:
    out, log = io.StringIO(), io.StringIO()
    json_path = tmp_path / "bench.json"
    if "--threads" not in argv:
        argv = argv + ["--threads", "1"]  # a shared 2-core machine: keep the tests quick
    # The harness calls gc.collect() before each build and each timed phase (8 times in a smoke
    # run); in a pytest worker that has run hundreds of tests each walks that whole heap, 1-2 s.
    # Frozen, the objects made before this run are left out, as in `bench/run.py`'s own process.
    gc.freeze()
    try:
        assert main(argv + ["--json", str(json_path)], out=out, log=log) == 0
    finally:
        gc.unfreeze()
    return out.getvalue(), json.loads(json_path.read_text())


def rows_by_key(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["model"], r["backend"]): r for r in report["results"]}


def table_line(table: str, model: str, backend: str) -> str:
    matches = [line for line in table.splitlines() if line.split()[:2] == [model, backend]]
    assert len(matches) == 1, f"expected one table row for {model}/{backend}:\n{table}"
    return matches[0]


def patch_ziggurat(monkeypatch: pytest.MonkeyPatch, fake: Callable[..., Any]) -> None:
    monkeypatch.setattr(ziggurat, "compile", fake, raising=False)


def test_smoke_mode_table_and_json(tmp_path: Path) -> None:
    table, report = run_bench(["--smoke", "--threads", "1"], tmp_path)

    meta = report["meta"]
    for key in ("date", "cpu_model", "logical_cores", "torch_version", "threads"):
        assert meta[key] not in (None, ""), key
    assert meta["threads"] == 1 and meta["torch_version"] == torch.__version__
    assert report["config"]["smoke"] is True and report["config"]["rounds"] == 3
    assert report["config"]["backends"] == ["eager", "ziggurat"]
    assert report["config"]["models"] == ["mlp-b1", "conv-silu-tiny"]
    for word in ("CPU:", meta["cpu_model"], "torch", "threads 1"):
        assert word in table
    header = next(line for line in table.splitlines() if line.startswith("model"))
    for title in COLUMN_TITLES:
        assert title in header

    rows = rows_by_key(report)
    assert set(rows) == {(m, b) for m in ("mlp-b1", "conv-silu-tiny") for b in ("eager", "ziggurat")}
    for model in ("mlp-b1", "conv-silu-tiny"):
        eager = rows[(model, "eager")]
        assert eager["status"] == "ok"
        assert len(eager["samples_ms"]) == 3 and all(s > 0 for s in eager["samples_ms"])
        assert 0 < eager["min_ms"] <= eager["median_ms"] < 10_000
        assert eager["max_rel_error"] is not None and eager["max_rel_error"] <= 1e-6
        assert eager["speedup_vs_eager"] == pytest.approx(1.0)
        assert f"{eager['median_ms']:.3f}" in table_line(table, model, "eager")

        zig = rows[(model, "ziggurat")]
        line = table_line(table, model, "ziggurat")
        if zig["status"] == "ok":  # the CPU backend exists: its error column must be real
            assert isinstance(zig["max_rel_error"], float) and zig["median_ms"] > 0
            assert (MISMATCH_FLAG in line) == (zig["max_rel_error"] > 1e-4)
        else:
            assert zig["status"] == "n/a" and zig["error"] and "\n" not in zig["error"]
            assert f"n/a: {zig['error']}" in line

    geo = {g["backend"]: g for g in report["geomean"]}
    assert geo["eager"]["vs_eager"] == pytest.approx(1.0) and geo["eager"]["models"] == 2
    assert "geometric mean" in table


class Scaled(nn.Module):
    """A 'compiled' model that is slightly wrong."""

    def __init__(self, model: nn.Module, factor: float) -> None:
        super().__init__()
        self.model, self.factor = model, factor

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        return self.model(*inputs) * self.factor


def test_failing_backend_becomes_na_with_first_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(model: nn.Module, inputs: tuple[torch.Tensor, ...], backend: str, threads: int,
             precision: str = "fp32") -> nn.Module:
        raise ValueError("unsupported op aten::foo\nsecond line of the message")

    patch_ziggurat(monkeypatch, fake)
    table, report = run_bench(["--smoke", "--models", "mlp-b1", "--rounds", "2"], tmp_path)
    zig = rows_by_key(report)[("mlp-b1", "ziggurat")]
    assert zig["status"] == "n/a" and zig["error"] == "ValueError: unsupported op aten::foo"
    assert zig["median_ms"] is None and zig["speedup_vs_eager"] is None
    assert "n/a: ValueError: unsupported op aten::foo" in table_line(table, "mlp-b1", "ziggurat")
    assert "second line" not in table
    assert rows_by_key(report)[("mlp-b1", "eager")]["status"] == "ok"


def test_correct_backend_gets_speedups_and_call_signature(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def fake(model: nn.Module, inputs: tuple[torch.Tensor, ...], backend: str, threads: int,
             precision: str = "fp32") -> nn.Module:
        calls.append({"inputs": inputs, "backend": backend, "threads": threads, "precision": precision,
                      "grad": torch.is_grad_enabled()})
        return model

    patch_ziggurat(monkeypatch, fake)
    table, report = run_bench(["--smoke", "--threads", "1", "--rounds", "4"], tmp_path)
    assert [c["backend"] for c in calls] == ["cpu", "cpu"] and all(c["threads"] == 1 for c in calls)
    assert all(c["precision"] == "fp32" for c in calls)
    assert not any(c["grad"] for c in calls), "compilation must happen under torch.no_grad()"
    assert all(isinstance(c["inputs"], tuple) for c in calls)
    rows = rows_by_key(report)
    for model in ("mlp-b1", "conv-silu-tiny"):
        zig = rows[(model, "ziggurat")]
        assert zig["status"] == "ok" and len(zig["samples_ms"]) == 4
        assert zig["max_rel_error"] == 0.0 and not zig["mismatch"]
        assert zig["speedup_vs_eager"] == pytest.approx(rows[(model, "eager")]["median_ms"] / zig["median_ms"])
        assert zig["setup_s"] > 0 and zig["inner"] >= 1
        assert MISMATCH_FLAG not in table_line(table, model, "ziggurat")
    geo = {g["backend"]: g for g in report["geomean"]}["ziggurat"]
    speedups = [rows[(m, "ziggurat")]["speedup_vs_eager"] for m in ("mlp-b1", "conv-silu-tiny")]
    assert geo["models"] == 2 and geo["vs_eager"] == pytest.approx(math.sqrt(speedups[0] * speedups[1]))


def test_wrong_backend_is_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    patch_ziggurat(monkeypatch, lambda model, inputs, backend, threads, precision="fp32": Scaled(model, 1.001))
    table, report = run_bench(["--smoke", "--models", "mlp-b1", "--rounds", "2"], tmp_path)
    zig = rows_by_key(report)[("mlp-b1", "ziggurat")]
    assert zig["status"] == "ok" and zig["mismatch"] and zig["over_tolerance"]
    assert zig["max_rel_error"] == pytest.approx(1e-3, rel=1e-3)
    assert MISMATCH_FLAG in table_line(table, "mlp-b1", "ziggurat")


def test_backend_failing_after_first_call_loses_its_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Flaky(nn.Module):
        def __init__(self, model: nn.Module) -> None:
            super().__init__()
            self.model, self.calls = model, 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.calls += 1
            if self.calls > 1:
                raise RuntimeError("segfault-ish")
            return self.model(x)

    patch_ziggurat(monkeypatch, lambda model, inputs, backend, threads, precision="fp32": Flaky(model))
    table, report = run_bench(["--smoke", "--models", "mlp-b1", "--rounds", "2"], tmp_path)
    zig = rows_by_key(report)[("mlp-b1", "ziggurat")]
    assert zig["status"] == "n/a" and zig["error"] == "failed while timing: RuntimeError: segfault-ish"
    assert rows_by_key(report)[("mlp-b1", "eager")]["status"] == "ok"


def test_backend_mutating_inputs_is_rejected_and_inputs_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Mutating(nn.Module):
        def __init__(self, model: nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.model(x.mul_(2.0))

    patch_ziggurat(monkeypatch, lambda model, inputs, backend, threads, precision="fp32": Mutating(model))
    _, report = run_bench(["--smoke", "--models", "mlp-b1", "--backends", "ziggurat,eager", "--rounds", "2"], tmp_path)
    rows = rows_by_key(report)
    assert rows[("mlp-b1", "ziggurat")]["status"] == "n/a"
    assert "modified its input" in rows[("mlp-b1", "ziggurat")]["error"]
    # eager ran after the mutation on restored inputs, so it still matches the reference.
    assert rows[("mlp-b1", "eager")]["status"] == "ok" and rows[("mlp-b1", "eager")]["max_rel_error"] <= 1e-6


def test_unknown_backend_or_model_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        main(["--smoke", "--backends", "eager,tvm"], out=io.StringIO(), log=io.StringIO())
    with pytest.raises(SystemExit):
        main(["--models", "alexnet"], out=io.StringIO(), log=io.StringIO())
