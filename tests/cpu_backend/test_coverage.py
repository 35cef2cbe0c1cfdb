"""Native coverage of the op lists in /work/shared/ops (a regression guard, and the numbers
the README quotes): which aten op names have a native lowering."""

from __future__ import annotations

from pathlib import Path

import pytest

from ziggurat.backends.cpu.lowering.registry import lowered_keys, lowered_names
from ziggurat.dialects.torch.schema import registered_schemas

OPS = Path("/work/shared/ops")

#: TorchScript builtins on lists/strings (folded by the importer, no tensor computation).
SCRIPT_BUILTINS = {"aten::len", "aten::__getitem__", "aten::format", "aten::__contains__", "aten::__is__",
                   "aten::__isnot__", "aten::append"}


def _ops(name: str) -> list[tuple[str, int]]:
    path = OPS / name
    if not path.exists():
        pytest.skip(f"{path} is not available")
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            parts = line.split()
            out.append((parts[0], int(parts[1]) if len(parts) > 1 else 0))
    return out


def test_every_lowering_names_a_real_schema() -> None:
    known = registered_schemas()
    assert all(k in known for k in lowered_keys())
    assert len(lowered_keys()) > 500


def test_trt_converter_suite_is_native() -> None:
    ops = [n for n, _ in _ops("trt-converter-suite.txt") if "quantize" not in n]
    missing = [n for n in ops if n not in lowered_names()]
    assert not missing, missing


def test_e2e_top150_coverage() -> None:
    top = sorted(_ops("e2e-suite.txt"), key=lambda t: -t[1])[:150]
    tensor_ops = [n for n, _ in top if n not in SCRIPT_BUILTINS]
    native = [n for n in tensor_ops if n in lowered_names()]
    assert len(native) >= 134, sorted(set(tensor_ops) - set(native))
