"""``--e2e-suite-report``: the table of ``test_e2e_suite_ops.py`` (ops native, through the
fallback, not compiling, and weighted by the suite's usage counts), printed after the run."""

from __future__ import annotations

import json
from typing import Any

import pytest

_OUTCOMES: list[dict[str, Any]] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--e2e-suite-report", action="store_true", default=False,
                     help="after tests/api/test_e2e_suite_ops.py, print which suite ops compile and how")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == "e2e_suite" and isinstance(value, str):
            _OUTCOMES.append(json.loads(value))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if not config.getoption("--e2e-suite-report", default=False) or not _OUTCOMES:
        return
    from tests.support.e2e_suite.report import format_report
    from tests.support.e2e_suite.table import SUITE, suite_ops

    terminalreporter.write_sep("=", "e2e suite ops on cpu")
    terminalreporter.write_line(format_report(_OUTCOMES, suite_ops(), SUITE.read_text().splitlines()[0]))
