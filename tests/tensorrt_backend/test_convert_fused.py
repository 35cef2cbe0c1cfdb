"""``fused`` dialect ops (from fuse-post-ops) -> layers + post-ops, vs eager."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from conversion_harness import check_converts

torch.manual_seed(0)


class ConvBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(3, 4, 1)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv(x) + x)  # conv -> add(residual) -> relu
        y = F.hardtanh(self.conv2(y), -0.5, 0.5)
        y = F.silu(self.fc(y.mean((2, 3))))
        return F.gelu(torch.matmul(y, y.t()) * 0.5)


def test_fused_ops_convert() -> None:
    from ziggurat.dialects.fused import FusedOp

    result = check_converts(ConvBlock().eval(), [torch.randn(2, 3, 6, 6)], rtol=1e-4, atol=1e-5,
                            pre_passes="graph-opt")
    fused = {k for k in result.report.converted if k.startswith("fused.")}
    assert {"fused.conv2d", "fused.linear", "fused.matmul"} <= fused
    assert not any(isinstance(op, FusedOp) for op in result.module.walk())


def test_prepacked_weights_stay_with_the_cpu_backend() -> None:
    from conversion_harness import convert_and_run

    result = convert_and_run(ConvBlock().eval(), [torch.randn(2, 3, 6, 6)], pre_passes="graph-opt,prepack-weights")
    prepacked = sorted(r.op.split(" @ ")[0] for r in result.report.fallback if "prepacked for the CPU" in r.reason)
    assert prepacked == ["fused.conv2d", "fused.conv2d", "fused.linear"]
    for got, want in zip(result.outputs, result.expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
