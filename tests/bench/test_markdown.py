"""bench/markdown.py renders the README table from a --json report."""

from __future__ import annotations

from ziggurat.bench.markdown import render


def _row(model: str, backend: str, ms: float, **extra: object) -> dict[str, object]:
    return {"model": model, "backend": backend, "status": "ok", "median_ms": ms, **extra}


def test_table_has_one_row_per_model_and_the_geomeans() -> None:
    report = {
        "meta": {"date": "2026-11-30T09:21:16+00:00", "git_commit": "abc1234", "cpu_model": "CPU",
                 "llvm_host_cpu": "znver5", "logical_cores": 2, "threads": 1, "torch_version": "2.13.0",
                 "load_average_start": [0.5], "load_average_end": [0.7]},
        "results": [
            _row("mlp", "eager", 2.0), _row("mlp", "inductor", 1.5),
            _row("mlp", "ziggurat", 1.0, speedup_vs_eager=2.0, speedup_vs_inductor=1.5, max_rel_error=3e-7),
            _row("big", "eager", 120.0),
            {"model": "big", "backend": "ziggurat", "status": "n/a", "median_ms": None},
        ],
        "geomean": [{"backend": "ziggurat", "models": 1, "vs_eager": 2.0, "vs_inductor": 1.5, "vs_inductor_freeze": None},
                    {"backend": "inductor", "models": 1, "vs_eager": 1.33, "vs_inductor": 1.0, "vs_inductor_freeze": None}],
    }
    text = render(report)
    assert "2026-11-30 09:21 UTC, commit abc1234" in text and "**1 thread(s)**" in text
    assert "| mlp | 2 | 1.5 | - | 1 | 2.00x | 1.50x | - | 3.0e-07 |" in text
    assert "| big | 120.0 | - | - | - | - | - | - | n/a |" in text
    assert "**2.00x**" in text and "inductor 1.33x" in text
