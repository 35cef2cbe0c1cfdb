"""Plain-text rendering of the results (fixed-width columns)."""

from __future__ import annotations

from ziggurat.bench.accuracy import MISMATCH_THRESHOLD
from ziggurat.bench.backends import EAGER
from ziggurat.bench.results import BackendResult, GeomeanSummary

MISMATCH_FLAG = "MISMATCH"  # max rel err > 1e-4
TOLERANCE_FLAG = "FAIL>tol"  # also above the model's own tolerance

_COLUMNS: tuple[tuple[str, int], ...] = (
    ("model", 18),
    ("backend", 16),
    ("median ms", 10),
    ("min ms", 9),
    ("IQR %", 6),
    ("x eager", 8),
    ("x ind", 7),
    ("x ind-frz", 9),
    ("compile s", 9),
    ("peak MB", 8),
    ("max rel err", 11),
)


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _err(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def flags(row: BackendResult) -> str:
    marks = []
    if row.mismatch:
        marks.append(MISMATCH_FLAG)
    if row.over_tolerance:
        marks.append(TOLERANCE_FLAG)
    breaks = row.details.get("dynamo_graph_breaks", 0)
    if breaks:
        marks.append(f"{breaks} graph break(s)")
    return " ".join(marks)


def _line(cells: list[str]) -> str:
    parts = []
    for (title, width), cell in zip(_COLUMNS, cells):
        parts.append(cell.ljust(width) if title in ("model", "backend") else cell.rjust(width))
    extra = cells[len(_COLUMNS) :]
    return "  ".join(parts + extra).rstrip()


def render_row(row: BackendResult) -> str:
    if not row.ok:
        cells = [row.model, row.backend, "n/a"] + [""] * (len(_COLUMNS) - 3)
        return _line(cells + [f"n/a: {row.error}"])
    iqr = None
    if row.p25_ms is not None and row.p75_ms is not None and row.median_ms:
        iqr = 100.0 * (row.p75_ms - row.p25_ms) / row.median_ms
    cells = [
        row.model,
        row.backend,
        _num(row.median_ms, ".3f"),
        _num(row.min_ms, ".3f"),
        _num(iqr, ".1f"),
        _num(row.speedup_vs_eager, ".2f"),
        _num(row.speedup_vs_inductor, ".2f"),
        _num(row.speedup_vs_inductor_freeze, ".2f"),
        "-" if row.backend == EAGER else _num(row.setup_s, ".2f"),
        _num(row.peak_mem_mb, ".1f"),
        _err(row.max_rel_error),
        flags(row),
    ]
    return _line(cells)


def render_table(rows: list[BackendResult], summaries: list[GeomeanSummary]) -> str:
    header = _line([title for title, _ in _COLUMNS] + ["flags"])
    rule = "-" * len(header)
    out = [header, rule]
    previous_model = None
    for row in rows:
        if previous_model is not None and row.model != previous_model:
            out.append("")
        out.append(render_row(row))
        previous_model = row.model
    out += [rule, "geometric mean of speedups (models where both ran):"]
    for s in summaries:
        out.append(
            f"  {s.backend:<16s} x eager {_num(s.vs_eager, '.3f'):>7s} over {s.models} model(s)"
            f"   x inductor {_num(s.vs_inductor, '.3f'):>7s}   x inductor-freeze {_num(s.vs_inductor_freeze, '.3f'):>7s}"
        )
    out.append(
        f"flags: {MISMATCH_FLAG} = max rel err (max|a-b|/max|eager|) > {MISMATCH_THRESHOLD:g}; "
        f"{TOLERANCE_FLAG} = also above the model's tolerance"
    )
    return "\n".join(out)
