"""Minimize one failing program in this process and write its repro:

    python -m tests.fuzz.minimize_cli PROGRAM.json OUTCOME.json OUT_DIR [--budget S]

Prints one JSON line: the repro's path, the ops left, trials and seconds.
(The runner starts one such process per failure, so a crash while minimizing costs only it.)
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from tests.fuzz.oracle import Outcome
from tests.fuzz.program import Program
from tests.fuzz.triage import minimize_failure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("program")
    parser.add_argument("outcome")
    parser.add_argument("out")
    parser.add_argument("--budget", type=float, default=240.0)
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args(argv)
    logging.getLogger("ziggurat").setLevel(logging.CRITICAL)
    program = Program.from_json(Path(args.program).read_text())
    outcome = Outcome(**json.loads(Path(args.outcome).read_text()))
    path, small, stats = minimize_failure(program, outcome, Path(args.out), args.budget, args.cache_dir, args.timeout)
    print(json.dumps({"repro": str(path), "ops": small.ops(), "inputs": [i.shape for i in small.inputs],
                      "kind": outcome.kind, "config": outcome.config, "trials": stats.trials,
                      "seconds": round(stats.seconds, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
