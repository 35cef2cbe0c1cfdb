"""``compiled.ir`` prints each level the first time it is read, from a clone of the module as
it was at that level (``ir/ir_levels.py``)."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from ziggurat.ir import ir_levels
from ziggurat.ir.importer import import_model
from ziggurat.ir.ir_levels import IRLevels
from ziggurat.ir.pipeline import print_module


class _Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(7, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x)) + 1.5


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = ir_levels.print_module

    def counted(*args: object, **kwargs: object) -> str:
        calls[0] += 1
        return real(*args, **kwargs)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(ir_levels, "print_module", counted)
    return calls


def test_a_snapshot_is_the_module_when_taken_and_printed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x = torch.randn(3, 7)
    module = import_model(_Model().eval(), (x,), "export", None, "fp32")
    before = print_module(module)
    levels = IRLevels({"llvm": "text"})
    levels.snapshot("torch", module)
    module.body.block.detach_op(module.body.block.first_op)  # type: ignore[arg-type]  # change the module
    assert calls[0] == 0 and list(levels) == ["llvm", "torch"] and len(levels) == 2
    merged = IRLevels()
    merged.merge(levels)
    skipped = IRLevels()
    skipped.merge(levels, skip=("torch",))
    assert calls[0] == 0, "merging must not print"
    assert list(skipped) == ["llvm"]
    assert merged["torch"] == before and levels["torch"] == before
    assert calls[0] == 2  # once per mapping that read it
    assert merged["torch"] == before and calls[0] == 2
    assert merged["llvm"] == "text"
    del merged["llvm"]
    assert "llvm" not in merged and dict(merged) == {"torch": before}


def test_compile_prints_no_level_until_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    x = torch.randn(3, 7)
    model = _Model().eval()
    compiled = ziggurat.compile(model, (x,))
    assert calls[0] == 0
    assert set(compiled.ir) >= {"torch", "graph", "loop", "llvm"}
    torch_text = compiled.ir["torch"]
    assert "torch.aten.linear" in torch_text or "torch.aten.addmm" in torch_text
    assert "loop." in compiled.ir["loop"] and "define" in compiled.ir["llvm"]
    assert compiled.ir["torch"] == print_module(import_model(model, (x,), "export", None, "fp32"))
    torch.testing.assert_close(compiled(x), model(x))
