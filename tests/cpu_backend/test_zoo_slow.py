"""The benchmark zoo on the cpu backend (slow: ``pytest -m slow``): every model native, within
its tolerance of eager, and at least 95% of its kernels vectorized."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu, max_rel_error

ZOO = ["mlp-b64", "resnet18", "mobilenet_v2", "convnext-blocks", "transformer-layer", "conv-silu-stack",
       "bert-base", "gpt2-small", "resnet50"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ZOO)
def test_zoo_model(name: str) -> None:
    from bench.models import MODELS

    spec = MODELS[name]
    model = spec.build()
    inputs = spec.example_inputs()
    with torch.no_grad():
        expected = model(*inputs)
    compiled = compile_cpu(model, inputs)
    actual = compiled(*inputs)
    if isinstance(expected, torch.Tensor):
        expected, actual = (expected,), (actual,)
    for a, e in zip(actual, expected, strict=True):
        assert max_rel_error(a, e) <= 1e-4
    assert not compiled.report.fallback_ops
    assert compiled.report.stats["vectorized share"] >= 0.95
