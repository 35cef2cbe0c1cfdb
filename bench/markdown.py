"""The README's benchmark table from ``bench/run.py --json`` output.

    .venv/bin/python bench/markdown.py t1.json [t2.json ...]

One table per file: median ms per backend, Ziggurat's speedups over eager, Inductor and
Inductor with freezing, its max relative error vs eager, and the geometric means.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

BACKENDS = ("eager", "inductor", "inductor-freeze", "ziggurat")


def _ms(row: dict[str, Any] | None) -> str:
    if row is None or row.get("median_ms") is None:
        return "-"
    return f"{row['median_ms']:.3g}" if row["median_ms"] < 10 else f"{row['median_ms']:.1f}"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def render(report: dict[str, Any]) -> str:
    meta = report["meta"]
    rows: dict[tuple[str, str], dict[str, Any]] = {(r["model"], r["backend"]): r for r in report["results"]}
    models = list(dict.fromkeys(r["model"] for r in report["results"]))
    load = meta.get("load_average_start", ["?"])[0], meta.get("load_average_end", ["?"])[0]
    lines = [
        f"{meta['date'][:16].replace('T', ' ')} UTC, commit {meta['git_commit']}, {meta['cpu_model']} "
        f"(LLVM host CPU {meta['llvm_host_cpu']}), {meta['logical_cores']} cores, "
        f"**{meta['threads']} thread(s)**, torch {meta['torch_version']}; load average {load[0]} -> {load[1]}",
        "",
        "| model | eager ms | inductor ms | inductor-freeze ms | ziggurat ms | x eager | x inductor | x ind-freeze | max rel err |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model in models:
        z = rows.get((model, "ziggurat"))
        cells = [model, *(_ms(rows.get((model, b))) for b in BACKENDS)]
        if z is not None and z.get("status") == "ok":
            err = z.get("max_rel_error")
            flag = " MISMATCH" if z.get("mismatch") else ""
            cells += [_x(z.get("speedup_vs_eager")), _x(z.get("speedup_vs_inductor")),
                      _x(z.get("speedup_vs_inductor_freeze")), ("-" if err is None else f"{err:.1e}") + flag]
        else:
            cells += ["-", "-", "-", "n/a"]
        lines.append("| " + " | ".join(cells) + " |")
    for g in report["geomean"]:
        if g["backend"] == "ziggurat":
            lines.append(f"| **geomean** ({g['models']} models) | | | | | **{_x(g['vs_eager'])}** | "
                         f"**{_x(g['vs_inductor'])}** | **{_x(g['vs_inductor_freeze'])}** | |")
    others = [g for g in report["geomean"] if g["backend"] in ("inductor", "inductor-freeze")]
    if others:
        lines += ["", "For comparison, geomean over eager: " + ", ".join(
            f"{g['backend']} {_x(g['vs_eager'])}" for g in others) + "."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reports", nargs="+", type=Path, help="JSON files written by bench/run.py --json")
    args = p.parse_args(argv)
    print("\n\n".join(render(json.loads(path.read_text())) for path in args.reports))


if __name__ == "__main__":
    main()
