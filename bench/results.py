"""Result records of a benchmark run, the derived speedups and geometric means."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ziggurat.bench.accuracy import MISMATCH_THRESHOLD
from ziggurat.bench.backends import EAGER, INDUCTOR, INDUCTOR_FREEZE

STATUS_OK = "ok"
STATUS_NA = "n/a"


@dataclass
class BackendResult:
    model: str
    backend: str
    status: str  # STATUS_OK or STATUS_NA
    error: str | None = None
    median_ms: float | None = None
    p25_ms: float | None = None
    p75_ms: float | None = None
    min_ms: float | None = None
    samples_ms: list[float] = field(default_factory=list)
    inner: int | None = None
    setup_s: float | None = None  # compile + first call (for eager: just the first call)
    peak_mem_mb: float | None = None
    max_rel_error: float | None = None
    tolerance: float | None = None
    mismatch: bool = False  # max_rel_error > MISMATCH_THRESHOLD (1e-4)
    over_tolerance: bool = False  # max_rel_error > the model's own tolerance
    speedup_vs_eager: float | None = None
    speedup_vs_inductor: float | None = None
    speedup_vs_inductor_freeze: float | None = None
    details: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def set_error(self, max_rel_error: float, tolerance: float) -> None:
        self.max_rel_error = max_rel_error
        self.tolerance = tolerance
        self.mismatch = not max_rel_error <= MISMATCH_THRESHOLD  # inf/nan count as mismatches
        self.over_tolerance = not max_rel_error <= tolerance

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        if self.max_rel_error is not None and not math.isfinite(self.max_rel_error):
            data["max_rel_error"] = str(self.max_rel_error)  # JSON has no inf
        return data


def fill_speedups(rows: list[BackendResult]) -> None:
    """Speedup = baseline median / this median, for each baseline of the same model that ran."""
    by_model: dict[str, dict[str, BackendResult]] = {}
    for row in rows:
        by_model.setdefault(row.model, {})[row.backend] = row
    for row in rows:
        if not row.ok or row.median_ms is None or row.median_ms <= 0:
            continue
        peers = by_model[row.model]

        def over(baseline: str) -> float | None:
            base = peers.get(baseline)
            if base is None or not base.ok or base.median_ms is None:
                return None
            return base.median_ms / row.median_ms  # type: ignore[operator]

        row.speedup_vs_eager = over(EAGER)
        row.speedup_vs_inductor = over(INDUCTOR)
        row.speedup_vs_inductor_freeze = over(INDUCTOR_FREEZE)


def geomean(values: list[float]) -> float | None:
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive))


@dataclass
class GeomeanSummary:
    backend: str
    models: int  # models where both this backend and the baseline ran
    vs_eager: float | None
    vs_inductor: float | None
    vs_inductor_freeze: float | None


def summarize(rows: list[BackendResult], backends: list[str]) -> list[GeomeanSummary]:
    summaries = []
    for backend in backends:
        mine = [r for r in rows if r.backend == backend and r.ok]
        eager = [r.speedup_vs_eager for r in mine if r.speedup_vs_eager is not None]
        ind = [r.speedup_vs_inductor for r in mine if r.speedup_vs_inductor is not None]
        frz = [r.speedup_vs_inductor_freeze for r in mine if r.speedup_vs_inductor_freeze is not None]
        summaries.append(GeomeanSummary(backend, len(eager), geomean(eager), geomean(ind), geomean(frz)))
    return summaries
