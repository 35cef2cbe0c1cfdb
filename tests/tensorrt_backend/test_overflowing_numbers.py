"""A number eager raises on (past float32's range) keeps its op out of TensorRT segments: it
runs in torch and raises at the call as eager does.  ``pad`` and ``hardtanh`` built layers with
an infinity before and returned numbers; the others crashed their converters into torch."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.support.apply import Apply
from ziggurat.ir.errors import ZigguratError

CASES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "masked_fill": lambda t: t.masked_fill(t > 0, 1e39) * 2,
    "add_alpha": lambda t: torch.add(t, t, alpha=1e39) * 2,
    "pad": lambda t: F.pad(t, (1, 1), value=1e39) * 2,
    "hardtanh": lambda t: F.hardtanh(t, -1e39, 1e39) * 2,
    "full_like": lambda t: torch.full_like(t, 1e39) * 2,
    "threshold": lambda t: F.threshold(t, 0.1, 1e39) * 2,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_overflowing_number_runs_in_torch(name: str) -> None:
    model = Apply(CASES[name])
    x = torch.randn(2, 8)
    with pytest.raises(RuntimeError, match="overflow"):
        model(x)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1)
    reasons = [r for rs in compiled.report.fallback_ops.values() for r in rs]
    assert any("eager raises" in r for r in reasons), compiled.report.fallback_ops
    with pytest.raises(ZigguratError, match="without overflow"):
        compiled(x)
