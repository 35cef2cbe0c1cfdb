"""Dynamic shapes (issue 16): one dynamic Ziggurat compile against Inductor ``dynamic=True``,
static Ziggurat builds and eager, over a list of input sizes per model.

Per model, one ``ziggurat.compile(model, example, backend="cpu", dynamic_shapes=...)`` (a
torch.export ``Dim`` per dynamic dim) and one ``torch.compile(model, dynamic=True)`` are made.
Then for each shape of the model's list, in order: eager's output is the reference; Inductor
and the dynamic module are called once (the Inductor call's seconds include any recompile
Dynamo does at that shape; the dynamic module's build for a new size tuple is read from its
``report.pass_times``); a fresh static ``ziggurat.compile`` of exactly that shape is made;
every output is checked against eager (max relative error); then the four run interleaved
(``measure_interleaved``) on the same input, and each one's median per-call latency is shown.

What the dynamic module is: it exports once (the ``export`` time is paid once per model).
Where the CPU backend makes a range build (``report.stats["range build"]``: the graph lowered
at sampled sizes and made symbolic, ``backends/sampled_range.py``), one build made during the
compile serves every shape from each symbol's served floor up (``dyn build s`` reads
``range``; its seconds and the floors are in the per-model line: 2, or higher where the
lowerings change structure at small sizes).  A shape with a symbol below its floor (batch 1, a
very short sequence) is served by a range build over the other symbols with that size pinned,
made at its first call (``range, batch=1``, with its seconds where this shape made it).  Where
the range build is declined (the reason is in the per-model line), or every symbol is below
its floor, each new size tuple is served by a static build of the exported graph specialized
to it: the ``dyn build s`` column is that build, the honest per-shape cost.  The compile's example is the first listed shape whose dynamic dims are all >= 2
(torch.export needs that).

Builds are cold: every Ziggurat compile (the dynamic module, each static one) gets its own
fresh object-code cache directory, and Inductor a fresh ``TORCHINDUCTOR_CACHE_DIR`` (after a
throwaway compile that pays its one-time toolchain set-up), so neither reuses code made
earlier in the run or by an earlier run.

    python bench/dynamic_shapes.py [--quick] [--models bert-base,gpt2,resnet50] [--threads N]
                                   [--rounds 20] [--precision int8] [--json out.json]

``--precision int8``: each model is quantized once with PT2E and ``X86InductorQuantizer`` on a
dynamic export (``bench/quantize.py``: the dims stay symbolic), and every column runs that
quantized graph: eager, Inductor ``dynamic=True`` with freezing (which lowers it to oneDNN
int8), Ziggurat static and dynamic; errors are against the quantized graph's eager output, a
value on a quantizer's rounding boundary may move one quantum, and a deep network carries that
on (flagged past ``INT8_MISMATCH`` or twice Inductor's own distance, whichever is larger).

``--quick`` uses tiny configs (2-layer BERT and GPT-2 at hidden 128, ResNet-18 at 64x64) and
two shapes per model, with 1 thread by default and few rounds: a check that the bench runs.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and sys.path and sys.path[0].rstrip("/").endswith("bench"):
    # Run as a script, Python puts bench/ itself first on sys.path; its module names
    # (models, timing, ...) must not shadow anything. The suite is imported as ziggurat.bench.
    sys.path.pop(0)

import argparse
import contextlib
import copy
import gc
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch
from torch import nn
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import RANGE_BUILD, SPECIALIZED
from ziggurat.bench.accuracy import MISMATCH_THRESHOLD, max_relative_error, snapshot
from ziggurat.bench.backends import (
    FreezingOn,
    InductorEntry,
    InductorFreezeEntry,
    error_line,
    reset_compiler_caches,
    warm_up_inductor_toolchain,
)
from ziggurat.bench.models import INPUT_SEED, bn_calibrated, transformer
from ziggurat.bench.quantize import INT8, quantize_x86
from ziggurat.bench.run import _cold_inductor_cache, busy_machine_warning  # pyright: ignore[reportPrivateUsage]
from ziggurat.bench.spec import seeded
from ziggurat.bench.sysinfo import host_info, load_average
from ziggurat.bench.timing import Runner, Timing, measure_interleaved
from ziggurat.bench.zoo.bert import BertConfig, BertEncoder
from ziggurat.bench.zoo.gpt2 import GPT2, GPT2Config
from ziggurat.bench.zoo.resnet import resnet18, resnet50

EAGER = "eager"
INDUCTOR_DYN = "inductor-dyn"
STATIC = "zig-static"
DYNAMIC = "zig-dyn"
RUNNERS: tuple[str, ...] = (EAGER, INDUCTOR_DYN, STATIC, DYNAMIC)

DEFAULT_ROUNDS = 20
DEFAULT_WARMUP = 3
DEFAULT_TARGET_MS = 5.0
QUICK_ROUNDS = 5
QUICK_WARMUP = 1
QUICK_TARGET_MS = 1.0
#: ``--precision int8``: a relative error past this is flagged (a quantum moved by a float32
#: rounding difference is allowed, as in ``make bench-int8``)
INT8_MISMATCH = 5e-2


@dataclass(frozen=True)
class DynamicDim:
    """One dynamic dim of the model's single input: torch.export's ``Dim(name, min, max)``."""

    dim: int
    name: str
    low: int
    high: int


@dataclass(frozen=True)
class Case:
    """A model, how to make its input at a shape, its dynamic dims and the shapes to run."""

    name: str  # what --models selects
    label: str  # what the table shows (the quick configs are not the named models)
    description: str
    build: Callable[[], nn.Module]
    make_input: Callable[[tuple[int, ...]], torch.Tensor]
    dynamic: tuple[DynamicDim, ...]
    shapes: tuple[tuple[int, ...], ...]
    tolerance: float = 1e-4

    def dynamic_shapes(self) -> tuple[dict[int, Any]]:
        """The ``dynamic_shapes`` spec, positional (the model has one input)."""
        return ({d.dim: Dim(d.name, min=d.low, max=d.high) for d in self.dynamic},)

    def example_shape(self) -> tuple[int, ...]:
        """The compile's example: the first shape whose dynamic dims are all >= 2 (torch.export
        specializes a dim whose example size is 0 or 1 and then refuses the Dim)."""
        for shape in self.shapes:
            if all(shape[d.dim] >= 2 for d in self.dynamic):
                return shape
        raise ValueError(f"{self.name}: no listed shape has every dynamic dim >= 2 to export with")


# -- models (weights made as bench/models.py makes them) ----------------------------------------------

def _token_ids(vocab: int) -> Callable[[tuple[int, ...]], torch.Tensor]:
    def make(shape: tuple[int, ...]) -> torch.Tensor:
        with seeded(INPUT_SEED):
            return torch.randint(0, vocab, shape, dtype=torch.int64)

    return make


def _randn(shape: tuple[int, ...]) -> torch.Tensor:
    with seeded(INPUT_SEED):
        return torch.randn(*shape)


def _cases(quick: bool) -> dict[str, Case]:
    if quick:
        bert_cfg = BertConfig(vocab_size=1024, hidden=128, layers=2, heads=2, intermediate=512)
        gpt_cfg = GPT2Config(vocab_size=1024, hidden=128, layers=2, heads=2)
        image, batches, seqs = 64, (1, 3), (8, 32)
        bert_shapes = ((1, 16), (3, 32))
        resnet, resnet_name = resnet18, "ResNet-18"
        labels = ("bert-tiny", "gpt2-tiny", "resnet18-64px")
    else:
        bert_cfg, gpt_cfg = BertConfig(), GPT2Config()
        image, batches, seqs = 224, (1, 8, 32), (8, 64, 256)
        bert_shapes = tuple((b, s) for b in (1, 8) for s in (16, 64, 128, 384))
        resnet, resnet_name = resnet50, "ResNet-50"
        labels = ("bert-base", "gpt2", "resnet50")
    cases = (
        Case("bert-base", labels[0], f"BERT encoder {bert_cfg.layers}x{bert_cfg.hidden}, {bert_cfg.heads} heads, int64 ids [batch, seq]",
             transformer(lambda: BertEncoder(bert_cfg)), _token_ids(bert_cfg.vocab_size),
             (DynamicDim(0, "batch", 1, 64), DynamicDim(1, "seq", 1, bert_cfg.max_positions)), bert_shapes),
        Case("gpt2", labels[1], f"GPT-2 decoder {gpt_cfg.layers}x{gpt_cfg.hidden}, {gpt_cfg.heads} heads, vocab {gpt_cfg.vocab_size}, "
             "int64 ids [1, seq]",
             transformer(lambda: GPT2(gpt_cfg)), _token_ids(gpt_cfg.vocab_size),
             # max_positions - 1: at seq == max_positions torch.export guards the causal-mask slice
             # (seq != 1024) and refuses the Dim
             (DynamicDim(1, "seq", 1, gpt_cfg.max_positions - 1),), tuple((1, s) for s in seqs)),
        Case("resnet50", labels[2], f"{resnet_name}, [batch, 3, {image}, {image}], BN calibrated",
             bn_calibrated(resnet, (2, 3, image, image)), _randn,
             (DynamicDim(0, "batch", 1, 64),), tuple((b, 3, image, image) for b in batches)),
    )
    return {c.name: c for c in cases}


# -- results ------------------------------------------------------------------------------------------

@dataclass
class ShapeRow:
    model: str
    shape: list[int]
    median_ms: dict[str, float | None] = field(default_factory=dict)
    max_rel_err: dict[str, float | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    samples_ms: dict[str, list[float]] = field(default_factory=dict)
    dyn_build_s: float | None = None  # the dynamic module's specialization for this shape
    dyn_pinned: str = ""  # the sizes a pinned range build serving this shape holds ("batch=1")
    dyn_built_at: str = ""  # "compile" (the example), "call" (first call at this shape), "range", "pinned"
    static_compile_s: float | None = None  # a fresh ziggurat.compile of this shape, wall clock
    inductor_first_call_s: float | None = None  # Inductor's first call at this shape (compiles if Dynamo does)
    inductor_new_graphs: int | None = None  # Dynamo graphs compiled at this shape

    def ratio(self, num: str, den: str) -> float | None:
        a, b = self.median_ms.get(num), self.median_ms.get(den)
        return a / b if a is not None and b is not None and b > 0 else None


@dataclass
class ModelSummary:
    model: str
    description: str
    example_shape: list[int]
    dynamic_dims: list[str]
    export_s: float | None = None
    dyn_compile_s: float | None = None  # export + the example's build, wall clock
    dyn_builds: int | None = None  # report.stats["size specializations built"]
    range_build: str = ""  # report.stats["range build"]: made, or why not
    range_build_s: float | None = None  # the range build's seconds (sampled lowerings + one backend build)
    specializations: list[dict[str, int]] = field(default_factory=list)
    range_lows: dict[str, int] = field(default_factory=dict)  # the smallest size per symbol the range build serves
    pinned: list[str] = field(default_factory=list)  # range builds with sizes pinned (below those lows)
    inductor_graphs: int | None = None
    error: str | None = None


# -- the run ------------------------------------------------------------------------------------------

def _unique_graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _build_seconds(dyn: Any, label: str, prefix: str = "specialize") -> float | None:
    """The seconds of the dynamic module's latest build named ``<prefix> <label>``."""
    for name, seconds in reversed(dyn.report.pass_times):
        if name == f"{prefix} {label}":
            return float(seconds)
    return None


