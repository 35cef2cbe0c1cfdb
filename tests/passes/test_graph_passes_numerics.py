"""Differential tests of the graph passes: reference interpreter before vs after the
pipeline, and vs eager (max relative error <= 1e-5 in fp32)."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects.builtin import ModuleOp

from tests.support import models
from ziggurat.dialects.fused import FusedOp, LinearOp
from ziggurat.dialects.torch import AtenOp
from ziggurat.ir.importer import import_torchscript
from ziggurat.ir.interpreter import run
from ziggurat.ir.pipeline import run_pipeline
from ziggurat.ir.statistics import Statistics
from ziggurat.ir.types import shape_of
from ziggurat.backends.passes import parse_pipeline


def max_rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


def _check(model: torch.nn.Module, x: torch.Tensor, pipeline: str) -> tuple[ModuleOp, Statistics]:
    with torch.no_grad():
        expected = model(x)
    module = import_torchscript(model, (x,))
    before = run(module, [x])[0]
    stats = Statistics()
    run_pipeline(module, parse_pipeline(pipeline), stats=stats)
    after = run(module, [x])[0]
    assert max_rel(before, expected) <= 1e-5
    assert max_rel(after, before) <= 1e-5, max_rel(after, before)
    assert max_rel(after, expected) <= 1e-5
    return module, stats


PIPELINES = ["graph-opt,prepack-weights{isa=avx512}", "graph-opt,prepack-weights{isa=avx2}", "graph-opt"]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_resnet_block(pipeline: str) -> None:
    models.seeded()
    module, stats = _check(models.randomize_bn(models.ConvBNNet()), torch.randn(2, 3, 16, 16), pipeline)
    assert stats.for_pass("fold-batchnorm") == {"conv + batch_norm folded": 3}
    assert stats.for_pass("fuse-post-ops")["conv+add+relu"] == 1
    assert stats.for_pass("fuse-post-ops")["conv+relu"] == 2
    assert not any(isinstance(op, AtenOp) and "batch_norm" in op.name for op in module.walk())  # pyright: ignore


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_mlp(pipeline: str) -> None:
    models.seeded()
    _, stats = _check(models.MLP(), torch.randn(5, 32), pipeline)
    assert stats.for_pass("fuse-post-ops") == {"linear+relu": 2, "linear": 1}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_inverted_residual(pipeline: str) -> None:
    models.seeded()
    module, stats = _check(models.randomize_bn(models.InvertedResidual()), torch.randn(1, 8, 9, 9), pipeline)
    fusions = stats.for_pass("fuse-post-ops")
    assert fusions["conv+relu6"] == 2 and fusions["conv+add"] == 1
    if "prepack-weights" in pipeline:
        assert stats.for_pass("prepack-weights")["depthwise convs left unpacked"] == 1


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_conv_bn_silu_stack(pipeline: str) -> None:
    models.seeded()
    _, stats = _check(models.randomize_bn(models.ConvBNSiLUStack()), torch.randn(1, 3, 12, 12), pipeline)
    # y + silu(bn(conv(y))): the residual add follows the SiLU in each block's epilogue
    assert stats.for_pass("fuse-post-ops")["conv+silu+add"] == 3


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_transformer_encoder_layer(pipeline: str) -> None:
    models.seeded()
    module, _ = _check(models.transformer_layer(), torch.randn(2, 7, 32), pipeline)
    assert any(isinstance(op, FusedOp) for op in module.walk()), "the fused layer must be decomposed"


class _SeparateProjections(torch.nn.Module):
    """BERT-style attention with query/key/value as three ``nn.Linear`` (value without a bias),
    plus a GELU projection of the same input that keeps its post-op."""

    def __init__(self, d: int = 24, heads: int = 3) -> None:
        super().__init__()
        self.heads = heads
        self.query, self.key = torch.nn.Linear(d, d), torch.nn.Linear(d, d)
        self.value = torch.nn.Linear(d, d, bias=False)
        self.gate = torch.nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        ctx = torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1) @ v
        return ctx.transpose(1, 2).reshape(b, t, d) * torch.nn.functional.gelu(self.gate(x))


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_sibling_projections_become_one_linear(pipeline: str) -> None:
    models.seeded()
    module, stats = _check(_SeparateProjections().eval(), torch.randn(2, 5, 24), pipeline)
    assert stats.for_pass("fuse-sibling-linears") == {"linears merged": 3, "wide linears": 1}
    widths = sorted(shape_of(op.result.type)[-1] for op in module.walk() if isinstance(op, LinearOp))
    assert widths == [24, 72]


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_sibling_projections_compiled(backend: str) -> None:
    import ziggurat

    models.seeded()
    model, x = _SeparateProjections().eval(), torch.randn(2, 37, 24)
    options = {"threads": 2} if backend == "cpu" else {"min_block_size": 1}
    compiled = ziggurat.compile(model, (x,), backend=backend, **options)
    with torch.no_grad():
        assert max_rel(compiled(x), model(x)) <= 1e-5
