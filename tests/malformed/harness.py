"""The mutation harness: seeded mutations of valid inputs, run through ``ziggurat-opt`` and
``ziggurat.load`` in child processes, every outcome classified.

Clean outcomes: ``ok`` (the tool succeeded) and ``diagnostic`` (``ziggurat-opt`` exited with
status 1 and a ``ziggurat-opt: ... error: ...`` line; ``ziggurat.load`` raised ``LoadError``).
Everything else is a failure: ``signal`` (a crash), ``hang``, ``internal`` (``ziggurat-opt``'s
"internal error"), ``raw`` (a traceback, another exception, an unexpected exit status).

    python -m tests.malformed.harness --inputs 300 --seed 1 [--jobs 2] [--out DIR]

prints the counts and writes every failing input with its outcome under ``DIR``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.malformed.mutations import mutate

ROOT = Path(__file__).resolve().parents[2]
CLEAN = ("ok", "diagnostic")
_DIAGNOSTIC = re.compile(r"^ziggurat-opt: (\S+: )?error: ", re.MULTILINE)
_SUFFIX = {"mlir": ".mlir", "ts": ".ts", "pt": ".pt", "zig": ".zig", "zig-cpu": ".zig"}


def build_corpus(out: Path) -> list[dict[str, Any]]:
    """The seeds (``corpus.py``), built in a child process."""
    subprocess.run([sys.executable, "-m", "tests.malformed.corpus", str(out)], cwd=ROOT, check=True,
                   capture_output=True, timeout=900)
    return json.loads((out / "seeds.json").read_text())


def _runs(seed: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """The tool runs of one mutated input."""
    if seed["kind"].startswith("zig"):
        return [{"tool": "load", "path": str(path)}]
    base = [str(path), *seed["args"], "--elide-resources"]
    if seed["kind"] == "ts":
        base = [str(path), "-f", "torchscript-ir", *seed["args"], "--elide-resources"]
    runs = [{"tool": "ziggurat-opt", "argv": base}]
    level = seed["name"].rsplit("_", 1)[-1]
    if seed["kind"] in ("ts", "pt") or level in ("torch.mlir", "fused.mlir"):
        runs.append({"tool": "ziggurat-opt", "argv": [*base, "--emit=loop"]})
    return runs


def plan(seeds: list[dict[str, Any]], corpus: Path, inputs: int, seed: int, work: Path) -> list[dict[str, Any]]:
    """``inputs`` mutated inputs (round robin over the seeds) and their runs."""
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    jobs: list[dict[str, Any]] = []
    for n in range(inputs):
        s = seeds[n % len(seeds)]
        how, data = mutate(s["kind"], (corpus / s["file"]).read_bytes(), rng)
        path = work / f"{n:04d}_{Path(s['file']).stem}{_SUFFIX[s['kind']]}"
        path.write_bytes(data)
        for run in _runs(s, path):
            jobs.append({"input": n, "seed": s["name"], "mutation": how, **run})
    return jobs


def execute(jobs: list[dict[str, Any]], workers: int) -> list[dict[str, Any]]:
    """Runs ``jobs`` on ``workers`` fork servers (``runner.py``)."""
    with tempfile.TemporaryDirectory() as tmp:
        procs: list[tuple[subprocess.Popen[bytes], Path]] = []
        for w in range(workers):
            chunk = jobs[w::workers]
            jobs_file, results_file = Path(tmp) / f"jobs{w}.json", Path(tmp) / f"results{w}.json"
            jobs_file.write_text(json.dumps(chunk))
            procs.append((subprocess.Popen([sys.executable, "-m", "tests.malformed.runner", str(jobs_file),
                                            str(results_file)], cwd=ROOT), results_file))
        results: list[dict[str, Any]] = []
        for proc, results_file in procs:
            if proc.wait() != 0:
                raise RuntimeError(f"the runner failed with status {proc.returncode}")
            results += json.loads(results_file.read_text())
    return sorted(results, key=lambda r: (r["input"], r.get("argv", [])))


def classify(result: dict[str, Any]) -> str:
    if result["timed_out"]:
        return "hang"
    if result["signal"] is not None:
        return f"signal:{signal.Signals(result['signal']).name}"
    status, stderr = result["status"], result["stderr"]
    if status == 0:
        return "ok"
    if "Traceback (most recent call last)" in stderr:
        return "raw"
    if result["tool"] == "load":
        return "diagnostic" if status == 3 else "raw"
    if "internal error" in stderr:
        return "internal"
    return "diagnostic" if status == 1 and _DIAGNOSTIC.search(stderr) else "raw"


@dataclass
class Summary:
    inputs: int
    runs: int
    outcomes: Counter[str] = field(default_factory=Counter[str])
    by_tool: Counter[tuple[str, str]] = field(default_factory=Counter[tuple[str, str]])
    failures: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def format(self) -> str:
        lines = [f"{self.inputs} mutated inputs, {self.runs} runs"]
        lines += [f"  {k:12s} {v}" for k, v in sorted(self.outcomes.items())]
        lines += [f"  {tool:12s} {k:12s} {v}" for (tool, k), v in sorted(self.by_tool.items())]
        for f in self.failures[:20]:
            detail = (f["stderr"].strip().splitlines() or [""])[-1][:200]
            lines.append(f"  FAIL {f['outcome']}: {f['seed']} ({f['mutation']}) "
                         f"{' '.join(f.get('argv', [])[1:]) or f['tool']}: {detail}")
        return "\n".join(lines)


def summarize(results: list[dict[str, Any]]) -> Summary:
    summary = Summary(inputs=len({r["input"] for r in results}), runs=len(results))
    for r in results:
        r["outcome"] = classify(r)
        summary.outcomes[r["outcome"]] += 1
        summary.by_tool[(r["tool"], r["outcome"])] += 1
        if r["outcome"] not in CLEAN:
            summary.failures.append(r)
    return summary


def run_harness(inputs: int, seed: int, workers: int, work: Path, corpus: Path | None = None) -> Summary:
    if corpus is None:
        corpus = work / "corpus"
        seeds = build_corpus(corpus)
    else:
        seeds = json.loads((corpus / "seeds.json").read_text())
    return summarize(execute(plan(seeds, corpus, inputs, seed, work / "inputs"), workers))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "malformed")
    parser.add_argument("--corpus", type=Path, default=None, help="a corpus built before (skips building)")
    args = parser.parse_args()
    summary = run_harness(args.inputs, args.seed, args.jobs, args.out, args.corpus)
    print(summary.format())
    (args.out / "failures.json").write_text(json.dumps(summary.failures, indent=1))
    return 0 if not summary.failures else 1


if __name__ == "__main__":
    sys.exit(main())
