"""Writes an op's schema does not declare (``ziggurat.ir.importer.hidden_writes``).

``batch_norm(training=True)`` updates ``running_mean``/``running_var`` in place, but its
schema types them ``Tensor?``: both frontends imported it as a pure op, so a later read of a
statistic saw the old value and the caller's tensors were never updated (seed 11 program
3727: ``F.batch_norm(c1, x3, c0, c2, c0, training=True)`` then ``v1 >= c0``).  The export
frontend now functionalizes it (the caller's statistics are written back); a statistic that
is a buffer, or that is also the op's ``weight``/``bias``, is refused, and so is the op on
the TorchScript frontend, which has no functional form for it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

import ziggurat
from ziggurat.ir.errors import ModelImportError


class StatsFromCaller(torch.nn.Module):
    def forward(self, x: Tensor, mean: Tensor, var: Tensor) -> tuple[Tensor, Tensor]:
        y = F.batch_norm(x, mean, var, training=True, momentum=0.5)
        return y, mean * 2  # reads the updated statistic


class InstanceStatsFromCaller(torch.nn.Module):
    def forward(self, x: Tensor, mean: Tensor, var: Tensor) -> tuple[Tensor, Tensor]:
        y = F.instance_norm(x, mean, var, torch.ones(3) * 2, None, use_input_stats=True, momentum=0.3)
        return y, var + 1


class StatsInBuffer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("var", torch.rand(3) + 1)

    def forward(self, x: Tensor, mean: Tensor) -> Tensor:
        return F.batch_norm(x, mean, self.var, training=True)


class BiasIsRunningVar(torch.nn.Module):
    def forward(self, x: Tensor, mean: Tensor, var: Tensor) -> Tensor:
        return F.batch_norm(x, mean, var, None, var, training=True, momentum=0.5)


class NoStats(torch.nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.batch_norm(x, None, None, training=True)


def _inputs() -> tuple[Tensor, Tensor, Tensor]:
    torch.manual_seed(0)
    return torch.randn(4, 3, 5), torch.randn(3), torch.rand(3) + 1


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("model", [StatsFromCaller(), InstanceStatsFromCaller()], ids=["batch", "instance"])
def test_export_writes_training_norm_statistics_back(backend: str, model: torch.nn.Module) -> None:
    """instance_norm stays whole through ``run_decompositions``: it is decomposed as eager's
    composite (batch_norm over [1, N*C, ...], then the mean of the N updates)."""
    x, mean, var = _inputs()
    compiled = ziggurat.compile(model, (x, mean.clone(), var.clone()), backend=backend, frontend="export")
    eager_stats, stats = [mean.clone(), var.clone()], [mean.clone(), var.clone()]
    expected = model(x, *eager_stats)
    got = compiled(x, *stats)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(stats, eager_stats)


@pytest.mark.parametrize("model", [StatsInBuffer(), BiasIsRunningVar()], ids=["buffer", "bias-alias"])
def test_export_refuses_training_batch_norm_it_cannot_functionalize(model: torch.nn.Module) -> None:
    x, mean, var = _inputs()
    args = (x, mean) if isinstance(model, StatsInBuffer) else (x, mean, var)
    with pytest.raises(ModelImportError, match="in place"):
        ziggurat.compile(model, args, backend="cpu", frontend="export")


def test_torchscript_refuses_training_batch_norm_with_running_statistics() -> None:
    x, mean, var = _inputs()
    with pytest.raises(ModelImportError, match="updates its running_mean and running_var in place"):
        ziggurat.compile(StatsFromCaller(), (x, mean, var), backend="cpu", frontend="torchscript")


def test_training_batch_norm_without_running_statistics_compiles() -> None:
    x, _, _ = _inputs()
    for frontend in ("torchscript", "export"):
        compiled = ziggurat.compile(NoStats(), (x,), backend="cpu", frontend=frontend)
        torch.testing.assert_close(compiled(x), F.batch_norm(x, None, None, training=True), rtol=1e-5, atol=1e-5)
