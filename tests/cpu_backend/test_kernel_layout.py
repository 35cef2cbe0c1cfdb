"""kernel-layout on a small CNN: the pool between two convolutions is stored channels-last,
the result matches eager; an analysis that breaks leaves every order contiguous (always
correct) instead of stopping the compile."""

from __future__ import annotations

import re

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu


class ConvPoolConv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        return self.conv2(p) + p.sigmoid()


def _pool_output_type(loop_ir: str) -> str:
    found = re.search(r"loop\.kernel @\w*max_pool2d\w* ins\([^)]*\) outs\(%\w+ : (memref<[^>]*>)\)", loop_ir)
    assert found, loop_ir
    return found.group(1)


def _model() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return ConvPoolConv().eval(), torch.randn(1, 3, 12, 12)


def test_pool_between_convolutions_is_stored_channels_last() -> None:
    model, x = _model()
    compiled = compile_cpu(model, (x,), threads=1)
    assert _pool_output_type(compiled.ir["loop"]) == "memref<1x6x6x16xf32>"  # [N, H, W, C]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_a_broken_layout_analysis_leaves_orders_contiguous(monkeypatch: pytest.MonkeyPatch) -> None:
    from ziggurat.backends.cpu import kernel_layout

    def broken(_value: object) -> bool:
        raise RuntimeError("analysis bug")

    monkeypatch.setattr(kernel_layout, "prefers_channels_last", broken)
    model, x = _model()
    compiled = compile_cpu(model, (x,), threads=1)
    assert _pool_output_type(compiled.ir["loop"]) == "memref<1x16x6x6xf32>"
    assert compiled.report.fallback_ops == {}
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
