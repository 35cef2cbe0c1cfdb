"""Every failure class the fuzzer found, as its minimized program (``repros/*.json``),
checked under the configuration it failed on with the fuzzer's oracle.

Each file holds ``{"config", "kind", "note", "program"}`` (and ``"threads"``, the native
threads of a cpu configuration, where not 1); ``python -m tests.fuzz.repro
tests/fuzz/repros/NAME.json --out DIR`` writes it as a standalone script.  A fixed class
passes (a clean refusal or a fallback counts as fixed: no silent wrong answer); ``OPEN``
lists the classes not fixed yet, as strict xfails, so a fix makes its entry leave.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fuzz.oracle import Config, check_program
from tests.fuzz.program import Program

REPROS = sorted((Path(__file__).parent / "repros").glob("*.json"))

#: file stem -> why it still fails (strict xfail)
OPEN: dict[str, str] = {
}


def _params() -> list[object]:
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(strict=True, reason=OPEN[p.stem])]
                         if p.stem in OPEN else []) for p in REPROS]


@pytest.mark.parametrize("path", _params())
def test_failure_class_is_fixed(path: Path) -> None:
    saved = json.loads(path.read_text())
    program = Program.from_json(json.dumps(saved["program"]))
    result = check_program(program, [Config.parse(saved["config"])], saved.get("threads", 1))
    assert not result.invalid, result.invalid
    outcome = result.outcomes[0]
    assert outcome.kind in ("ok", "refused"), f"{saved['note']}\n{outcome.kind}: {outcome.reason}\n{outcome.detail[:800]}"


def test_every_open_class_has_its_file() -> None:
    assert set(OPEN) <= {p.stem for p in REPROS}
