"""The kernel level computes what the fused level computes: the reference interpreter runs
the module before and after convert-fused-to-kernel and kernel-fuse on the same inputs, and
bisect sees every stage of the CPU pipeline up to the loop level as interpretable."""

from __future__ import annotations

import torch
from torch import nn

import ziggurat
from ziggurat.backends.passes import parse_pipeline
from ziggurat.dialects.kernel import KernelOp
from ziggurat.ir.importer import import_model
from ziggurat.ir.interpreter import run
from ziggurat.ir.pipeline import run_pipeline


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(12, 24)
        self.norm = nn.LayerNorm(24)

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.relu(self.fc(x))
        z = self.norm(y * y + 1.0)
        s = torch.softmax(z, -1).sum(-1) + z.amax(-1)
        g = torch.index_select(z.t(), 0, idx).cumsum(0)
        return s, g


def test_kernel_level_interprets_like_the_fused_level() -> None:
    torch.manual_seed(0)
    model = Block().eval()
    x, idx = torch.randn(5, 12), torch.tensor([3, 0, 23, 7])
    module = import_model(model, (x, idx), "export")
    run_pipeline(module, parse_pipeline("graph-opt,prepack-weights"))
    fused = run(module, [x, idx])
    run_pipeline(module, parse_pipeline("convert-fused-to-kernel,kernel-fuse"))
    assert any(isinstance(op, KernelOp) for op in module.walk())
    kernel = run(module, [x, idx])
    with torch.no_grad():
        expected = model(x, idx)
    for got, ref, want in zip(kernel, fused, expected, strict=True):
        torch.testing.assert_close(got, ref, rtol=0, atol=0)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_bisect_reads_the_kernel_level() -> None:
    torch.manual_seed(0)
    model = Block().eval()
    x, idx = torch.randn(5, 12), torch.tensor([3, 0, 23, 7])
    result = ziggurat.bisect(model, (x, idx), backend="cpu", threads=1)
    stages = dict(result.stages)
    assert stages["convert-fused-to-kernel"] is not None and stages["kernel-fuse"] is not None
    assert stages["kernel-fuse"] < 1e-5
    assert result.divergence is None
