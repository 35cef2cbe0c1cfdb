"""Interleaved latency measurement.

Every round runs each live backend once, in the same order (A B C D A B C D ...), so drift on
a shared machine (other jobs, frequency changes) lands on all backends alike. A round's
sample for a backend is `inner` back-to-back calls timed with time.perf_counter_ns and
divided by `inner`; `inner` is chosen from the warm-up so one sample lasts about `target_ms`
(1 for anything slower than that). Warm-up calls are never part of the samples, and the
garbage collector is paused while timing.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ziggurat.bench.backends import error_line

Runner = Callable[..., Any]
MAX_INNER = 10_000


@dataclass
class Timing:
    """Per-call latencies of one backend, one sample per round, in milliseconds."""

    samples_ms: list[float] = field(default_factory=list)
    warmup_ms: list[float] = field(default_factory=list)
    inner: int = 1
    error: str | None = None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ms) if self.samples_ms else None

    def quantile_ms(self, q: float) -> float | None:
        """Linear-interpolated quantile of the samples (q in [0, 1])."""
        if not self.samples_ms:
            return None
        ordered = sorted(self.samples_ms)
        pos = q * (len(ordered) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _timed_calls(runner: Runner, inputs: tuple[torch.Tensor, ...], calls: int) -> float:
    """Milliseconds per call over `calls` back-to-back calls."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        runner(*inputs)
    return (time.perf_counter_ns() - start) / calls / 1e6


def choose_inner(warmup_ms: list[float], target_ms: float) -> int:
    """Calls per sample so a sample lasts about `target_ms` (at least 1)."""
    if not warmup_ms:
        return 1
    per_call = max(statistics.median(warmup_ms), 1e-6)
    return max(1, min(MAX_INNER, math.ceil(target_ms / per_call)))


def measure_interleaved(
    runners: dict[str, Runner],
    inputs: tuple[torch.Tensor, ...],
    warmup: int,
    rounds: int,
    target_ms: float,
) -> dict[str, Timing]:
    """Warm up, then time `rounds` interleaved rounds; a backend that raises is dropped with its error."""
    timings = {name: Timing() for name in runners}
    live = list(runners)

    def run_round(record: Callable[[str, float], None], calls: Callable[[str], int]) -> None:
        for name in list(live):
            try:
                ms = _timed_calls(runners[name], inputs, calls(name))
            except Exception as exc:  # a backend failing mid-run loses its column, not the run
                timings[name].error = "failed while timing: " + error_line(exc)
                live.remove(name)
                continue
            record(name, ms)

    for _ in range(max(1, warmup)):
        run_round(lambda name, ms: timings[name].warmup_ms.append(ms), lambda name: 1)
    for name in live:
        timings[name].inner = choose_inner(timings[name].warmup_ms, target_ms)

    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            run_round(lambda name, ms: timings[name].samples_ms.append(ms), lambda name: timings[name].inner)
    finally:
        if gc_was_enabled:
            gc.enable()
    return timings
