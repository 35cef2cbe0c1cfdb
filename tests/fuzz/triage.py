"""From a failing program to a minimized standalone repro."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fuzz.minimize import Predicate, Stats, minimize
from tests.fuzz.oracle import Config, Outcome, check_program, dynamic_dims
from tests.fuzz.program import Program
from tests.fuzz.repro import dynamic_shapes_source, write_repro

#: outcome kinds that are failures (refusals and fallbacks are counted, not failures)
FAILURES = ("wrong", "crash", "hang", "segfault")
ROOT = Path(__file__).resolve().parents[2]


def compile_options(config: Config, threads: int = 1, program: Program | None = None) -> dict[str, Any]:
    """``compile``'s options for ``config`` (with ``program``: a -dyn configuration's
    ``dynamic_shapes``, written as source in a repro)."""
    options: dict[str, Any] = config.options()
    if config.backend == "cpu":
        options["threads"] = threads
    spec = dynamic_dims(program) if config.dynamic and program is not None else None
    if spec is not None:
        options["dynamic_shapes"] = dynamic_shapes_source(spec[0])
    return options


def call_program(config: Config, program: Program) -> Program | None:
    """The program at the sizes a -dyn configuration calls it at besides the examples."""
    spec = dynamic_dims(program) if config.dynamic else None
    return spec[1] if spec is not None else None


def same_failure(config: Config, kind: str, reason: str, cache_dir: str | None = None,
                 threads: int = 1) -> Predicate:
    """Does a program still fail under ``config`` the same way?  (In this process: for hangs
    and segfaults the runner calls the minimizer in a subprocess per program.)"""

    def fails(program: Program) -> bool:
        result = check_program(program, [config], threads, cache_dir=cache_dir)
        if result.invalid:
            return False
        outcome = result.outcomes[0]
        if outcome.kind != kind:
            return False
        return kind != "crash" or outcome.reason == reason

    return fails


def same_death(config: Config, kind: str, timeout: float, cache_dir: str | None = None,
               threads: int = 1) -> Predicate:
    """Does a program still kill (``segfault``) or stall (``hang``) a worker process?"""
    import subprocess
    import sys
    import tempfile

    def fails(program: Program) -> bool:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(program.to_json())
        cmd = [sys.executable, "-m", "tests.fuzz.worker", "--program", f.name, "--configs", config.name,
               "--threads", str(threads)]
        if cache_dir:
            cmd += ["--cache-dir", cache_dir]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return kind == "hang"
        finally:
            Path(f.name).unlink(missing_ok=True)
        return kind == "segfault" and proc.returncode != 0 and '"event": "result"' not in proc.stdout

    return fails


def representative(outcomes: list[Outcome]) -> Outcome | None:
    """The failure to minimize: the first failing config (cpu/avx512/torchscript first)."""
    for kind in ("segfault", "hang", "crash", "wrong"):
        for o in outcomes:
            if o.kind == kind:
                return o
    return None


def minimize_failure(program: Program, outcome: Outcome, directory: Path, budget_s: float = 300.0,
                     cache_dir: str | None = None, timeout: float = 180.0) -> tuple[Path, Program, Stats]:
    config = Config.parse(outcome.config)
    if outcome.kind in ("hang", "segfault"):
        fails = same_death(config, outcome.kind, timeout, cache_dir, outcome.threads)
    else:
        fails = same_failure(config, outcome.kind, outcome.reason, cache_dir, outcome.threads)
    small, stats = minimize(program, fails, budget_s)
    last = outcome
    if outcome.kind not in ("hang", "segfault"):
        final = check_program(small, [config], outcome.threads, cache_dir=cache_dir).outcomes
        last = final[0] if final else outcome
    detail = last.detail or outcome.detail
    stem = f"{outcome.kind}-{outcome.config}-{program.name}"
    path = write_repro(directory, stem, small, compile_options(config, outcome.threads, program=small), outcome.kind,
                       last.reason or outcome.reason, detail, call_program(config, small))
    return path, small, stats
