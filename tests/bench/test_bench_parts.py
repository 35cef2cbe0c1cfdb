"""Unit tests of the harness pieces: error metric, timing statistics, speedups, table, memory."""

from __future__ import annotations

import math

import pytest
import torch

from ziggurat.bench.accuracy import flatten_tensors, max_relative_error
from ziggurat.bench.backends import error_line
from ziggurat.bench.memory import PeakRssDelta, rss_bytes
from ziggurat.bench.results import STATUS_NA, STATUS_OK, BackendResult, fill_speedups, geomean, summarize
from ziggurat.bench.table import MISMATCH_FLAG, TOLERANCE_FLAG, render_row, render_table
from ziggurat.bench.timing import Timing, choose_inner, measure_interleaved


def test_max_relative_error_is_max_abs_diff_over_max_abs_reference() -> None:
    b = torch.tensor([1.0, -4.0, 2.0])
    a = torch.tensor([1.1, -4.0, 2.0])
    assert max_relative_error([a], [b]) == pytest.approx(0.1 / 4.0)
    assert max_relative_error([b.clone()], [b]) == 0.0
    # over several outputs: the largest difference over the largest reference magnitude
    assert max_relative_error([a, b * 10], [b, b * 10]) == pytest.approx(0.1 / 40.0)


def test_max_relative_error_structural_and_nonfinite_mismatches_are_infinite() -> None:
    b = torch.tensor([0.0, float("-inf"), 1.0])
    assert max_relative_error([b.clone()], [b]) == 0.0
    assert max_relative_error([torch.tensor([0.0, -1e30, 1.0])], [b]) == math.inf
    assert max_relative_error([torch.tensor([0.0, float("inf"), 1.0])], [b]) == math.inf
    assert max_relative_error([torch.tensor([float("nan"), float("-inf"), 1.0])], [b]) == math.inf
    assert max_relative_error([torch.zeros(2)], [torch.zeros(3)]) == math.inf
    assert max_relative_error([torch.zeros(2)], [torch.zeros(2), torch.zeros(2)]) == math.inf
    assert max_relative_error([torch.ones(2)], [torch.zeros(2)]) == math.inf


def test_flatten_tensors_handles_nested_outputs() -> None:
    t1, t2, t3 = torch.zeros(1), torch.ones(1), torch.full((1,), 2.0)
    assert flatten_tensors((t1, [t2, {"b": t3}])) == [t1, t2, t3]
    with pytest.raises(TypeError):
        flatten_tensors("text")


def test_error_line_keeps_type_and_first_line_only() -> None:
    assert error_line(ValueError("\n  bad op\nmore")) == "ValueError: bad op"
    assert error_line(KeyError()) == "KeyError"
    assert len(error_line(RuntimeError("x" * 500))) == 200


def test_timing_statistics() -> None:
    t = Timing(samples_ms=[4.0, 1.0, 3.0, 2.0])
    assert t.median_ms == 2.5
    assert t.quantile_ms(0.0) == 1.0 and t.quantile_ms(1.0) == 4.0 and t.quantile_ms(0.5) == 2.5
    assert Timing().median_ms is None
    assert choose_inner([0.1, 0.2, 0.1], target_ms=5.0) == 50
    assert choose_inner([30.0], target_ms=5.0) == 1
    assert choose_inner([], target_ms=5.0) == 1


def test_measure_interleaved_runs_in_round_robin_order_and_drops_failures() -> None:
    order: list[str] = []

    def make(name: str, fail_after: int | None = None):  # noqa: ANN202 - test helper
        def runner(x: torch.Tensor) -> torch.Tensor:
            order.append(name)
            if fail_after is not None and order.count(name) > fail_after:
                raise RuntimeError("boom")
            return x

        return runner

    timings = measure_interleaved({"a": make("a"), "b": make("b"), "c": make("c", fail_after=2)}, (torch.zeros(1),), warmup=2, rounds=3, target_ms=1e-9)
    # 2 warm-up rounds then 3 timed rounds, one call each (inner = 1 with a tiny target): a b c a b c a b c a b a b
    assert order == ["a", "b", "c"] * 2 + ["a", "b", "c"] + ["a", "b"] * 2
    assert len(timings["a"].warmup_ms) == 2 and len(timings["a"].samples_ms) == 3
    assert timings["c"].error == "failed while timing: RuntimeError: boom" and timings["c"].samples_ms == []


def _row(model: str, backend: str, median: float | None, status: str = STATUS_OK) -> BackendResult:
    return BackendResult(model=model, backend=backend, status=status, median_ms=median)


