"""Every op of the torch dialect with an OpInfo: import -> reference interpreter == eager."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from tests.support.opinfo import assert_same, op_db, opinfo_cases
from ziggurat.dialects.torch import aten_op_classes

_NAMES = sorted({k.split("::")[1].split(".")[0] for k in aten_op_classes()})


def _opinfo_names() -> list[str]:
    db = op_db()
    selected = []
    for key, info in db.items():
        aten = (info.aten_name or info.name).split(".")[-1]
        if aten in _NAMES or info.name in _NAMES:
            selected.append(key)
    return sorted(selected)


CASES = opinfo_cases(_opinfo_names(), torch.float32, per_op=3)


#: cases where torch.export asserts a wrong bound on a data-dependent size (masked_select of a
#: [10] input under a [10, 10] mask: ``u0 <= 10``, though the mask broadcasts to 100 elements):
#: the compiled module runs export's asserts, so the call fails on that frontend; checked on
#: the TorchScript frontend, and the test fails when torch fixes the bound
EXPORT_WRONG_BOUNDS = {"masked_select-2"}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reference_matches_eager(case) -> None:  # type: ignore[no-untyped-def]
    from ziggurat.ir.errors import InputError

    with torch.no_grad():
        expected = case.module(*[t.clone() for t in case.inputs])
    frontend = "auto"
    if case.id in EXPORT_WRONG_BOUNDS:
        exported = ziggurat.compile(case.module, case.inputs, backend="reference", frontend="export")
        with pytest.raises(InputError, match="Runtime assertion failed"):
            exported(*case.inputs)
        frontend = "torchscript"
    try:
        compiled = ziggurat.compile(case.module, case.inputs, backend="reference", frontend=frontend)
    except ziggurat_errors() as e:
        pytest.skip(f"not importable: {e}")
    actual = compiled(*case.inputs)
    assert_same(actual, expected, op=case.id, shapes_only=case.random)


def ziggurat_errors() -> type[Exception]:
    from ziggurat.ir.errors import ModelImportError

    return ModelImportError


def test_opinfo_coverage() -> None:
    """Most dialect op names have OpInfo samples; the rest are tested by hand elsewhere."""
    assert len(CASES) > 300, len(CASES)
