"""A fixed slice of the differential fuzzer: 300 generated programs, the first 70 in
``make test`` and the rest under ``-m slow`` (``make test``'s 15 minutes on 2 cores).

Each program runs on one CPU configuration (the ISA and the frontend rotate with the
index, so every host ISA and both frontends are covered, and then the native threads, 1, 2 or
3, so that each pair meets each count), on ``tensorrt-reference`` and on
``reference`` (frontends rotating), against eager, on the example inputs and on fresh
call-time inputs.  A wrong value or a crash fails the test; clean refusals and fallbacks
do not.  Reproduce one program at full strength (every configuration, a minimized repro):

    .venv/bin/python -m tests.fuzz.run --seed 20261201 --profile slice --start INDEX --n 1 --threads T

``KNOWN`` lists the programs that fail because of a bug class still being fixed (issue
14); they are strict xfails, so a fix makes them pass loudly and they must leave the list.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.fuzz.generator import PROFILES, generate
from tests.fuzz.oracle import Config, check_program, host_isas
from tests.fuzz.thread_counts import CHOICES

SEED = 20261201
SIZE = 300
#: the programs from this index on run under ``-m slow``
IN_MAKE_TEST = 70
FRONTENDS = ("torchscript", "export")

#: index -> the open bug class that makes it fail (strict xfail)
KNOWN: dict[int, str] = {}


def configs_for(index: int) -> list[Config]:
    isas = host_isas()
    return [Config("cpu", FRONTENDS[index % 2], isas[(index // 2) % len(isas)]),
            Config("tensorrt-reference", FRONTENDS[(index + 1) % 2]),
            Config("reference", FRONTENDS[(index // 2) % 2])]


def threads_for(index: int) -> int:
    """The native threads of program ``index``'s cpu configuration: the next count once its
    frontend and ISA have made every pair."""
    return CHOICES[(index // (len(FRONTENDS) * len(host_isas()))) % len(CHOICES)]


def _params() -> list[object]:
    out: list[object] = []
    for i in range(SIZE):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[i])] if i in KNOWN else []
        if i >= IN_MAKE_TEST:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(i, marks=marks, id=f"s{SEED}_g{i}"))
    return out


@pytest.fixture(autouse=True)
def _quiet_trace_log() -> Iterator[None]:
    """torch.export logs every traced tensor at DEBUG; keep it out of failure reports."""
    logger = logging.getLogger("torch.__trace")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


@pytest.mark.parametrize("index", _params())
def test_fuzz_program(index: int) -> None:
    program = generate(SEED, index, PROFILES["slice"])
    threads = threads_for(index)
    result = check_program(program, configs_for(index), threads)
    assert not result.invalid, f"the generator made an invalid program: {result.invalid}"
    failures = [f"{o.config}: {o.kind}: {o.reason}\n    {o.detail[:600]}" for o in result.outcomes
                if o.kind in ("wrong", "crash")]
    assert not failures, (f"{program.name} ({', '.join(program.ops())}):\n" + "\n".join(failures)
                          + f"\nrerun: .venv/bin/python -m tests.fuzz.run --seed {SEED} --profile slice "
                            f"--start {index} --n 1 --threads {threads}")
