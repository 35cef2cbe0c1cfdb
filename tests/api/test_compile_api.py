"""ziggurat.compile: sources, options, bad input."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

import ziggurat
from tests.support import models
from tests.support.opinfo import assert_same
from ziggurat.ir.errors import InputError, ZigguratError


def test_every_source_kind() -> None:
    models.seeded()
    model = models.MLP()
    x = torch.randn(4, 32)
    expected = model(x)
    scripted = torch.jit.script(model)
    exported = torch.export.export(model, (x,))
    sources = {"module": model, "script-module": scripted, "exported": exported}
    for name, source in sources.items():
        compiled = ziggurat.compile(source, (x,), backend="reference")
        assert_same(compiled(x), expected, op=name, rtol=1e-5, atol=1e-6)

    @torch.jit.script
    def f(a: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a) * 2

    assert_same(ziggurat.compile(f, (x,), backend="reference")(x), f(x), op="script-function")
    assert_same(ziggurat.compile(str(f.graph), (x,), backend="reference")(x), f(x), op="ir-text")


@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_frontend_choice(frontend: str) -> None:
    models.seeded()
    model = models.TwoHeads().eval()
    x, y = torch.randn(2, 6), torch.randn(2, 6)
    compiled = ziggurat.compile(model, (x, y), backend="reference", frontend=frontend)
    assert_same(compiled(x, y), model(x, y), op=frontend)
    text = compiled.ir["torch"]
    # the export frontend names values after FX nodes, TorchScript after debug names
    assert ("%linear" in text) == (frontend == "export")


def test_dump_ir_and_verbose(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    x = torch.randn(1, 3, 8, 8)
    with caplog.at_level(logging.INFO, logger="ziggurat"):
        ziggurat.compile(model, (x,), backend="reference", passes="graph-opt,torch-canonicalize",
                         dump_ir=tmp_path, verbose=True)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["00-import.mlir", "01-graph-opt.mlir", "02-torch-canonicalize.mlir"]
    assert "fused.conv2d" in (tmp_path / "01-graph-opt.mlir").read_text()
    assert "torch.aten.batch_norm" in (tmp_path / "00-import.mlir").read_text()
    assert any("graph-opt" in r.message for r in caplog.records)


def test_report_has_pass_times_and_fusions() -> None:
    models.seeded()
    compiled = ziggurat.compile(models.randomize_bn(models.ConvBNNet()), (torch.randn(1, 3, 8, 8),),
                                backend="reference", passes="graph-opt")
    report = compiled.report
    assert report.pass_times[0][0] == "import" and any(n == "graph-opt" for n, _ in report.pass_times)
    assert report.pass_stats["fuse-post-ops"]["conv+add+relu"] == 1
    assert "conv+add+relu" in report.format()


def test_bad_options() -> None:
    model, x = models.MLP(), torch.randn(2, 32)
    with pytest.raises(ZigguratError, match="unknown backend 'gpu'.*reference"):
        ziggurat.compile(model, (x,), backend="gpu")
    with pytest.raises(ZigguratError, match="no-such-pass"):
        ziggurat.compile(model, (x,), backend="reference", passes="no-such-pass")
    with pytest.raises(ZigguratError, match="unknown frontend"):
        ziggurat.compile(model, (x,), backend="reference", frontend="onnx")
    with pytest.raises(ZigguratError, match="example_inputs"):
        ziggurat.compile(model, {"x": x}, backend="reference")


def test_wrong_inputs_are_refused() -> None:
    compiled = ziggurat.compile(models.MLP(), (torch.randn(2, 32),), backend="reference")
    with pytest.raises(InputError, match=r"input 0 \('x'\) has shape \(2, 31\)"):
        compiled(torch.randn(2, 31))
    with pytest.raises(InputError, match="must be a tensor"):
        compiled([1.0, 2.0])
    with pytest.raises(InputError, match="is on device meta"):
        compiled(torch.empty(2, 32, device="meta"))


@pytest.mark.parametrize("spec,option", [("graph-opt{prepack=false}", "prepack"),
                                         ("graph-opt{prepack=true isa=avx2},torch-canonicalize", "prepack"),
                                         ("graph-opt{isa=avx512}", "isa")])
def test_graph_opt_options_of_old_say_where_prepacking_went(spec: str, option: str) -> None:
    with pytest.raises(ZigguratError, match=f"graph-opt has no option '{option}' any more: weight prepacking "
                       r"moved to the prepack-weights pass of the CPU backend; write 'graph-opt,prepack-weights\{isa=\.\.\.\}'"):
        ziggurat.compile(models.MLP(), (torch.randn(2, 32),), backend="reference", passes=spec)
