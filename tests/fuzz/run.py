"""Differential fuzzing at scale: ``make fuzz N=10000 SEED=1`` runs

    python -m tests.fuzz.run --seed SEED --n N --jobs 2 --out build/fuzz/SEED

Programs ``0..N-1`` of the seed are spread over ``--jobs`` worker processes (one per
core); a worker that dies (segfault) or stops reporting (hang: ``--timeout`` seconds of the
worker's own CPU time per configuration, so a starved worker on a loaded host is not a hang,
or ``--wall-timeout`` wall seconds, for a worker stuck without using CPU) is killed, that
program is recorded as ``segfault``/``hang`` for the configuration it was running, and a new
worker takes the remaining programs.

Writes into ``--out``: ``results.jsonl`` (one line per program), ``summary.md`` and
``summary.json`` (counts by outcome, by configuration, by reason; fallbacks by op and
reason; op coverage; tolerance margins), ``failures/`` (every failing program as an
unminimized standalone repro) and ``repros/`` (minimized repros, ``--minimize`` per
failure class, each run in its own process).  ``--programs DIR`` checks program files
(e.g. from the NNSmith bridge) instead of generating.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fuzz.generator import PROFILES, generate
from tests.fuzz.oracle import EAGER_AUTOCAST, GENERATING, Config
from tests.fuzz.program import Program
from tests.fuzz.repro import write_repro
from tests.fuzz.summary import summarize
from tests.fuzz.thread_counts import DRAWN, parse_threads
from tests.fuzz.triage import FAILURES, compile_options

ROOT = Path(__file__).resolve().parents[2]
#: seconds a new worker may take to import torch and ziggurat
STARTUP_TIMEOUT = 600.0
#: ``--wall-timeout`` by default: a worker that makes no progress for this many times ``--timeout``
#: wall seconds is hung even if it used little CPU (a deadlock or a wait)
WALL_FACTOR = 5.0
#: how often a slot looks at its worker's CPU time
POLL_SECONDS = 2.0
#: A program file larger than this is recorded as invalid without being read (``_oversized``).
MAX_PROGRAM_FILE_BYTES = 64 * 2**20
#: a gap this long between two looks means the runner itself did not run (stopped with SIGSTOP
#: to free the cores for a while, a suspended machine): nobody's time, not the worker's
SUSPENDED_GAP = 15 * POLL_SECONDS


class RunningClock:
    """Wall seconds since it was made, leaving out the gaps in which the runner was stopped (a
    pause of the whole run longer than ``--wall-timeout`` used to read as a hang of every
    worker that was in the middle of a program: seed 13, programs 5690 and 5692, which take 7
    and 4 seconds)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._start = self._last = now()
        self._skipped = 0.0

    def elapsed(self) -> float:
        t = self._now()
        if t - self._last > SUSPENDED_GAP:
            self._skipped += t - self._last - POLL_SECONDS
        self._last = t
        return t - self._start - self._skipped


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a live process and its reaped children, from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # fields[0] is the state (field 3 of stat); utime, stime, cutime, cstime are fields 14-17
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