def _label(spec: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in spec.items())


class ColdCaches:
    """Fresh object-code cache directories for Ziggurat compiles, removed at the end."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ziggurat-bench-dynamic-"))
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        path = self.root / str(self.count)
        path.mkdir()
        return str(path)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def _cold_ziggurat_caches() -> Iterator[ColdCaches]:
    caches = ColdCaches()
    try:
        yield caches
    finally:
        caches.close()


def bench_shape(case: Case, shape: tuple[int, ...], model: nn.Module, inductor: Runner | None, dyn: Any,
                caches: ColdCaches, args: argparse.Namespace, log: TextIO) -> ShapeRow:
    row = ShapeRow(case.label, list(shape))
    x = case.make_input(shape)
    inputs = (x,)
    pristine = x.clone()
    reference = snapshot(model(x))
    runners: dict[str, Runner] = {EAGER: model}
    first: dict[str, list[torch.Tensor]] = {}
    tag = f"[{case.label} {'x'.join(map(str, shape))}]"

    if inductor is not None:
        graphs = _unique_graphs()
        try:
            start = time.perf_counter()
            first[INDUCTOR_DYN] = snapshot(inductor(x))
            row.inductor_first_call_s = time.perf_counter() - start
            row.inductor_new_graphs = _unique_graphs() - graphs
            runners[INDUCTOR_DYN] = inductor
        except Exception as exc:  # a failing runner loses its column, not the run
            row.errors[INDUCTOR_DYN] = error_line(exc)
        print(f"{tag} inductor first call {row.inductor_first_call_s or 0:.2f}s", file=log, flush=True)

    try:
        built_before = dyn.report.stats.get(SPECIALIZED, 0)
        pinned_before = len(dyn.pinned_builds)
        first[DYNAMIC] = snapshot(dyn(x))
        if dyn.report.stats.get(SPECIALIZED, 0) > built_before or len(dyn.pinned_builds) > pinned_before:
            row.dyn_built_at = "call"
        else:
            row.dyn_built_at = "compile"
        served = dyn.specialization([list(x.shape)])
        pinned = next((p for p in dyn.pinned_builds if p.build is served), None)
        if dyn.range_build is not None and served is dyn.range_build:
            row.dyn_built_at = "range"
        elif pinned is not None:
            # a range build over the other symbols with these sizes pinned (batch 1, a short sequence)
            label = _label({s.name: v for s, v in zip(dyn.symbols.symbols, pinned.pinned) if v is not None})
            row.dyn_built_at = "pinned" if row.dyn_built_at == "compile" else "pinned-call"
            row.dyn_build_s = _build_seconds(dyn, label, prefix="range build")
            row.dyn_pinned = label
        else:
            row.dyn_build_s = _build_seconds(dyn, _label(dyn.specializations[-1]))
        runners[DYNAMIC] = dyn
    except Exception as exc:
        row.errors[DYNAMIC] = error_line(exc)
    print(f"{tag} dynamic build {row.dyn_build_s or 0:.2f}s ({row.dyn_built_at or '-'})", file=log, flush=True)

    try:
        start = time.perf_counter()
        static = ziggurat.compile(copy.deepcopy(model), inputs, backend="cpu", threads=args.threads,
                                  cache_dir=caches.fresh())
        row.static_compile_s = time.perf_counter() - start
        first[STATIC] = snapshot(static(x))
        runners[STATIC] = static
    except Exception as exc:
        row.errors[STATIC] = error_line(exc)
    print(f"{tag} static compile {row.static_compile_s or 0:.2f}s", file=log, flush=True)

    if not torch.equal(x, pristine):
        raise RuntimeError(f"{tag}: a runner modified its input in place")
    ordered = {name: runners[name] for name in RUNNERS if name in runners}
    timings: dict[str, Timing] = measure_interleaved(ordered, inputs, args.warmup, args.rounds, args.target_ms)
    for name in RUNNERS:
        timing = timings.get(name)
        if timing is None:
            continue
        if timing.error is not None:
            row.errors[name] = timing.error
            continue
        row.median_ms[name] = timing.median_ms
        row.samples_ms[name] = timing.samples_ms
        if name != EAGER:
            try:  # the first output and one after all timed calls
                final = snapshot(runners[name](x))
                row.max_rel_err[name] = max(max_relative_error(first[name], reference),
                                            max_relative_error(final, reference))
            except Exception as exc:
                row.errors[name] = "failed after timing: " + error_line(exc)
    return row


def bench_case(case: Case, args: argparse.Namespace, caches: ColdCaches, log: TextIO) -> tuple[ModelSummary, list[ShapeRow]]:
    example = case.example_shape()
    summary = ModelSummary(case.label, case.description, list(example),
                           [f"dim {d.dim} '{d.name}' in [{d.low}, {d.high}]" for d in case.dynamic])
    start = time.perf_counter()
    model = case.build()
    if args.precision == INT8:
        model = quantize_x86(model, (case.make_input(example),), dynamic_shapes=case.dynamic_shapes())
        print(f"[{case.label}] quantized (PT2E, X86InductorQuantizer, dynamic export)", file=log, flush=True)
    print(f"[{case.label}] built in {time.perf_counter() - start:.1f}s; dynamic compile at example "
          f"{'x'.join(map(str, example))} ...", file=log, flush=True)
    try:
        start = time.perf_counter()
        dyn = ziggurat.compile(copy.deepcopy(model), (case.make_input(example),), backend="cpu", threads=args.threads,
                               dynamic_shapes=case.dynamic_shapes(), cache_dir=caches.fresh())
        summary.dyn_compile_s = time.perf_counter() - start
        summary.export_s = dict(dyn.report.pass_times).get("export")
    except Exception as exc:
        summary.error = "dynamic compile failed: " + error_line(exc)
        return summary, []
    inductor: Runner | None = None
    if not args.no_inductor:
        entry = InductorFreezeEntry if args.precision == INT8 else InductorEntry
        inductor = torch.compile(entry(copy.deepcopy(model)), dynamic=True)
    graphs = _unique_graphs()
    rows = [bench_shape(case, shape, model, inductor, dyn, caches, args, log) for shape in case.shapes]
    summary.inductor_graphs = _unique_graphs() - graphs if inductor is not None else None
    summary.dyn_builds = int(dyn.report.stats.get(SPECIALIZED, 0))
    summary.range_build = str(dyn.report.stats.get(RANGE_BUILD, ""))
    summary.range_build_s = dict(dyn.report.pass_times).get("range build")
    summary.specializations = dyn.specializations
    summary.range_lows = dict(zip((s.name for s in dyn.symbols.symbols), dyn.range_lows or []))
    summary.pinned = [_label({s.name: v for s, v in zip(dyn.symbols.symbols, p.pinned) if v is not None})
                      for p in dyn.pinned_builds]
    return summary, rows


def run(args: argparse.Namespace, log: TextIO) -> dict[str, Any]:
    info = host_info(args.threads)
    cases = _cases(args.quick)
    chosen = [cases[name] for name in args.model_list]
    old_threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    summaries: list[ModelSummary] = []
    rows: list[ShapeRow] = []
    start = time.perf_counter()
    try:
        freezing = FreezingOn() if args.precision == INT8 else contextlib.nullcontext()
        with _cold_inductor_cache(not args.no_inductor, log), _cold_ziggurat_caches() as caches, torch.no_grad(), \
                freezing:
            if not args.no_inductor:
                print("warming up the Inductor toolchain (not reported) ...", file=log, flush=True)
                warm_up_inductor_toolchain()
            for case in chosen:
                summary, model_rows = bench_case(case, args, caches, log)
                summaries.append(summary)
                rows += model_rows
                reset_compiler_caches()
                gc.collect()
    finally:
        torch.set_num_threads(old_threads)
    info["load_average_end"] = load_average()
    return {
        "meta": info,
        "config": {"quick": args.quick, "models": args.model_list, "threads": args.threads, "rounds": args.rounds,
                   "warmup": args.warmup, "target_ms": args.target_ms, "inductor": not args.no_inductor,
                   "precision": args.precision,
                   "wall_s": round(time.perf_counter() - start, 2)},
        "models": [asdict(s) for s in summaries],
        "rows": [asdict(r) for r in rows],
    }


# -- the table ----------------------------------------------------------------------------------------

def _ms(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _num(value: float | None, fmt: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{fmt}}{suffix}"


def _errs(row: ShapeRow, threshold: float, int8: bool) -> str:
    """``--precision int8``: Inductor's distance from eager is the measure of the quantum moves a
    deep network carries (ResNet-50: 5-9 %), so its cell is not flagged and ours are flagged
    past ``max(INT8_MISMATCH, 2 x Inductor's)``."""
    cells = []
    inductor = row.max_rel_err.get(INDUCTOR_DYN)
    for name in (INDUCTOR_DYN, STATIC, DYNAMIC):
        err = row.max_rel_err.get(name)
        cell = "-" if err is None else f"{err:.1e}"
        limit = threshold
        if int8:
            limit = float("inf") if name == INDUCTOR_DYN else max(threshold, 2 * (inductor or 0.0))
        if err is not None and err > limit:
            cell += " MISMATCH"
        cells.append(cell)
    return " / ".join(cells)


def render(report: dict[str, Any]) -> str:
    meta, config = report["meta"], report["config"]
    int8 = config.get("precision") == INT8
    threshold = INT8_MISMATCH if int8 else MISMATCH_THRESHOLD
    load = "/".join(f"{v:.2f}" for v in meta["load_average_start"] or [])
    load_end = "/".join(f"{v:.2f}" for v in meta["load_average_end"] or [])
    lines = [
        f"Ziggurat dynamic-shapes benchmark  {meta['date']}  commit {meta['git_commit'] or '?'}"
        + ("  (--quick: tiny configs)" if config["quick"] else ""),
        f"CPU: {meta['cpu_model']} (LLVM: {meta['llvm_host_cpu'] or '?'}), {meta['logical_cores']} logical cores, "
        f"{meta['usable_cores']} usable; torch {meta['torch_version']}, python {meta['python_version']}",
        f"threads {meta['threads']}; load average at start {load or '?'}, at end {load_end or '?'}; "
        f"{config['rounds']} interleaved rounds after {config['warmup']} warm-up rounds, median per-call ms; "
        "no_grad; " + ("int8: every column runs the model quantized once with PT2E (X86InductorQuantizer) on a "
                       "dynamic export; Inductor with freezing; errors against its eager output, flagged past max(5e-2, "
                       "2 x Inductor's)" if int8 else "fp32"),
    ]
    if (warning := busy_machine_warning(meta)) is not None:
        lines.append(warning)
    lines += [
        "",
        "The dynamic module (zig-dyn) exports once. Where the CPU backend makes a range build, one build serves",
        "every size from each symbol's floor (`dyn build s` = range; floors below); a size below a floor is served",
        "by a range build with it pinned (`range, batch=1`, seconds where that shape made it); where the range",
        "build is declined (reason below), each new size tuple is a static build specialized to it, and",
        "`dyn build s` (that build) is the honest per-shape cost.",
        "dyn/static = zig-dyn ms / zig-static ms; x ind-dyn = inductor-dyn ms / zig-dyn ms; ind 1st s = Inductor's",
        "first call at the shape (a Dynamo (re)compile where it made one); static compile s = a fresh",
        "ziggurat.compile of that shape, wall clock. Object-code and Inductor caches are cold.",
        "",
        "| model | shape | eager ms | inductor-dyn ms | zig-static ms | zig-dyn ms | dyn/static | x ind-dyn "
        "| dyn build s | static compile s | ind 1st s | max rel err ind / static / dyn |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in report["rows"]:
        row = ShapeRow(**r)
        if row.dyn_built_at == "range":
            build = "range"
        elif row.dyn_built_at.startswith("pinned"):
            first_made = row.dyn_built_at == "pinned-call"
            build = f"range, {row.dyn_pinned}" + (f": {_num(row.dyn_build_s, '.2f')}" if first_made else "")
        else:
            build = _num(row.dyn_build_s, ".2f") + (" (at compile)" if row.dyn_built_at == "compile" else "")
        ind_first = _num(row.inductor_first_call_s, ".2f")
        if row.inductor_new_graphs:
            ind_first += f" ({row.inductor_new_graphs} graph{'s' if row.inductor_new_graphs > 1 else ''})"
        cells = [row.model, "x".join(map(str, row.shape)), *(_ms(row.median_ms.get(n)) for n in RUNNERS),
                 _num(row.ratio(DYNAMIC, STATIC), ".2f"), _num(row.ratio(INDUCTOR_DYN, DYNAMIC), ".2f", "x"),
                 build, _num(row.static_compile_s, ".2f"), ind_first, _errs(row, threshold, int8)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for s in report["models"]:
        if s["error"] is not None:
            lines.append(f"- {s['model']}: {s['error']}")
            continue
        specs = "; ".join(_label(d) for d in s["specializations"])
        made = s.get("range_build", "").startswith("one build")
        lows = s.get("range_lows") or {}
        served = ", ".join(f"{k} from {v}" for k, v in lows.items()) or "every size from 2"
        pinned = s.get("pinned") or []
        range_text = (f"range build {_num(s.get('range_build_s'), '.2f', ' s')} serves {served}"
                      + (f", and range builds with {'; '.join(pinned)} pinned the sizes below" if pinned else "")
                      if made else f"range build {s.get('range_build') or '-'}")
        lines.append(
            f"- {s['model']} ({s['description']}; dynamic {', '.join(s['dynamic_dims'])}): {range_text}; zig-dyn made "
            f"{s['dyn_builds']} per-size build(s) [{specs}]; one-time export {_num(s['export_s'], '.2f', ' s')}, "
            f"dynamic compile (export + {'the range build' if made else 'the example ' + 'x'.join(map(str, s['example_shape'])) + chr(39) + 's build'}) "
            f"{_num(s['dyn_compile_s'], '.2f', ' s')}"
            + (f"; Inductor dynamic compiled {s['inductor_graphs']} Dynamo graph(s)" if s["inductor_graphs"] is not None
               else ""))
    for r in report["rows"]:
        for name, err in r["errors"].items():
            lines.append(f"- n/a {r['model']} {'x'.join(map(str, r['shape']))} {name}: {err}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/dynamic_shapes.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="tiny configs, two shapes per model, few rounds")
    p.add_argument("--models", help="comma-separated from bert-base,gpt2,resnet50 (default: all)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads and ziggurat threads= (default: usable cores; --quick: 1)")
    p.add_argument("--rounds", type=int, default=None, help=f"timed rounds (default {DEFAULT_ROUNDS}; quick {QUICK_ROUNDS})")
    p.add_argument("--warmup", type=int, default=None, help=f"untimed rounds (default {DEFAULT_WARMUP}; quick {QUICK_WARMUP})")
    p.add_argument("--target-ms", type=float, default=None,
                   help=f"batch calls so one sample lasts about this long (default {DEFAULT_TARGET_MS}; quick {QUICK_TARGET_MS})")
    p.add_argument("--no-inductor", action="store_true", help="leave out the Inductor column")
    p.add_argument("--json", type=Path, help="write every number (including raw samples) to this file")
    p.add_argument("--precision", choices=("fp32", INT8), default="fp32",
                   help="int8: every column runs the model quantized with PT2E (X86InductorQuantizer)")
    args = p.parse_args(argv)
    known = list(_cases(quick=True))
    args.model_list = [m.strip() for m in (args.models or ",".join(known)).split(",") if m.strip()]
    unknown = [m for m in args.model_list if m not in known]
    if unknown or not args.model_list:
        p.error(f"unknown model(s) {', '.join(unknown) or '(none given)'}; choose from {','.join(known)}")
    if args.threads is None:
        args.threads = 1 if args.quick else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                             else (os.cpu_count() or 1))
    args.rounds = args.rounds if args.rounds is not None else (QUICK_ROUNDS if args.quick else DEFAULT_ROUNDS)
    args.warmup = args.warmup if args.warmup is not None else (QUICK_WARMUP if args.quick else DEFAULT_WARMUP)
    args.target_ms = args.target_ms if args.target_ms is not None else (QUICK_TARGET_MS if args.quick else DEFAULT_TARGET_MS)
    if args.threads < 1 or args.rounds < 1 or args.warmup < 0 or args.target_ms <= 0:
        p.error("--threads and --rounds must be >= 1, --warmup >= 0, --target-ms > 0")
    return args


def main(argv: list[str] | None = None, out: TextIO | None = None, log: TextIO | None = None) -> int:
    args = parse_args(argv)
    stdout = out or sys.stdout
    report = run(args, log or sys.stderr)
    print(render(report), file=stdout)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json}", file=stdout)
    return 0 if all(s["error"] is None for s in report["models"]) else 1


if __name__ == "__main__":
    sys.exit(main())
