"""The GEMM micro-benchmark's parts on a tiny shape: it runs, checks its own result, and
reports shares of the FMA peak measured in the same run (whole-run best and interleaved)."""

from __future__ import annotations

import math

from ziggurat.backends.cpu.isa import host_isa
from ziggurat.bench.gemm_bench import PeakProbe, bench_shape, measure_peak


def test_peak_probe_and_measure_peak_are_positive() -> None:
    isa = host_isa()
    probe = PeakProbe(isa, 1)
    assert probe.sample(0.002) > 0
    assert measure_peak(isa, 1, seconds=0.01, trials=3) > 0


def test_bench_shape_tiny_odd_shape() -> None:
    isa = host_isa()
    peak = measure_peak(isa, 1, seconds=0.01, trials=3)
    row = bench_shape(37, 45, 19, 1, isa, peak, budget=0.02)
    assert row.max_abs_err < 1e-3
    for value in (row.ours_gflops, row.torch_gflops, row.interleaved_peak_gflops,
                  row.ours_share_of_interleaved_peak, row.ours_share_of_peak):
        assert math.isfinite(value) and value > 0
    assert row.peak_gflops == peak
    assert "kc=" in row.plan
