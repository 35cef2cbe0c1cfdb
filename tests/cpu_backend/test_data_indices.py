"""Indices read from tensor data on the cpu backend, every ISA, both frontends: eager's values
for indices in range (negative ones where eager wraps them, duplicates where eager defines the
result), an ``InputError`` naming the op where eager raises.  Before, an out-of-range or
negative index of ``scatter*``/``index_put``/``one_hot`` was dropped silently, a ``narrow``
start of -1 wrapped twice, ``take_along_dim`` raised on indices eager takes modulo the size,
``bucketize`` put NaN in the first bucket, and an op sent to torch raised torch's bare error."""

from __future__ import annotations

import pytest

from tests.cpu_backend.conftest import compile_cpu
from tests.support.index_cases import CASES, IndexCase, check_probes
from tests.support.opinfo import OpModule

NATIVE = [c for c in CASES if c.cpu_native]
FALLBACK = [c for c in CASES if not c.cpu_native]


def _params(cases: list[IndexCase]) -> list[object]:
    return [pytest.param(c, f, id=f"{c.id}-{f}") for c in cases for f in c.frontends]


@pytest.mark.parametrize(("case", "frontend"), _params(NATIVE))
def test_native_indices_as_eager(case: IndexCase, frontend: str, isa: str) -> None:
    compiled = compile_cpu(OpModule(case.fn), (case.data, case.index), frontend=frontend, isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.format()
    check_probes(case, compiled)


@pytest.mark.parametrize(("case", "frontend"), _params(FALLBACK))
def test_fallback_indices_as_eager(case: IndexCase, frontend: str) -> None:
    """Ops that run through torch: torch's own error becomes an ``InputError`` naming the op."""
    compiled = compile_cpu(OpModule(case.fn), (case.data, case.index), frontend=frontend)
    assert compiled.report.fallback_ops, "expected this op to run through torch"
    check_probes(case, compiled)
