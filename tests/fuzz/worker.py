"""A fuzz worker process: checks programs and reports JSON lines on its stdout.

    python -m tests.fuzz.worker --seed S [--profile dev] [--configs cpu-avx512-ts,...]
        reads program indices (or ``file PATH`` lines) from stdin, one per line;
    python -m tests.fuzz.worker --program PATH [--configs ...]
        checks one program file and exits.

Before each configuration it reports ``{"event": "config", ...}`` so that the runner can
name the configuration that hung or killed the process; then ``{"event": "result", ...}``.
The protocol uses a private copy of stdout: anything else printing goes to stderr.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from tests.fuzz.generator import PROFILES, SPEC_ERRORS, generate
from tests.fuzz.oracle import GENERATING, Config, all_configs, check_program, every_config
from tests.fuzz.program import Node, Program, TensorSpec
from tests.fuzz.thread_counts import parse_threads, threads_for


def _channel() -> TextIO:
    """The protocol stream (the real stdout); sys.stdout is pointed at stderr."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr
    return out


def select_configs(names: str | None) -> list[Config]:
    """The named configurations (the ``-dyn`` ones only by name), else the default set."""
    if not names:
        return all_configs()
    wanted = names.split(",")
    known = every_config()
    unknown = [n for n in wanted if n not in {c.name for c in known}]
    if unknown:  # a misspelt or unavailable name used to drop out silently
        raise SystemExit(f"unknown configuration(s) {', '.join(unknown)}; this host has: "
                         f"{', '.join(c.name for c in known)}")
    return [c for c in known if c.name in wanted]


def check(program: Program, configs: list[Config], channel: TextIO, index: int | str, threads: int,
          cache_dir: str | None) -> dict[str, Any]:
    start = time.perf_counter()

    def progress(config: Config) -> None:
        channel.write(json.dumps({"event": "config", "index": index, "config": config.name, "threads": threads}) + "\n")

    result = check_program(program, configs, threads, cache_dir, progress=progress)
    return {"event": "result", "index": index, "program": program.name, "ops": program.ops(),
            "n_inputs": len(program.inputs), "aliased": any(i.alias for i in program.inputs),
            "layouts": sorted({i.layout for i in program.inputs}), "ranks": sorted({len(i.shape) for i in program.inputs}),
            "dtypes": sorted({i.dtype for i in program.inputs}), "result": result.to_dict(),
            "seconds": time.perf_counter() - start, "spec_errors": dict(SPEC_ERRORS), "threads": threads}


def warm_up(configs: list[Config], seed: int, profile: str | None) -> None:
    """Load what the first program would load lazily (the compiler's modules and backends,
    and, for a ``profile`` that generates, torch's OpInfo database), so that the runner's
    no-progress clock, which starts at ``ready``, measures programs and not imports."""
    if profile is not None:
        generate(seed, 0, PROFILES[profile])
    x = TensorSpec("x0", [3], "float32", "normal", 1)
    check_program(Program("warm_up", [x], [], [Node(["v1 = x0 * 2"], ["v1"], ["x0"], "mul")], ["v1"]),
                  configs, fresh=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES))
    parser.add_argument("--configs", default=None)
    parser.add_argument("--threads", type=parse_threads, default="1", help="a count, or 'drawn' per program")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--program", default=None, help="check this program file and exit")
    parser.add_argument("--files", action="store_true", help="only 'file PATH' lines will come (no generator)")
    args = parser.parse_args(argv)
    faulthandler.enable(sys.stderr)
    channel = _channel()
    configs = select_configs(args.configs)
    if args.program:
        program = Program.from_json(open(args.program).read())
        threads = threads_for(args.threads, args.seed, Path(args.program).stem)
        channel.write(json.dumps(check(program, configs, channel, args.program, threads, args.cache_dir)) + "\n")
        return 0
    warm_up(configs, args.seed, None if args.files else args.profile)
    channel.write(json.dumps({"event": "ready"}) + "\n")  # imports done: the runner's clock starts now
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if line.startswith("file "):
            path = line[5:]
            program = Program.from_json(open(path).read())
            index: int | str = path
        else:
            index = int(line)
            channel.write(json.dumps({"event": "config", "index": index, "config": GENERATING}) + "\n")
            program = generate(args.seed, index, PROFILES[args.profile])
        threads = threads_for(args.threads, args.seed, Path(index).stem if isinstance(index, str) else index)
        channel.write(json.dumps(check(program, configs, channel, index, threads, args.cache_dir)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
