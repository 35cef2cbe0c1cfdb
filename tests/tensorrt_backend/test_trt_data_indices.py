"""Indices read from tensor data on tensorrt-reference, both frontends, every op converted
(``min_block_size=1``): eager's values for indices in range, a ``ZigguratError`` naming the
op where eager raises.  Before, ``index_select`` wrapped a negative index that eager rejects
(returning the last row) and ``take_along_dim`` raised on indices eager takes modulo the size."""

from __future__ import annotations

import logging

import pytest

import ziggurat
from tests.support.index_cases import CASES, IndexCase, check_probes
from tests.support.opinfo import OpModule


@pytest.mark.parametrize(("case", "frontend"), [pytest.param(c, f, id=f"{c.id}-{f}") for c in CASES
                                                for f in c.frontends])
def test_indices_as_eager(case: IndexCase, frontend: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="ziggurat")
    compiled = ziggurat.compile(OpModule(case.fn), (case.data, case.index), backend="tensorrt-reference",
                                frontend=frontend, min_block_size=1)
    if case.trt_native:
        assert not compiled.report.fallback_ops, compiled.report.format()
    check_probes(case, compiled)
