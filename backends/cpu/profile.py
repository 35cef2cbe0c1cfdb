"""Per-kernel / per-GEMM wall time of a compiled graph (the native profiler).

    compiled = ziggurat.compile(model, (x,), backend="cpu", profile=True)   # or ZIGGURAT_PROFILE=1
    for _ in range(10):
        compiled(x)
    print(profile(compiled).format())        # or compiled.executable.profile()

The native entries of a profiling build time every ``loop.kernel`` and ``loop.gemm`` call
with the time-stamp counter (``codegen/profile.py``); this module turns the counters into a
table: calls, total and per-call time, share of the entries' time, GFLOP/s for GEMMs, and
the torch ops each site computes.  Counters accumulate over calls until :meth:`reset`.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ziggurat.backends.cpu.codegen.profile import COUNTERS_FN, CYCLES_FN, ProfileEntry

ENV = "ZIGGURAT_PROFILE"


def profiling_requested(extra: dict[str, Any]) -> bool:
    """``profile=True`` among the compile options, or ``ZIGGURAT_PROFILE`` set to a true value."""
    if "profile" in extra:
        return bool(extra["profile"])
    return os.environ.get(ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class ProfileRow:
    entry: ProfileEntry
    calls: int
    seconds: float

    @property
    def per_call_ms(self) -> float:
        return 1e3 * self.seconds / self.calls if self.calls else 0.0

    @property
    def gflops(self) -> float:
        return self.entry.flops * self.calls / self.seconds / 1e9 if self.seconds > 0 and self.entry.flops else 0.0


@dataclass(frozen=True)
class ProfileTable:
    rows: list[ProfileRow]
    runs: int  # calls of the first native entry

    @property
    def total_seconds(self) -> float:
        return sum(r.seconds for r in self.rows if r.entry.kind == "entry")

    def by_origin(self) -> dict[str, float]:
        """Seconds per kind of site: ``gemm <origins>`` or ``kernel <origins>``."""
        out: dict[str, float] = {}
        for r in self.rows:
            if r.entry.kind != "entry":
                key = f"{r.entry.kind} {r.entry.origins or r.entry.name}"
                out[key] = out.get(key, 0.0) + r.seconds
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def format(self, top: int = 40) -> str:
        runs = max(self.runs, 1)
        total = self.total_seconds
        sites = [r for r in self.rows if r.entry.kind != "entry"]
        timed = sum(r.seconds for r in sites)
        lines = [f"native profile over {self.runs} call(s): {1e3 * total / runs:.3f} ms per call in native entries, "
                 f"{1e3 * timed / runs:.3f} ms in {len(sites)} timed sites "
                 f"(gemm {1e3 * sum(r.seconds for r in sites if r.entry.kind == 'gemm') / runs:.3f} ms, "
                 f"kernels {1e3 * sum(r.seconds for r in sites if r.entry.kind == 'kernel') / runs:.3f} ms)"]
        lines.append("by origin (ms per call, share):")
        for key, sec in list(self.by_origin().items())[:12]:
            lines.append(f"  {key:<44} {1e3 * sec / runs:9.3f}  {100 * sec / total if total else 0:5.1f}%")
        lines.append(f"{'site':<40} {'kind':<6} {'ms/run':>8} {'share':>6} {'GFLOP/s':>8}  shape / origins")
        for r in sorted(sites, key=lambda r: -r.seconds)[:top]:
            share = 100 * r.seconds / total if total else 0.0
            gf = f"{r.gflops:8.1f}" if r.entry.flops else f"{'':>8}"
            what = r.entry.shape + ("  " if r.entry.shape else "") + r.entry.origins
            lines.append(f"{r.entry.name[:40]:<40} {r.entry.kind:<6} {1e3 * r.seconds / runs:8.3f} {share:5.1f}% {gf}  {what}")
        return "\n".join(lines)


@cache
def _counter_hz(cycles_addr: int) -> float:
    """Ticks per second of the time-stamp counter, against ``perf_counter`` (a 20 ms spin)."""
    read: Callable[[], int] = ctypes.CFUNCTYPE(ctypes.c_int64)(cycles_addr)
    best = 0.0
    for _ in range(3):
        t0, c0 = time.perf_counter(), read()
        while time.perf_counter() - t0 < 0.02:
            pass
        t1, c1 = time.perf_counter(), read()
        best = max(best, (c1 - c0) / (t1 - t0))
    return best


class NativeProfile:
    """The counters of one loaded library."""

    def __init__(self, library: Any, entries: list[ProfileEntry]) -> None:
        self.entries = entries
        self._library = library
        ptr = library.ctypes_function(COUNTERS_FN, ctypes.c_void_p, [])()
        self._counters = (ctypes.c_int64 * (2 * max(1, len(entries)))).from_address(ptr)
        self._hz = _counter_hz(library.address(CYCLES_FN))

    def reset(self) -> None:
        for i in range(len(self._counters)):
            self._counters[i] = 0

    def table(self) -> ProfileTable:
        rows = [ProfileRow(e, int(self._counters[2 * i + 1]), self._counters[2 * i] / self._hz)
                for i, e in enumerate(self.entries)]
        first_entry = next((r for r in rows if r.entry.kind == "entry"), None)
        return ProfileTable(rows, first_entry.calls if first_entry else 0)


def profile(compiled: Any) -> ProfileTable:
    """The profile table of a compiled module (or its executable) built with profiling."""
    executable = getattr(compiled, "executable", compiled)
    return executable.profile()


__all__ = ["ENV", "NativeProfile", "ProfileRow", "ProfileTable", "profile", "profiling_requested"]
