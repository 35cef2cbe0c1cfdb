"""Training batch norm of a bf16/float16 model with running statistics of its dtype: eager's CPU
kernel updates them in that dtype, torch's fake kernel (which typed the exported graph) says
float32. The call used to stop on the disagreement ("computed bf16 but the IR declares f32");
the results are widened to the declared float32 exactly, so output and updated statistics are
eager's bits."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import ziggurat


class TrainingBatchNorm(nn.Module):
    def forward(self, x: torch.Tensor, mean: torch.Tensor, var: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, mean, var, w, b, training=True, momentum=0.5, eps=0.6)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_running_statistics_in_their_dtype(dtype: torch.dtype, backend: str) -> None:
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(3, 5, 4, generator=g), torch.randn(5, generator=g), torch.randn(5, generator=g)
    mean, var = torch.randn(5, generator=g), torch.rand(5, generator=g) + 0.5
    x, w, b, mean, var = (t.to(dtype) for t in (x, w, b, mean, var))
    compiled = ziggurat.compile(TrainingBatchNorm(), (x, mean.clone(), var.clone(), w, b), backend=backend)
    ours_stats, eager_stats = (mean.clone(), var.clone()), (mean.clone(), var.clone())
    got = compiled(x, *ours_stats, w, b)
    expected = TrainingBatchNorm()(x, *eager_stats, w, b)
    assert got.dtype == dtype and torch.equal(got, expected)
    for ours, eager in zip(ours_stats, eager_stats, strict=True):
        assert ours.dtype == dtype and torch.equal(ours, eager)
