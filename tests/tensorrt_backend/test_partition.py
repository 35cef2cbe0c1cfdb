"""convert-torch-to-trt: segments, min_block_size, torch_executed_ops, the fallback report."""

from __future__ import annotations

import torch
from xdsl.context import Context
from xdsl.dialects.func import CallOp, FuncOp

from conversion_harness import convert_and_run
from ziggurat.backends.tensorrt.registry import ConverterRegistry
from ziggurat.backends.tensorrt.partition_report import conversion_reports
from ziggurat.backends.tensorrt.segments import BACKEND_ATTR, PartitionOptions, convert_function
from ziggurat.dialects.torch import TorchOp
from ziggurat.dialects.trt import TrtLayerOp
from ziggurat.ir.importer import import_model
from ziggurat.backends.tensorrt.convert_torch_to_trt import ConvertTorchToTrt

torch.manual_seed(0)


def model(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x * 2.0 + 1.0)  # 3 convertible ops
    y = torch.cumprod(y, 1)  # no converter: stays in torch
    y = torch.sigmoid(y) - 0.5  # 2 convertible ops
    return torch.tanh(y)  # 3 in the second run with the sub


X = torch.randn(3, 4)


def _funcs(result):  # noqa: ANN001, ANN202
    return [op for op in result.module.ops if isinstance(op, FuncOp)]


def test_segments_are_private_trt_functions_called_from_torch() -> None:
    result = convert_and_run(model, [X.clone()], min_block_size=1)
    main, *segments = _funcs(result)
    assert [s.sym_name.data for s in segments] == result.report.segments == ["forward_trt_0", "forward_trt_1"]
    for seg in segments:
        assert seg.attributes[BACKEND_ATTR].data == "tensorrt"  # type: ignore[attr-defined]
        assert seg.sym_visibility is not None and seg.sym_visibility.data == "private"
        body = [op for op in seg.body.ops][:-1]
        assert body and all(isinstance(op, TrtLayerOp) for op in body)
    calls = [op for op in main.body.ops if isinstance(op, CallOp)]
    torch_ops = [op for op in main.body.ops if isinstance(op, TorchOp)]
    assert len(calls) == 2
    assert [op.name for op in torch_ops] == ["torch.operator"] or [op.name for op in torch_ops] == ["torch.aten.cumprod"]
    torch.testing.assert_close(result.outputs[0], result.expected[0])
    (fallback,) = result.report.fallback
    assert fallback.op == "aten::cumprod" and "test_partition.py:23 [%y" in (fallback.location or "")
    assert fallback.reason == "no TensorRT converter is registered for aten::cumprod"
    assert fallback.schema is not None and fallback.schema.startswith("aten::cumprod(Tensor self, int dim")
    assert conversion_reports(result.module)[0].fallback == result.report.fallback  # kept in the IR
    assert conversion_reports(result.module)[0].segment_ops == result.report.segment_ops


def test_min_block_size_keeps_small_blocks_in_torch() -> None:
    result = convert_and_run(model, [X.clone()], min_block_size=4)
    assert result.report.segments == ["forward_trt_0"] or result.report.segments == []
    small = [r for r in result.report.fallback if "min_block_size=4" in r.reason]
    assert small and all("fewer than min_block_size=4" in r.reason for r in small)
    torch.testing.assert_close(result.outputs[0], result.expected[0])


def test_torch_executed_ops_are_kept() -> None:
    result = convert_and_run(model, [X.clone()], min_block_size=1, torch_executed_ops=("aten::relu",))
    kept = [r for r in result.report.fallback if r.op.startswith("aten::relu")]
    assert len(kept) == 1 and kept[0].reason == "listed in torch_executed_ops"
    torch.testing.assert_close(result.outputs[0], result.expected[0])


def test_validator_refusal_and_converter_failure_are_reported() -> None:
    result = convert_and_run(lambda x: torch.nn.functional.max_pool2d(x, 2, dilation=2), [torch.randn(1, 1, 6, 6)])
    assert [r.reason for r in result.report.fallback] == ["IPoolingLayer has no dilation"]

    registry = ConverterRegistry()

    def broken(ctx, args):  # noqa: ANN001, ANN202
        raise ValueError("boom")

    registry.register("aten::relu(Tensor self) -> Tensor", broken)
    module = import_model(torch.nn.ReLU(), [X.clone()], frontend="torchscript")
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    report = convert_function(func, module, PartitionOptions(min_block_size=1), registry)
    assert report.segments == []
    (r,) = report.fallback
    assert "crashed: ValueError: boom" in r.reason and "broken" in r.reason


def test_pass_options_from_a_pipeline_string() -> None:
    module = import_model(lambda_module(), [X.clone()], frontend="torchscript")
    ConvertTorchToTrt(min_block_size=1, torch_executed_ops="aten::sigmoid, aten::tanh").apply(Context(), module)
    (report,) = conversion_reports(module)
    assert sorted(r.op for r in report.fallback if r.reason == "listed in torch_executed_ops") == [
        "aten::sigmoid", "aten::tanh"]


def lambda_module() -> torch.nn.Module:
    from conversion_harness import Wrap

    return Wrap(model).eval()


def test_wrongly_typed_converter_output_is_caught() -> None:
    from ziggurat.backends.tensorrt.converters.common import cast

    registry = ConverterRegistry()

    def wrong_dtype(ctx, args):  # noqa: ANN001, ANN202
        return cast(ctx, ctx.tensor(args.tensor("self")), torch.float16)

    registry.register("aten::relu(Tensor self) -> Tensor", wrong_dtype)
    module = import_model(torch.nn.ReLU(), [X.clone()], frontend="torchscript")
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    report = convert_function(func, module, PartitionOptions(min_block_size=1), registry)
    (r,) = report.fallback
    assert "produced tensor<3x4xf16> for result #0 of type tensor<3x4xf32>" in r.reason


def test_a_segment_fed_by_an_earlier_segment() -> None:
    """Segment 1 reads a value segment 0 computes, across an op left to torch."""

    def chain(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        i = x.contiguous()  # segment 0
        y = torch.cumprod(w, 0)  # torch
        return torch.nn.functional.embedding(i, y) * 2  # segment 1 uses i and y

    result = convert_and_run(chain, [torch.tensor([[0, 2], [1, 1]]), torch.rand(3, 4) + 0.5])
    assert len(result.report.segments) == 2
    torch.testing.assert_close(result.outputs[0], result.expected[0])
