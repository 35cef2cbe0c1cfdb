"""Engines built by the real TensorRT agree with the reference executor (needs TensorRT and a GPU)."""

from __future__ import annotations

import pytest
import torch

from trt_builders import build_function, constant
from ziggurat.backends.tensorrt.availability import tensorrt_unavailable_reason
from ziggurat.backends.tensorrt.emitter import BuilderOptions, build_engine
from ziggurat.backends.tensorrt.reference_executor import run_trt_function
from ziggurat.backends.tensorrt.runtime import TensorRTEngine
from ziggurat.dialects.trt import (
    ActivationOp,
    ActivationType,
    ConvolutionOp,
    ElementWiseOp,
    ElementWiseOperation,
    MatrixMultiplyOp,
    MatrixOperation,
    PoolingOp,
    PoolingType,
    ReduceOp,
    ReduceOperation,
    ShuffleOp,
    SoftMaxOp,
)
from ziggurat.ir.types import tensor_type

REASON = tensorrt_unavailable_reason()
pytestmark = [pytest.mark.tensorrt, pytest.mark.skipif(REASON is not None, reason=f"needs TensorRT: {REASON}")]


def small_cnn(x):  # noqa: ANN001, ANN201
    torch.manual_seed(0)
    w = constant(torch.randn(8, 3, 3, 3) * 0.2, "conv.weight")
    b = constant(torch.randn(8) * 0.1, "conv.bias")
    y = ConvolutionOp(x, w, b, name="conv", pre_padding=(1, 1), post_padding=(1, 1)).output
    y = ActivationOp(y, ActivationType.kCLIP, name="hardtanh", alpha=-1.0, beta=1.0).output
    y = PoolingOp(y, PoolingType.kMAX, (2, 2), name="pool").output
    y = ReduceOp(y, ReduceOperation.kAVG, 0b1100, name="gap").output
    fc = constant(torch.randn(5, 8) * 0.3, "fc.weight")
    y = MatrixMultiplyOp(y, MatrixOperation.kNONE, fc, MatrixOperation.kTRANSPOSE, name="fc").output
    y = ElementWiseOp(y, constant(torch.full((1, 5), 0.5), "fc.bias"), ElementWiseOperation.kSUM, name="bias").output
    y = ShuffleOp(y, name="flat", reshape_dims=(-1,)).output
    return SoftMaxOp(y, 1, name="softmax").output


def test_engine_matches_reference() -> None:
    func = build_function([tensor_type((2, 3, 8, 8), torch.float32)], small_cnn)
    x = torch.randn(2, 3, 8, 8)
    expected = run_trt_function(func, [x])
    engine = TensorRTEngine(build_engine(func, BuilderOptions(workspace_size=1 << 28)))
    (y,) = engine(x.cuda())
    torch.testing.assert_close(y.cpu(), expected[0], rtol=1e-3, atol=1e-4)
