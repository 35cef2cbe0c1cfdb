"""explain and fallback=False on the TensorRT backends: every op left to torch, with its
reason, schema and source line, reported without building anything."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from ziggurat.ir.errors import OpReport, UnsupportedOpsError

torch.manual_seed(0)


class ThreeUnsupported(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor, d: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        y = torch.relu(self.conv(x)) * 2.0 + 1.0
        y, indices = F.max_pool2d(y, 2, return_indices=True)  # indices used: no TensorRT layer
        scaled = d * 3.0  # float64: TensorRT has no f64
        return torch.softmax(torch.tanh(y) - 0.5, 1), indices, scaled  # softmax: torch_executed_ops


def _line(marker: str) -> int:
    lines, first = inspect.getsourcelines(ThreeUnsupported.forward)
    return first + next(i for i, text in enumerate(lines) if marker in text)


INPUTS = (torch.randn(1, 3, 8, 8), torch.randn(4, dtype=torch.float64))
LINES = {"aten::max_pool2d_with_indices": _line("return_indices"), "aten::mul.Tensor": _line("d * 3.0"),
         "aten::softmax.int": _line("torch.softmax")}
REASONS = {
    "aten::max_pool2d_with_indices": "the indices of max pooling are used",
    "aten::mul.Tensor": "has element type f64, which TensorRT does not take",
    "aten::softmax.int": "listed in torch_executed_ops",
}


def _check_three(reports: list[OpReport]) -> None:
    assert sorted(r.op for r in reports) == sorted(LINES), [r.format() for r in reports]
    for r in reports:
        assert REASONS[r.op] in r.reason
        assert r.schema is not None and r.schema.startswith(r.op + "(")
        assert r.location is not None and f"test_explain.py:{LINES[r.op]}" in r.location


@pytest.mark.parametrize("backend", ["tensorrt-reference", "tensorrt"])
def test_explain_names_every_op_left_to_torch(backend: str) -> None:
    """``tensorrt`` too: explain needs neither TensorRT nor a GPU."""
    report = ziggurat.explain(ThreeUnsupported().eval(), INPUTS, backend=backend, min_block_size=1,
                              torch_executed_ops="aten::softmax")
    _check_three(report.unsupported)
    assert report.stats["TensorRT segments"] == 2
    assert report.stats["TensorRT segment @forward_trt_0"] == (
        "3 ops: aten::add.Tensor x1, aten::mul.Tensor x1, fused.conv2d x1")
    assert report.stats["TensorRT segment @forward_trt_1"] == "2 ops: aten::sub.Tensor x1, aten::tanh x1"
    assert report.fusions == {"conv+relu": 1}
    text = report.format()
    assert "3 op(s) the backend cannot take" in text and "schema: aten::max_pool2d_with_indices(" in text


def test_explain_with_the_default_block_size_reports_small_blocks() -> None:
    report = ziggurat.explain(ThreeUnsupported().eval(), INPUTS, backend="tensorrt-reference",
                              torch_executed_ops=["aten::softmax"])
    small = [r for r in report.unsupported if "fewer than min_block_size=3" in r.reason]
    assert [r.op for r in small] == ["aten::tanh", "aten::sub.Tensor"]
    assert report.stats["TensorRT segments"] == 1


def test_fallback_false_raises_one_error_listing_all() -> None:
    """min_block_size defaults to 1 without fallback: only the truly unsupported ops are named."""
    with pytest.raises(UnsupportedOpsError) as info:
        ziggurat.compile(ThreeUnsupported().eval(), INPUTS, backend="tensorrt-reference", fallback=False,
                         torch_executed_ops="aten::softmax")
    error = info.value
    assert error.backend == "tensorrt-reference"
    _check_three(error.reports)
    text = str(error)
    assert text.startswith("backend 'tensorrt-reference' cannot take 3 op(s):")
    assert f"test_explain.py:{LINES['aten::mul.Tensor']}" in text and "schema: aten::mul.Tensor(Tensor self, Tensor other)" in text


def test_with_fallback_the_same_ops_run_in_torch() -> None:
    model = ThreeUnsupported().eval()
    compiled = ziggurat.compile(model, INPUTS, backend="tensorrt-reference", min_block_size=1,
                                torch_executed_ops="aten::softmax")
    _check_three(compiled.report.unsupported)
    assert sorted(compiled.report.fallback_ops) == sorted(LINES)
    for got, want in zip(compiled(*INPUTS), model(*INPUTS), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_bad_torch_executed_ops_entry() -> None:
    with pytest.raises(ziggurat.ir.errors.ZigguratError, match="torch_executed_ops entry 'aten::relu\"' is not"):
        ziggurat.explain(ThreeUnsupported().eval(), INPUTS, backend="tensorrt-reference",
                         torch_executed_ops=['aten::relu"'])


UNKNOWN = """
func.func @forward(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %c = torch.operator "foo::bar"(%x) {args = {}, operand_names = ["self"]} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = torch.aten.relu %c : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}
"""


def test_an_unknown_operator_is_listed_once_by_explain() -> None:
    """explain names operators without a schema for every backend; analyze leaves them out,
    while compiling without fallback names them with the rest."""
    from xdsl.parser import Parser

    from ziggurat.backends.executable import CompileReport
    from ziggurat.backends.explain import report_from
    from ziggurat.backends.options import CompileOptions
    from ziggurat.backends.tensorrt.backend import TensorRTReferenceBackend
    from ziggurat.ir.context import make_context

    backend = TensorRTReferenceBackend()
    module = Parser(make_context(), UNKNOWN).parse_module()
    options = CompileOptions(backend=backend.name, extra={"min_block_size": 1})
    report = CompileReport(backend.name)
    backend.analyze(module, options, report)
    explained = report_from(report, module)
    assert [(r.op, r.reason) for r in explained.unsupported] == [("foo::bar", "unknown operator (no schema)")]
    assert explained.stats["TensorRT segments"] == 1
    strict = CompileOptions(backend=backend.name, fallback=False)
    with pytest.raises(UnsupportedOpsError, match="foo::bar: unknown operator"):
        backend.build(Parser(make_context(), UNKNOWN).parse_module(), strict, CompileReport(backend.name))
