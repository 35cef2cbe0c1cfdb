"""ziggurat.bisect names the pass and the op that break numerics."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.passes import ModulePass

from tests.support import models
from ziggurat.backends.bisect import bisect_model
from ziggurat.backends.options import CompileOptions
from ziggurat.dialects.fused import Conv2dOp, UnaryPostOpAttr


@dataclass(frozen=True)
class PlantWrongActivation(ModulePass):
    """Test-only miscompile: the second fused conv's relu becomes a sigmoid."""

    name = "plant-wrong-activation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convs = [c for c in op.walk() if isinstance(c, Conv2dOp) and c.unary() is not None]
        target = convs[1]
        target.properties["post_ops"] = ArrayAttr(
            [UnaryPostOpAttr("sigmoid") if isinstance(p, UnaryPostOpAttr) else p for p in target.post_ops.data]
        )


def test_bisect_names_the_planted_pass_and_op() -> None:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    x = torch.randn(2, 3, 16, 16)
    result = bisect_model(model, (x,), CompileOptions(backend="reference", passes="graph-opt,prepack-weights"),
                          extra_passes=[PlantWrongActivation()])
    assert not result.ok
    d = result.divergence
    assert d is not None and d.stage == "plant-wrong-activation" and d.op == "fused.conv2d"
    assert d.location is not None and "models.py:56" in d.location  # r = relu(bn1(conv1(y)))
    assert d.max_rel > 1e-2
    text = result.format()
    assert "first divergence after 'plant-wrong-activation'" in text and "expected:" in text
    # every sub-pass of graph-opt was checked before the planted one, through fusion
    stages = [name for name, _ in result.stages]
    assert stages[:2] == ["import", "torch-canonicalize"] and "fuse-post-ops" in stages


def test_bisect_clean_pipeline() -> None:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    result = bisect_model(model, (torch.randn(1, 3, 8, 8),), CompileOptions(backend="reference", passes="graph-opt,prepack-weights"))
    assert result.ok, result.format()
    assert result.stages[-1][0] == "native (reference)"
