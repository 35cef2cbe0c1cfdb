"""``ziggurat.explain(..., backend="cpu")``: every op without a native lowering, with its
reason, schema and source line, and the backend's figures, from the loop level without
generating or compiling LLVM IR."""

from __future__ import annotations

import inspect

import pytest
import torch

import ziggurat
from ziggurat.backends.cpu import backend as cpu_backend
from ziggurat.ir.errors import UnsupportedOpsError


class ThreeUnsupported(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        j = torch.special.bessel_j0(y)  # no native lowering
        d = torch.linalg.det(j[0, :, :4, :4])  # no native lowering
        inv = torch.linalg.inv(j[0, :, :3, :3] + 3 * torch.eye(3))  # no native lowering
        return y.mean() + d.sum() + inv.sum()


def _line(marker: str) -> int:
    lines, first = inspect.getsourcelines(ThreeUnsupported.forward)
    return first + next(i for i, text in enumerate(lines) if marker in text)


LINES = {"aten::special_bessel_j0": _line("bessel_j0"), "aten::linalg_det": _line("linalg.det"),
         "aten::linalg_inv": _line("linalg.inv")}
X = torch.randn(1, 3, 9, 9)


def test_explain_lists_every_unsupported_op_without_generating_code(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_codegen(*args: object, **kwargs: object) -> None:
        raise AssertionError("explain generated code")

    monkeypatch.setattr(cpu_backend, "generate", no_codegen)
    monkeypatch.setattr(cpu_backend, "compile_ir", no_codegen)
    report = ziggurat.explain(ThreeUnsupported().eval(), (X,), backend="cpu")
    assert sorted(r.op for r in report.unsupported) == sorted(LINES), report.format()
    for r in report.unsupported:
        assert r.schema is not None and r.schema.startswith(r.op + "(")
        assert r.location is not None and f"test_explain_cpu.py:{LINES[r.op]}" in r.location
    assert report.fusions.get("conv+relu") == 1, report.fusions
    assert report.stats["vectorized share"] == 1.0
    assert report.stats["arena bytes (peak)"] > 0
    assert report.stats["native segments"] >= 2
    assert "object cache hit" not in report.stats
    text = report.format()
    assert "3 op(s) the backend cannot take" in text and "aten::linalg_inv(Tensor A) -> Tensor" in text


def test_compile_without_fallback_names_the_same_ops() -> None:
    with pytest.raises(UnsupportedOpsError) as info:
        ziggurat.compile(ThreeUnsupported().eval(), (X,), backend="cpu", fallback=False)
    assert sorted(r.op for r in info.value.reports) == sorted(LINES)


def test_the_explained_model_still_compiles_with_fallback() -> None:
    model = ThreeUnsupported().eval()
    compiled = ziggurat.compile(model, (X,), backend="cpu")
    torch.testing.assert_close(compiled(X), model(X), rtol=1e-4, atol=1e-4)
