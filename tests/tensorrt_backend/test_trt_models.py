"""Whole models through ``ziggurat.compile(..., backend="tensorrt-reference")``: numerics vs
eager, what ran on TensorRT, and the report of an op that must fall back."""

from __future__ import annotations

import torch

import ziggurat
from tests.support import models


def _compile(model: torch.nn.Module, *inputs: torch.Tensor, **options: object) -> torch.nn.Module:
    compiled = ziggurat.compile(model, inputs, backend="tensorrt-reference", **options)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-4, atol=1e-5)
    return compiled


def test_mlp() -> None:
    models.seeded()
    compiled = _compile(models.MLP().eval(), torch.randn(4, 32))
    report = compiled.report
    assert report.native_ops == {"fused.linear": 3} and not report.unsupported
    assert report.stats["TensorRT segments"] == 1
    assert "trt.matrix_multiply" in compiled.ir["trt"] and "torch.aten" not in compiled.ir["trt"]


def test_resnet_style_convbn() -> None:
    models.seeded()
    compiled = _compile(models.randomize_bn(models.ConvBNNet()), torch.randn(2, 3, 16, 16))
    report = compiled.report
    assert report.native_ops["fused.conv2d"] == 3 and report.native_ops["aten::max_pool2d"] == 1
    assert not report.unsupported and report.stats["TensorRT segments"] == 1
    assert report.pass_stats["fold-batchnorm"]["conv + batch_norm folded"] == 3
    assert [name for name, _ in report.pass_times][:4] == ["import", "graph-opt", "convert-torch-to-trt",
                                                           "build (tensorrt-reference)"]


def test_transformer_encoder_layer() -> None:
    models.seeded()
    layer = models.transformer_layer()
    compiled = _compile(layer, torch.randn(2, 5, 32))
    report = compiled.report
    assert not report.unsupported, report.format()
    assert report.native_ops["aten::layer_norm"] == 2 and report.native_ops["aten::softmax.int"] == 1
    assert "trt.reduce kSUM" in compiled.ir["trt"] and "trt.softmax" in compiled.ir["trt"]  # the layer norms: sums of x / n


class LinearCumprod(torch.nn.Module):
    """An op with no converter between two convertible runs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(self.fc1(x)) * 0.5 + 0.75
        y = torch.cumprod(y, 1)
        return torch.log_softmax(torch.tanh(self.fc2(y)) * 2.0, -1)


def test_an_op_that_falls_back() -> None:
    models.seeded()
    compiled = _compile(LinearCumprod().eval(), torch.randn(3, 8))
    report = compiled.report
    (fallback,) = report.unsupported
    assert fallback.op == "aten::cumprod"
    assert fallback.reason == "no TensorRT converter is registered for aten::cumprod"
    assert fallback.schema is not None and fallback.schema.startswith("aten::cumprod(Tensor self, int dim")
    assert fallback.location is not None and "test_trt_models.py:" in fallback.location
    assert report.fallback_ops == {"aten::cumprod": [fallback.reason]}
    assert report.stats["TensorRT segments"] == 2 and report.stats["ops left to torch"] == 1
    assert "ops falling back to torch: 1" in report.format()
    assert "torch.operator \"aten::cumprod\"" in compiled.ir["trt"]
