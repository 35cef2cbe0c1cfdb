"""Mutated inputs end in a clean diagnostic or succeed: never a signal, a hang, a traceback,
a raw exception or an internal error (issue 14, "Malformed input, same standard").

``make test`` runs a fixed seeded slice; ``pytest -m slow`` runs the issue's size (300
mutated inputs) on three seeds.  ``python -m tests.malformed.harness`` runs any size.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.malformed.harness import build_corpus, classify, execute, plan, run_harness, summarize

SLICE_INPUTS = 30


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    build_corpus(out)
    return out


def test_seeded_slice(corpus: Path, tmp_path: Path) -> None:
    """The seeded slice ends in diagnostics or successes only.  The same fork servers also run
    two inputs both forked and as the real ``ziggurat-opt`` process (``exec``), which must give
    the same outcome and message: the check that forking stands for the real tool.  (One test,
    so that the corpus and the servers are set up once, whichever xdist worker runs it.)"""
    seeds = json.loads((corpus / "seeds.json").read_text())
    jobs = plan(seeds, corpus, SLICE_INPUTS, 1, tmp_path / "inputs")
    bad = tmp_path / "bad.mlir"
    bad.write_text((corpus / "mixed_torch.mlir").read_text().replace("torch.aten.", "torch.aten.x", 1))
    twins: list[dict[str, Any]] = []
    # forked, exec'd; exec'd, forked: the two exec'd runs (a whole process each, the slow jobs)
    # are next to each other in the job list, so execute's round robin gives one to each server
    for path, exec_ in ((corpus / "mixed_torch.mlir", False), (corpus / "mixed_torch.mlir", True), (bad, True),
                        (bad, False)):
        twins.append({"input": SLICE_INPUTS + len(twins), "seed": path.name, "mutation": "",
                      "tool": "ziggurat-opt", "argv": [str(path), "--elide-resources"], "exec": exec_})
    results = execute(jobs + twins, workers=2)
    twin_results = [r for r in results if r["input"] >= SLICE_INPUTS]
    summary = summarize([r for r in results if r["input"] < SLICE_INPUTS])
    print(summary.format())
    assert summary.inputs == SLICE_INPUTS and summary.runs > SLICE_INPUTS
    assert summary.outcomes["diagnostic"] > 0  # the mutations do reach the error paths
    assert not summary.failures, summary.format()

    assert [classify(r) for r in twin_results] == ["ok", "ok", "diagnostic", "diagnostic"], twin_results
    assert twin_results[2]["stderr"] == twin_results[3]["stderr"]


def _result(**kw: Any) -> dict[str, Any]:
    return {"tool": "ziggurat-opt", "timed_out": False, "signal": None, "status": 1, "stderr": "", **kw}


@pytest.mark.parametrize("result, outcome", [
    (_result(status=0), "ok"),
    (_result(stderr="ziggurat-opt: x.mlir:3:4: error: Expected ':'\n"), "diagnostic"),
    (_result(stderr="warning: something\nziggurat-opt: error: torch.aten.mm: operand\n"), "diagnostic"),
    (_result(signal=int(signal.SIGSEGV)), "signal:SIGSEGV"),
    (_result(timed_out=True), "hang"),
    (_result(stderr="ziggurat-opt: internal error: KeyError: 'x' (set ZIGGURAT_DEBUG=1)\n"), "internal"),
    (_result(stderr="Traceback (most recent call last):\n  ...\nValueError: x\n"), "raw"),
    (_result(stderr="something else\n"), "raw"),
    (_result(status=2, stderr="usage: ziggurat-opt\nziggurat-opt: error: bad flag\n"), "raw"),
    (_result(tool="load", status=3, stderr="LoadError: load: x is corrupt\n"), "diagnostic"),
    (_result(tool="load", status=4, stderr="Traceback (most recent call last):\nKeyError: 'backend'\n"), "raw"),
], ids=["ok", "parse-error", "after-a-warning", "segfault", "hang", "internal", "traceback", "unexpected",
        "usage", "load-error", "load-raw"])
def test_classification(result: dict[str, Any], outcome: str) -> None:
    assert classify(result) == outcome


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_issue_sized_run(corpus: Path, tmp_path: Path, seed: int) -> None:
    summary = run_harness(300, seed=seed, workers=2, work=tmp_path, corpus=corpus)
    print(summary.format())
    assert not summary.failures, summary.format()