class Worker:
    """One worker subprocess and a thread that forwards its protocol lines to a queue."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = open(log, "a")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     text=True, bufsize=1, cwd=ROOT)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        # the worker says when its imports are done; a hang is counted from then on
        try:
            self.ready = self.lines.get(timeout=STARTUP_TIMEOUT) is not None
        except queue.Empty:
            self.ready = False

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next_line(self, timeout: float, wall_timeout: float) -> str | None:
        """The worker's next protocol line (None once it exits); ``queue.Empty`` after ``timeout``
        seconds of its CPU time, or ``wall_timeout`` wall seconds, without one."""
        cpu_start, wall = cpu_seconds(self.proc.pid), RunningClock()
        while True:
            try:
                return self.lines.get(timeout=POLL_SECONDS)
            except queue.Empty:
                cpu = cpu_seconds(self.proc.pid) - cpu_start
                if cpu > timeout or wall.elapsed() > wall_timeout:
                    raise

    def send(self, job: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(job + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _died(index: int | str, config: str, kind: str, detail: str, program: str, threads: int = 1) -> dict[str, Any]:
    """The record of a worker that died or hung in ``config``; in eager's own autocast run
    (``EAGER_AUTOCAST``) or while the program was generated (``GENERATING``: the generator's
    probes run eager) the program is invalid: there is nothing to compare with."""
    outcome = {"config": config, "kind": kind, "reason": kind, "detail": detail, "fallbacks": {}, "native": [],
               "fusions": {}, "compared": 0, "masked": 0, "ratio": 0.0, "call_refusals": [], "threads": threads}
    outcomes, invalid = [outcome], ""
    if config.startswith(EAGER_AUTOCAST) or config == GENERATING:
        outcomes, invalid = [], f"{config}: eager {'died' if kind == 'segfault' else 'hung'}: {detail.splitlines()[0]}"
    return {"event": "result", "index": index, "program": program, "ops": [], "result":
            {"program": program, "outcomes": outcomes, "invalid": invalid, "fresh_checked": True}, "seconds": 0.0}


def _last_traceback(log: Path) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    marker = text.rfind("Fatal Python error")
    return text[marker:][:3000] if marker >= 0 else text[-2000:]


def serve(jobs: "queue.Queue[str]", argv: list[str], log: Path, limits: tuple[float, float], out: list[dict[str, Any]],
          lock: threading.Lock, names: dict[str, str], progress: Any) -> None:
    """One slot: feed jobs to a worker, restarting it after a hang or a death."""
    worker: Worker | None = None
    while True:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            break
        if worker is None:
            worker = Worker(argv, log)
        worker.send(job)
        config, threads = "start", 1
        while True:
            try:
                line = worker.next_line(*limits)
            except queue.Empty:
                worker.kill()
                worker = None
                detail = f"no progress for {limits[0]:.0f} CPU seconds (or {limits[1]:.0f} wall seconds) in {config}"
                record = _died(job, config, "hang", detail, names.get(job, job), threads)
                break
            if line is None:
                code = worker.proc.wait()
                worker.log.close()
                worker = None
                detail = f"worker died (exit status {code}) in {config}\n{_last_traceback(log)}"
                record = _died(job, config, "segfault", detail, names.get(job, job), threads)
                break
            event = json.loads(line)
            if event["event"] == "config":
                config, threads = event["config"], event.get("threads", threads)
                continue
            record = event
            break
        with lock:
            out.append(record)
            progress(record)
    if worker is not None:
        worker.close()


def run(args: argparse.Namespace) -> Path:
    out_dir = Path(args.out)
    (out_dir / "logs").mkdir(parents=True, exist_ok=True)
    cache = str(Path(args.cache_dir or out_dir / "cache").resolve())
    programs: dict[str, Program] = {}
    names: dict[str, str] = {}
    jobs: queue.Queue[str] = queue.Queue()
    oversized: list[dict[str, Any]] = []
    if args.programs:
        for path in sorted(p for p in Path(args.programs).glob("*.json") if not p.name.endswith(".outcome.json")):
            size = path.stat().st_size
            if size > MAX_PROGRAM_FILE_BYTES:  # never read: its literals alone would fill the memory
                oversized.append(_oversized(path, size))
                continue
            jobs.put(f"file {path.resolve()}")
            names[f"file {path.resolve()}"] = path.stem
    else:
        for i in range(args.start, args.start + args.n):
            jobs.put(str(i))
            names[str(i)] = f"s{args.seed}_g{i}"
    total = jobs.qsize() + len(oversized)
    argv = [sys.executable, "-m", "tests.fuzz.worker", "--seed", str(args.seed), "--profile", args.profile,
            "--threads", str(args.threads), "--cache-dir", cache]
    if args.configs:
        argv += ["--configs", args.configs]
    if args.programs:
        argv += ["--files"]
    results: list[dict[str, Any]] = []
    lock = threading.Lock()
    start = time.perf_counter()
    results_file = open(out_dir / "results.jsonl", "w")

    def progress(record: dict[str, Any]) -> None:
        results_file.write(json.dumps(record) + "\n")
        results_file.flush()
        done = len(results)
        kinds = [o["kind"] for o in record["result"]["outcomes"]]
        bad = [k for k in kinds if k in FAILURES]
        if bad or done % 50 == 0 or done == total:
            rate = done / max(time.perf_counter() - start, 1e-9)
            print(f"[{done}/{total}] {record['program']}: {','.join(sorted(set(bad))) or 'ok'} "
                  f"({rate * 60:.0f} programs/min)", flush=True)

    for record in oversized:
        results.append(record)
        progress(record)
    threads = [threading.Thread(target=serve, args=(jobs, argv, out_dir / "logs" / f"worker-{k}.log",
                                                     (args.timeout, args.wall_timeout or WALL_FACTOR * args.timeout),
                                                     results, lock, names, progress)) for k in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results_file.close()
    elapsed = time.perf_counter() - start
    failures = save_failures(results, args, out_dir)
    minimized = minimize_failures(failures, args, out_dir, cache) if args.minimize else []
    (out_dir / "minimized.json").write_text(json.dumps(minimized, indent=1))
    return write_summary(out_dir, results, elapsed, args, minimized)


def _oversized(path: Path, size: int) -> dict[str, Any]:
    """The record of a program file too large to load (NNSmith seed 187 wrote a 3.9 GB one: a
    204M-element convolution weight as a literal; loading it took 24 GB and the OOM killer
    took the runner): invalid, not run."""
    reason = f"program file of {size / 2**20:.0f} MB, over the runner's {MAX_PROGRAM_FILE_BYTES / 2**20:.0f} MB"
    return {"event": "result", "index": f"file {path.resolve()}", "program": path.stem, "ops": [],
            "result": {"program": path.stem, "outcomes": [], "invalid": reason}, "seconds": 0.0}


def write_summary(out_dir: Path, results: list[dict[str, Any]], elapsed: float, args: argparse.Namespace,
                  minimized: list[dict[str, Any]]) -> Path:
    summary = summarize(results, elapsed, vars(args), minimized)
    (out_dir / "summary.json").write_text(json.dumps(summary["data"], indent=1))
    (out_dir / "summary.md").write_text(summary["markdown"])
    print(summary["markdown"])
    return out_dir


def program_of(record: dict[str, Any], args: argparse.Namespace) -> Program:
    """The program of a result record: ``index`` is a generated program's number (an int, or
    the job string ``"8621"`` in the record of a worker that died) or ``"file <path>"``."""
    index = record["index"]
    if isinstance(index, str) and not index.isdigit():
        return Program.from_json(Path(index.removeprefix("file ")).read_text())
    return generate(args.seed, int(index), PROFILES[args.profile])


def save_failures(results: list[dict[str, Any]], args: argparse.Namespace, out_dir: Path) -> list[dict[str, Any]]:
    """Every failing program as an unminimized standalone repro (one per program)."""
    failures: list[dict[str, Any]] = []
    for record in results:
        outcomes = [o for o in record["result"]["outcomes"] if o["kind"] in FAILURES]
        if not outcomes:
            continue
        first = max(outcomes, key=lambda o: FAILURES.index(o["kind"]))  # the most severe, first config
        program = program_of(record, args)
        configs = ", ".join(f"{o['config']}: {o['kind']}" for o in outcomes)
        config = Config.parse(first["config"]) if first["config"] in _config_names() else Config("cpu", "torchscript", "avx512")
        path = write_repro(out_dir / "failures", f"{first['kind']}-{first['config']}-{program.name}", program,
                           compile_options(config, first.get("threads", 1)), first["kind"], first["reason"],
                           f"{first['detail']}\nfailing configurations: {configs}")
        failures.append({"record": record, "outcome": first, "path": str(path), "program": program})
    return failures


def _config_names() -> set[str]:
    from tests.fuzz.oracle import every_config

    return {c.name for c in every_config(("avx512", "avx2", "scalar"))}


def failure_class(outcome: dict[str, Any]) -> str:
    """The coarse class of a failure before minimization: kind, backend family, reason."""
    backend = outcome["config"].split("-")[0]
    return f"{outcome['kind']}|{backend}|{outcome['reason']}"


def choose_for_minimization(failures: list[dict[str, Any]], total: int) -> list[dict[str, Any]]:
    """Up to ``total`` failures, round-robin over the coarse classes (every class gets one
    first); programs with the same op set in the same class count once."""
    classes: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    for f in failures:
        key = failure_class(f["outcome"])
        ops = frozenset(f["program"].ops())
        if (key, ops) in seen:
            continue
        seen.add((key, ops))
        classes.setdefault(key, []).append(f)
    chosen: list[dict[str, Any]] = []
    while len(chosen) < total and any(classes.values()):
        for members in classes.values():
            if members and len(chosen) < total:
                chosen.append(members.pop(0))
    return chosen


def minimize_failures(failures: list[dict[str, Any]], args: argparse.Namespace, out_dir: Path,
                      cache: str) -> list[dict[str, Any]]:
    """Minimize up to ``--minimize`` failures (see ``choose_for_minimization``), each in its own process."""
    chosen = choose_for_minimization(failures, args.minimize)
    work: queue.Queue[dict[str, Any]] = queue.Queue()
    for f in chosen:
        work.put(f)
    done: list[dict[str, Any]] = []
    lock = threading.Lock()
    repro_dir = out_dir / "repros"
    repro_dir.mkdir(parents=True, exist_ok=True)

    def slot() -> None:
        while True:
            try:
                f = work.get_nowait()
            except queue.Empty:
                return
            src = Path(f["path"]).with_suffix(".json")
            outcome_file = Path(f["path"]).with_suffix(".outcome")
            outcome_file.write_text(json.dumps(f["outcome"]))
            cmd = [sys.executable, "-m", "tests.fuzz.minimize_cli", str(src), str(outcome_file), str(repro_dir),
                   "--budget", str(args.minimize_budget), "--cache-dir", cache, "--timeout", str(args.timeout)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                                      timeout=args.minimize_budget * 2 + 120)
                info = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else \
                    {"error": proc.stderr[-1500:]}
            except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError) as e:
                info = {"error": f"{type(e).__name__}"}
            info.update({"failure": f["path"], "class": failure_class(f["outcome"])})
            with lock:
                done.append(info)
                print(f"minimized {Path(f['path']).name}: {info.get('repro', info.get('error', ''))[:200]}", flush=True)

    threads = [threading.Thread(target=slot) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--out", default=None)
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES))
    parser.add_argument("--configs", default=None, help="comma-separated config names (default: all)")
    parser.add_argument("--threads", type=parse_threads, default=DRAWN,
                        help="native threads per compiled module: a count, or 'drawn' (1, 2 or 3 per program)")
    parser.add_argument("--timeout", type=float, default=180.0, help="CPU seconds of the worker without progress = hang")
    parser.add_argument("--wall-timeout", type=float, default=None,
                        help="wall seconds without progress = hang (default: 5 x --timeout)")
    parser.add_argument("--minimize", type=int, default=60, help="failures minimized at most (0: none)")
    parser.add_argument("--minimize-budget", type=float, default=150.0, help="seconds per minimization")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--programs", default=None, help="a directory of program .json files to check")
    parser.add_argument("--summary-only", action="store_true", help="rebuild summary.md from --out's results")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = str(ROOT / "build" / "fuzz" / (Path(args.programs).name if args.programs else str(args.seed)))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.summary_only:  # rebuild the summary of an earlier run in --out
        out_dir = Path(args.out)
        results = [json.loads(line) for line in (out_dir / "results.jsonl").read_text().splitlines() if line]
        minimized_file = out_dir / "minimized.json"
        minimized = json.loads(minimized_file.read_text()) if minimized_file.exists() else []
        write_summary(out_dir, results, sum(r.get("seconds", 0.0) for r in results) / max(1, args.jobs), args,
                      minimized)
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
