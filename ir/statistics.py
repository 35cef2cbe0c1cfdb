"""Pass statistics (MLIR's ``-mlir-pass-statistics``): counters a pass records while it runs.

    with collect() as stats:
        pass_.apply(ctx, module)
    stats.counters  # {("fuse-post-ops", "linear+gelu_tanh"): 12, ...}

Passes call :func:`record`; outside ``collect()`` recording is a no-op.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Statistics:
    counters: Counter[tuple[str, str]] = field(default_factory=Counter)

    def for_pass(self, pass_name: str) -> dict[str, int]:
        return {k: v for (p, k), v in self.counters.items() if p == pass_name}

    def format(self) -> str:
        lines: list[str] = []
        for pass_name in dict.fromkeys(p for p, _ in self.counters):
            lines.append(f"{pass_name}:")
            for key, value in sorted(self.for_pass(pass_name).items()):
                lines.append(f"  {key:<40} {value}")
        return "\n".join(lines)


_CURRENT: contextvars.ContextVar[Statistics | None] = contextvars.ContextVar("stats", default=None)


def record(pass_name: str, key: str, amount: int = 1) -> None:
    stats = _CURRENT.get()
    if stats is not None:
        stats.counters[(pass_name, key)] += amount


@contextlib.contextmanager
def collect(stats: Statistics | None = None) -> Iterator[Statistics]:
    stats = stats or Statistics()
    token = _CURRENT.set(stats)
    try:
        yield stats
    finally:
        _CURRENT.reset(token)
