"""``bench/compile_memory.py``: one table row per model, precision and mode, with its figures."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from ziggurat.bench import compile_memory


def test_a_row_per_run() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert compile_memory.main(["conv-silu-tiny:bf16", "conv-silu-tiny:fp32:dynamic"]) == 0
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| conv-silu-tiny")]
    assert [r.split("|")[2].strip() for r in rows] == ["bf16", "fp32, dynamic batch"]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if "not measured" in row:
            continue
        weights, seconds, peak, kept = int(cells[2]), float(cells[3]), int(cells[4]), int(cells[5])
        assert weights >= 0 and seconds > 0 and peak >= 0 and kept >= -64


def test_a_third_field_other_than_dynamic_is_refused() -> None:
    with pytest.raises(SystemExit), redirect_stdout(io.StringIO()):
        compile_memory.main(["conv-silu-tiny:fp32:static"])