def test_speedups_and_geomean() -> None:
    rows = [
        _row("m1", "eager", 10.0),
        _row("m1", "inductor", 5.0),
        _row("m1", "ziggurat", 2.0),
        _row("m2", "eager", 8.0),
        _row("m2", "inductor", None, STATUS_NA),
        _row("m2", "ziggurat", 1.0),
    ]
    fill_speedups(rows)
    z1, z2 = rows[2], rows[5]
    assert z1.speedup_vs_eager == 5.0 and z1.speedup_vs_inductor == 2.5 and z1.speedup_vs_inductor_freeze is None
    assert z2.speedup_vs_eager == 8.0 and z2.speedup_vs_inductor is None
    assert rows[4].speedup_vs_eager is None
    summary = {s.backend: s for s in summarize(rows, ["eager", "inductor", "ziggurat"])}
    assert summary["ziggurat"].vs_eager == pytest.approx(math.sqrt(40.0)) and summary["ziggurat"].models == 2
    assert summary["ziggurat"].vs_inductor == pytest.approx(2.5)
    assert summary["inductor"].models == 1 and summary["inductor"].vs_eager == pytest.approx(2.0)
    assert geomean([]) is None and geomean([2.0, 8.0]) == pytest.approx(4.0)


def test_table_flags_mismatches_and_shows_na_errors() -> None:
    good, close, bad = _row("m", "eager", 1.0), _row("m", "inductor", 1.0), _row("m", "ziggurat", 1.0)
    good.set_error(0.0, 1e-4)
    close.set_error(5e-5, 1e-5)
    bad.set_error(float("inf"), 1e-4)
    assert not good.mismatch and not close.mismatch and close.over_tolerance and bad.mismatch and bad.over_tolerance
    assert MISMATCH_FLAG not in render_row(good) and TOLERANCE_FLAG not in render_row(good)
    assert TOLERANCE_FLAG in render_row(close) and MISMATCH_FLAG not in render_row(close)
    assert MISMATCH_FLAG in render_row(bad) and "inf" in render_row(bad)
    na = BackendResult(model="m", backend="ziggurat", status=STATUS_NA, error="RuntimeError: nope")
    assert render_row(na).split()[2] == "n/a" and render_row(na).endswith("n/a: RuntimeError: nope")
    table = render_table([good, na], summarize([good, na], ["eager", "ziggurat"]))
    assert "geometric mean" in table and table.count("\n") >= 6


def test_peak_rss_delta_sees_an_allocation() -> None:
    assert rss_bytes() is not None
    with PeakRssDelta() as mem:
        block = torch.ones(64 * 2**20 // 4)  # 64 MiB, touched
        del block
    if mem.delta_bytes is None:
        pytest.skip("this kernel does not allow resetting VmHWM")
    assert mem.delta_bytes >= 48 * 2**20


def test_low_precision_bar_follows_eager_autocast() -> None:
    """--precision bf16: a column is flagged past the precision's tolerance or twice eager
    autocast's own error against fp32, whichever is larger."""
    from ziggurat.bench.run import _precision_bar  # pyright: ignore[reportPrivateUsage]

    def rows(eager: float, ours: float) -> list[BackendResult]:
        out = [BackendResult(model="m", backend="eager", status=STATUS_OK),
               BackendResult(model="m", backend="ziggurat", status=STATUS_OK)]
        out[0].set_error(eager, 1e-4)
        out[1].set_error(ours, 1e-4)
        _precision_bar(out, 5e-2)
        return out

    deep = rows(0.15, 0.2)  # a deep bf16 net: eager itself is 0.15 from fp32
    assert not deep[0].mismatch and not deep[1].mismatch and deep[1].tolerance == pytest.approx(0.3)
    assert rows(0.15, 0.4)[1].over_tolerance
    shallow = rows(1e-3, 4e-2)  # the precision's own tolerance when eager is close
    assert not shallow[1].over_tolerance and rows(1e-3, 6e-2)[1].over_tolerance


def test_dynamic_bench_flags_int8_errors_against_inductors() -> None:
    """``bench/dynamic_shapes.py --precision int8``: a quantized ResNet's 5-9 % (quantum moves,
    Inductor's too) is not flagged; twice Inductor's distance is; fp32 keeps its 1e-4."""
    from ziggurat.bench.dynamic_shapes import DYNAMIC, INDUCTOR_DYN, INT8_MISMATCH, STATIC, ShapeRow, _errs  # pyright: ignore[reportPrivateUsage]

    row = ShapeRow("resnet50", [8, 3, 224, 224], max_rel_err={INDUCTOR_DYN: 0.086, STATIC: 0.069, DYNAMIC: 0.18})
    assert _errs(row, INT8_MISMATCH, int8=True) == "8.6e-02 / 6.9e-02 / 1.8e-01 MISMATCH"
    assert _errs(row, 1e-4, int8=False).count("MISMATCH") == 3
