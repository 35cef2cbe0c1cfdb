"""The tensorrt-reference backend end to end (import, graph-opt, conversion, segmented execution)."""

from __future__ import annotations

import pytest
import torch

from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.tensorrt.availability import TensorRTUnavailableError, tensorrt_unavailable_reason
from ziggurat.backends.tensorrt.backend import TensorRTBackend, TensorRTReferenceBackend
from ziggurat.ir.importer import import_model
from ziggurat.ir.pipeline import run_pipeline
from ziggurat.backends.passes import parse_pipeline


def _compile(backend, model, inputs, **extra):  # noqa: ANN001, ANN003, ANN202
    options = CompileOptions(backend=backend.name, extra=extra)
    module = import_model(model, inputs, frontend="torchscript")
    run_pipeline(module, parse_pipeline(backend.default_pipeline(options)))
    report = CompileReport(backend=backend.name)
    return backend.build(module, options, report), report


def test_small_cnn_on_the_reference_backend() -> None:
    from ziggurat.examples.small_cnn import build

    model, inputs = build()
    executable, report = _compile(TensorRTReferenceBackend(), model, inputs, min_block_size=1)
    (y,) = executable.run(list(inputs))
    torch.testing.assert_close(y, model(*inputs), rtol=1e-4, atol=1e-5)
    assert not report.fallback_ops, report.format()
    assert report.native_ops["fused.conv2d"] == 3 and report.native_ops["fused.linear"] == 1
    assert "trt.convolution" in executable.ir["trt"]


def test_fallback_ops_run_in_torch_between_segments() -> None:
    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.relu(x) * 2 + 1
            y = torch.cumprod(y, 1)  # no converter
            return torch.softmax(y - 0.5, 1).sum(0)

    x = torch.randn(3, 5)
    executable, report = _compile(TensorRTReferenceBackend(), M(), (x,), min_block_size=2)
    torch.testing.assert_close(executable.run([x])[0], M()(x), rtol=1e-5, atol=1e-6)
    assert list(report.fallback_ops) == ["aten::cumprod"]
    assert report.stats["TensorRT segments"] == 2
    assert report.stats["TensorRT segment @forward_trt_0"] == "3 ops: aten::add.Tensor x1, aten::mul.Tensor x1, aten::relu x1"
    (unsupported,) = report.unsupported
    assert unsupported.op == "aten::cumprod" and "test_backend.py:" in (unsupported.location or "")


@pytest.mark.skipif(tensorrt_unavailable_reason() is None, reason="TensorRT is installed here")
def test_the_tensorrt_backend_says_what_is_missing() -> None:
    with pytest.raises(TensorRTUnavailableError, match="tensorrt-reference"):
        _compile(TensorRTBackend(), torch.nn.ReLU(), (torch.randn(2),))
