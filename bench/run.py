"""Ziggurat benchmark harness: `python bench/run.py [--smoke] [--models ...] [--backends ...] [--threads N] [--json out.json]`.

For each model, every selected backend is compiled and run once (compile time, peak memory,
first output), then all backends are timed in interleaved rounds on the same input tensors
under torch.no_grad(). Outputs are compared with eager's; the table reports median latency,
speedups, compile time, peak memory and max relative error, and geometric means at the end.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and sys.path and sys.path[0].rstrip("/").endswith("bench"):
    # Run as a script, Python puts bench/ itself first on sys.path; its module names
    # (models, timing, ...) must not shadow anything. The suite is imported as ziggurat.bench.
    sys.path.pop(0)

import argparse
import copy
import gc
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import torch

from ziggurat.bench.accuracy import max_relative_error, snapshot
from ziggurat.bench.backends import (
    BACKEND_NAMES,
    EAGER,
    INDUCTOR_BACKENDS,
    ZIGGURAT,
    PreparedBackend,
    error_line,
    prepare_backend,
    reset_compiler_caches,
    warm_up_inductor_toolchain,
)
from ziggurat.bench.models import select_models
from ziggurat.bench.quantize import INT8, quantize_x86
from ziggurat.bench.results import STATUS_NA, STATUS_OK, BackendResult, fill_speedups, summarize
from ziggurat.bench.spec import TAG_SMOKE, TAG_ZOO, ModelSpec
from ziggurat.bench.sysinfo import host_info, load_average
from ziggurat.bench.table import render_table
from ziggurat.bench.timing import measure_interleaved

#: Max relative error (against eager fp32) a low-precision column may have before it is flagged;
#: eager's own autocast error is in the eager column, measured the same way.
PRECISION_TOLERANCE = {"bf16": 5e-2, "fp16": 1e-2, "int8": 5e-2}
DEFAULT_ROUNDS = 20
DEFAULT_WARMUP = 3
DEFAULT_TARGET_MS = 5.0
SMOKE_ROUNDS = 3
SMOKE_WARMUP = 1
SMOKE_TARGET_MS = 1.0
SMOKE_BACKENDS = (EAGER, ZIGGURAT)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated zoo names (default: the full zoo; with --smoke: the smoke set)")
    p.add_argument("--backends", help=f"comma-separated columns from {','.join(BACKEND_NAMES)} (default: all; with --smoke: eager,ziggurat)")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads and ziggurat threads= (default: usable cores; smoke: 1)")
    p.add_argument("--rounds", type=int, default=None, help=f"timed interleaved rounds (default {DEFAULT_ROUNDS}; smoke {SMOKE_ROUNDS})")
    p.add_argument("--warmup", type=int, default=None, help=f"untimed interleaved warm-up rounds (default {DEFAULT_WARMUP}; smoke {SMOKE_WARMUP})")
    p.add_argument("--target-ms", type=float, default=None, help=f"batch calls so one sample lasts about this long (default {DEFAULT_TARGET_MS})")
    p.add_argument("--json", type=Path, help="write every number (including raw samples) to this file")
    p.add_argument("--smoke", action="store_true", help="fast CI path: tiny models, few rounds, eager + ziggurat")
    p.add_argument(
        "--inductor-cache",
        choices=("cold", "warm"),
        default="cold",
        help="cold (default): a fresh TORCHINDUCTOR_CACHE_DIR for this run, so compile times are not disk-cache hits",
    )
    p.add_argument("--precision", choices=("fp32", "bf16", "fp16", INT8), default="fp32",
                   help="bf16/fp16: eager and Inductor under torch.autocast, Ziggurat with precision=; int8: "
                        "every column runs the model quantized with PT2E and X86InductorQuantizer (bench/quantize.py); "
                        "errors against eager fp32, flagged past PRECISION_TOLERANCE")
    p.add_argument("--list", action="store_true", help="list the zoo and exit")
    args = p.parse_args(argv)

    args.model_tag = TAG_SMOKE if args.smoke else TAG_ZOO
    args.rounds = args.rounds if args.rounds is not None else (SMOKE_ROUNDS if args.smoke else DEFAULT_ROUNDS)
    args.warmup = args.warmup if args.warmup is not None else (SMOKE_WARMUP if args.smoke else DEFAULT_WARMUP)
    args.target_ms = args.target_ms if args.target_ms is not None else (SMOKE_TARGET_MS if args.smoke else DEFAULT_TARGET_MS)
    if args.backends:
        args.backend_list = [b.strip() for b in args.backends.split(",") if b.strip()]
    else:
        args.backend_list = list(SMOKE_BACKENDS if args.smoke else BACKEND_NAMES)
    unknown = [b for b in args.backend_list if b not in BACKEND_NAMES]
    if unknown or not args.backend_list:
        p.error(f"unknown backend(s) {', '.join(unknown) or '(none given)'}; choose from {','.join(BACKEND_NAMES)}")
    if args.threads is None:  # smoke: 1 thread, immune to the barrier stalls of a busy shared machine
        args.threads = 1 if args.smoke else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    if args.threads < 1 or args.rounds < 1 or args.warmup < 0 or args.target_ms <= 0:
        p.error("--threads and --rounds must be >= 1, --warmup >= 0, --target-ms > 0")
    try:
        args.specs = select_models(args.models, args.model_tag)
    except KeyError as exc:
        p.error(str(exc.args[0]))
    return args


def _inputs_equal(inputs: tuple[torch.Tensor, ...], pristine: tuple[torch.Tensor, ...]) -> bool:
    return all(torch.equal(a, b) for a, b in zip(inputs, pristine))


def _restore(inputs: tuple[torch.Tensor, ...], pristine: tuple[torch.Tensor, ...]) -> None:
    for a, b in zip(inputs, pristine):
        a.copy_(b)


def bench_model(spec: ModelSpec, backends: list[str], args: argparse.Namespace, log: TextIO) -> tuple[list[BackendResult], list[str]]:
    """Benchmark one model on every backend; returns the rows (in `backends` order) and notes."""
    notes: list[str] = []
    t0 = time.perf_counter()
    model = spec.build()
    inputs = spec.example_inputs()
    pristine = tuple(t.clone() for t in inputs)
    reference = snapshot(model(*inputs))  # eager output: what every backend is compared with
    print(f"[{spec.name}] built in {time.perf_counter() - t0:.1f}s", file=log, flush=True)
    if args.precision == INT8:
        t0 = time.perf_counter()
        model = quantize_x86(model, inputs)
        print(f"[{spec.name}] quantized (PT2E, X86InductorQuantizer) in {time.perf_counter() - t0:.1f}s", file=log, flush=True)

    prepared: dict[str, PreparedBackend] = {}
    for name in backends:
        # Every compiled backend gets its own copy: compilers may fold, pack or mutate weights.
        target = model if name == EAGER else copy.deepcopy(model)
        print(f"[{spec.name}] preparing {name} ...", file=log, flush=True)
        prep = prepare_backend(name, target, inputs, args.threads, args.precision)
        if not _inputs_equal(inputs, pristine):
            _restore(inputs, pristine)  # later backends must see the same inputs
            if prep.ok:
                prep = PreparedBackend(name, None, prep.setup_s, prep.peak_mem_bytes, None, "modified its input tensors in place")
        prepared[name] = prep
        status = f"{prep.setup_s:.2f}s" if prep.ok and prep.setup_s is not None else f"n/a: {prep.error}"
        print(f"[{spec.name}] {name}: {status}", file=log, flush=True)

    runners = {name: p.runner for name, p in prepared.items() if p.ok and p.runner is not None}
    timings = measure_interleaved(runners, inputs, args.warmup, args.rounds, args.target_ms)
    if not _inputs_equal(inputs, pristine):
        notes.append(f"{spec.name}: input tensors were modified during timing; latencies may be invalid")
        _restore(inputs, pristine)

    rows: list[BackendResult] = []
    for name in backends:
        prep = prepared[name]
        row = BackendResult(model=spec.name, backend=name, status=STATUS_NA, error=prep.error, setup_s=prep.setup_s, details=prep.details)
        if prep.peak_mem_bytes is not None:
            row.peak_mem_mb = prep.peak_mem_bytes / 2**20
        timing = timings.get(name)
        if prep.ok and timing is not None and timing.error is None and prep.runner is not None and prep.first_output is not None:
            try:
                final_output = snapshot(prep.runner(*inputs))  # after all timed calls: still correct?
                error = max(max_relative_error(prep.first_output, reference), max_relative_error(final_output, reference))
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                row.error = "failed after timing: " + error_line(exc)
            else:
                row.status = STATUS_OK
                row.median_ms = timing.median_ms
                row.p25_ms = timing.quantile_ms(0.25)
                row.p75_ms = timing.quantile_ms(0.75)
                row.min_ms = min(timing.samples_ms)
                row.samples_ms = timing.samples_ms
                row.inner = timing.inner
                row.set_error(error, spec.tolerance)
        elif timing is not None and timing.error is not None:
            row.error = timing.error
        rows.append(row)
    if args.precision != "fp32":
        _precision_bar(rows, PRECISION_TOLERANCE[args.precision])
    return rows, notes


def _precision_bar(rows: list[BackendResult], tolerance: float) -> None:
    """A low-precision column is flagged past ``tolerance`` or twice eager autocast's own error
    against fp32, whichever is larger (a deep bf16 network is far from fp32 in eager too)."""
    eager = next((r.max_rel_error for r in rows if r.backend == EAGER and r.max_rel_error is not None), None)
    bar = max(tolerance, 2 * eager) if eager is not None and eager == eager else tolerance
    for row in rows:
        if row.max_rel_error is not None:
            row.set_error(row.max_rel_error, bar)
            row.mismatch = row.over_tolerance


@contextmanager
def _cold_inductor_cache(enabled: bool, log: TextIO) -> Iterator[None]:
    """Point Inductor at a fresh cache directory for the duration (unless the user set one)."""
    if not enabled or "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        yield
        return
    cache_dir = tempfile.mkdtemp(prefix="ziggurat-bench-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    print(f"inductor cache (cold): {cache_dir}", file=log, flush=True)
    try:
        yield
    finally:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        shutil.rmtree(cache_dir, ignore_errors=True)


def run(args: argparse.Namespace, log: TextIO) -> dict[str, object]:
    """Benchmark every selected model; returns the JSON-ready report."""
    info = host_info(args.threads)
    uses_inductor = any(b in INDUCTOR_BACKENDS for b in args.backend_list)
    rows: list[BackendResult] = []
    notes: list[str] = []
    old_threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    try:
        with _cold_inductor_cache(uses_inductor and args.inductor_cache == "cold", log), torch.no_grad():
            if uses_inductor:
                print("warming up the Inductor toolchain (not reported) ...", file=log, flush=True)
                warm_up_inductor_toolchain()
            for spec in args.specs:
                model_rows, model_notes = bench_model(spec, args.backend_list, args, log)
                rows += model_rows
                notes += model_notes
                if uses_inductor:
                    reset_compiler_caches()
                gc.collect()
    finally:
        torch.set_num_threads(old_threads)
    info["load_average_end"] = load_average()
    fill_speedups(rows)
    summaries = summarize(rows, args.backend_list)
    return {
        "meta": info,
        "config": {
            "models": [s.name for s in args.specs],
            "backends": args.backend_list,
            "threads": args.threads,
            "rounds": args.rounds,
            "warmup": args.warmup,
            "target_ms": args.target_ms,
            "smoke": args.smoke,
            "inductor_cache": args.inductor_cache,
            "precision": args.precision,
            "wall_s": round(time.perf_counter() - start, 2),
        },
        "models": {s.name: {"description": s.description, "tolerance": s.tolerance} for s in args.specs},
        "results": rows,
        "geomean": summaries,
        "notes": notes,
    }


def _precision_line(config: dict[str, object]) -> str:
    precision = config.get("precision", "fp32")
    if precision == "fp32":
        return "fp32"
    tol = PRECISION_TOLERANCE[str(precision)]
    if precision == INT8:
        return ("int8: every column runs the model quantized with PT2E (X86InductorQuantizer, calibrated on the "
                f"example); errors against eager fp32, flagged past max({tol:g}, 2 x the quantized eager model's)")
    return (f"{precision}: eager and Inductor under torch.autocast, ziggurat precision={precision!r}; "
            f"errors against eager fp32, flagged past max({tol:g}, 2 x eager autocast's)")


def _load(value: object) -> str:
    return "?" if not isinstance(value, list) else "/".join(f"{v:.2f}" for v in value)


def busy_machine_warning(meta: dict[str, object]) -> str | None:
    """Warn when other processes compete for the cores the timed threads need."""
    threads, cores, load = meta["threads"], meta["usable_cores"], meta["load_average_start"]
    if not isinstance(load, list) or not isinstance(threads, int) or not isinstance(cores, int):
        return None
    if load[0] + threads > cores + 0.5:
        return (
            f"WARNING: 1-minute load {load[0]:.2f} + {threads} timed thread(s) exceeds {cores} usable core(s); "
            "multi-threaded latencies suffer badly when a thread is descheduled"
        )
    return None


def format_header(report: dict[str, object]) -> str:
    meta = report["meta"]
    config = report["config"]
    assert isinstance(meta, dict) and isinstance(config, dict)
    return "\n".join(
        [
            f"Ziggurat benchmark  {meta['date']}  commit {meta['git_commit'] or '?'}",
            f"CPU: {meta['cpu_model']} (LLVM: {meta['llvm_host_cpu'] or '?'}), {meta['logical_cores']} logical cores, {meta['usable_cores']} usable",
            f"torch {meta['torch_version']}, python {meta['python_version']}, threads {meta['threads']}; "
            f"load average at start {_load(meta['load_average_start'])}, at end {_load(meta['load_average_end'])}",
            f"{config['rounds']} interleaved rounds after {config['warmup']} warm-up rounds; median of per-call latency; "
            f"target {config['target_ms']} ms per sample; no_grad; {_precision_line(config)}",
            "compile s = compile + first call; peak MB = peak RSS rise of this process during compile + first call",
        ]
        + ([warning] if (warning := busy_machine_warning(meta)) else [])
    )


def to_json(report: dict[str, object]) -> dict[str, object]:
    out = dict(report)
    out["results"] = [r.to_json() for r in report["results"]]  # type: ignore[attr-defined]
    out["geomean"] = [vars(s) for s in report["geomean"]]  # type: ignore[attr-defined]
    return out


def main(argv: list[str] | None = None, out: TextIO | None = None, log: TextIO | None = None) -> int:
    args = parse_args(argv)
    out = out or sys.stdout
    log = log or sys.stderr
    if args.list:
        for spec in select_models("all" if args.models is None else args.models, args.model_tag):
            print(f"{spec.name:18s} tol {spec.tolerance:.0e}  {spec.description}", file=out)
        return 0
    report = run(args, log)
    print(format_header(report), file=out)
    print("", file=out)
    print(render_table(report["results"], report["geomean"]), file=out)  # type: ignore[arg-type]
    for note in report["notes"]:  # type: ignore[attr-defined]
        print(f"NOTE: {note}", file=out)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(to_json(report), indent=2) + "\n")
        print(f"wrote {args.json}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
