"""Whole models on the cpu backend: max relative error <= 1e-4 vs eager under every ISA, all
ops native, and (vector ISAs) at least 95% of the kernels vectorized."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu, max_rel_error
from tests.support.models import MLP, ConvBNNet, ConvBNSiLUStack, InvertedResidual, TwoHeads, randomize_bn, transformer_layer


def _mlp() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return MLP().eval(), (torch.randn(5, 32),)


def _convbn() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return randomize_bn(ConvBNNet()), (torch.randn(2, 3, 18, 18),)


def _inverted_residual() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return randomize_bn(InvertedResidual()), (torch.randn(2, 8, 13, 13),)


def _silu_stack() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return randomize_bn(ConvBNSiLUStack()), (torch.randn(1, 3, 15, 15),)


def _transformer() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return transformer_layer(), (torch.randn(2, 7, 32),)


def _two_heads() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return TwoHeads().eval(), (torch.randn(3, 6), torch.randn(3, 6))


MODELS: dict[str, Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]] = {
    "mlp": _mlp, "convbn": _convbn, "inverted_residual": _inverted_residual, "silu_stack": _silu_stack,
    "transformer": _transformer, "two_heads": _two_heads,
}


def _flat(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    return [t for item in x for t in _flat(item)]


@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager(name: str, isa: str) -> None:
    model, inputs = MODELS[name]()
    with torch.no_grad():
        expected = model(*inputs)
    compiled = compile_cpu(model, inputs, isa=isa)
    actual = compiled(*inputs)
    for a, e in zip(_flat(actual), _flat(expected), strict=True):
        assert a.shape == e.shape and a.dtype == e.dtype
        assert max_rel_error(a, e) <= 1e-4, f"{name} ({isa}): max relative error {max_rel_error(a, e):.3e}"
    report = compiled.report
    assert not report.fallback_ops, report.fallback_ops
    assert report.stats["native segments"] == 1
    share = report.stats["vectorized share"]
    if isa == "scalar":
        assert share == 0.0 or report.stats["kernels"] == 0
    else:
        assert share >= 0.95, f"{name}: only {share:.0%} of kernels vectorized"


def test_repeated_calls_reuse_arena() -> None:
    model, inputs = _convbn()
    compiled = compile_cpu(model, inputs)
    first = compiled(*inputs)
    other = torch.randn_like(inputs[0])
    second = compiled(other)
    again = compiled(*inputs)
    torch.testing.assert_close(again, first, rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(second, model(other), rtol=1e-4, atol=1e-5)
    assert second.data_ptr() != first.data_ptr()


def test_report_mentions_kernels_and_arena() -> None:
    model, inputs = _transformer()
    compiled = compile_cpu(model, inputs)
    text = compiled.report.format()
    assert "vectorized share" in text and "arena bytes (peak)" in text
    stats = compiled.report.stats
    assert stats["arena bytes (peak)"] < stats["intermediate bytes without reuse"]
    assert compiled.report.native_ops
    assert {"loop", "llvm"} <= set(compiled.ir)
