"""ziggurat.bisect through the TensorRT path: the trt segments are interpreted with their
reference semantics after convert-torch-to-trt, so a wrong converter is named."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest
import torch
from xdsl.ir import SSAValue

import ziggurat
from tests.support import models
from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import activation
from ziggurat.backends.tensorrt.registry import REGISTRY, ConverterEntry
from ziggurat.dialects.trt import ActivationType


class ReluTail(torch.nn.Module):
    """ConvBNNet, then a plain relu (a torch op, not a fused post-op) feeding more ops."""

    def __init__(self) -> None:
        super().__init__()
        self.net = models.randomize_bn(models.ConvBNNet())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(self.net(x)) - 0.1  # tanh: the relu below stays an aten op (no fusion)
        y = torch.relu(y)
        return y * 2.0 + 1.0


def test_clean_model_has_no_divergence_and_lists_the_conversion() -> None:
    models.seeded()
    model = ReluTail().eval()
    result = ziggurat.bisect(model, (torch.randn(1, 3, 8, 8),), backend="tensorrt-reference", min_block_size=1)
    assert result.ok, result.format()
    stages = dict(result.stages)
    assert "convert-torch-to-trt" in stages and stages["convert-torch-to-trt"] is not None
    assert stages["convert-torch-to-trt"] < 1e-4
    assert result.stages[-1][0] == "native (tensorrt-reference)"


def _sigmoid_instead_of_relu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return activation(ctx, ctx.tensor(args.tensor("self")), ActivationType.kSIGMOID)


@pytest.fixture
def wrong_relu() -> Iterator[ConverterEntry]:
    import ziggurat.backends.tensorrt.converters  # noqa: F401  (the real converters first)

    entry = REGISTRY.register("aten::relu(Tensor self) -> Tensor", _sigmoid_instead_of_relu, priority=100)
    try:
        yield entry
    finally:
        REGISTRY.unregister(entry)


def test_a_wrong_converter_is_named(wrong_relu: ConverterEntry) -> None:
    models.seeded()
    model = ReluTail().eval()
    result = ziggurat.bisect(model, (torch.randn(1, 3, 8, 8),), backend="tensorrt-reference", min_block_size=1)
    assert not result.ok
    d = result.divergence
    assert d is not None and d.stage == "convert-torch-to-trt", result.format()
    assert d.op == "trt.activation"  # the layer the wrong converter built, not just the segment call
    lines, first = inspect.getsourcelines(ReluTail.forward)
    line = first + next(i for i, text in enumerate(lines) if "torch.relu(y)" in text)
    assert d.location is not None and f"test_trt_bisect.py:{line}" in d.location
    assert "first divergence after 'convert-torch-to-trt'" in result.format()


def test_the_wrong_converter_is_gone_after_the_test() -> None:
    assert all(e.fn is not _sigmoid_instead_of_relu for e in REGISTRY.entries("aten::relu"))
