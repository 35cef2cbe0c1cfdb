"""A cumsum of an expanded or broadcast value (fuzz seed 5, programs 3573 and 3950):
kernel-fuse merges the expand / the broadcasting clamp into the scan's kernel, whose inputs
then have another rank than its result.  The scan's dim was checked against its first
input, so the IR did not verify and the compile stopped; it is the result's dimension."""

from __future__ import annotations

import torch

from tests.cpu_backend.conftest import compile_cpu


class ScanOfBroadcast(torch.nn.Module):
    def forward(self, x: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.cumsum(x.expand(2, 5, 7), dim=2), torch.cumsum(torch.clamp(c, min=x), 1)


def test_scan_of_a_broadcast_compiles_natively(isa: str) -> None:
    g = torch.Generator().manual_seed(0)
    x, c = torch.randn(5, 7, generator=g), torch.randn(7, generator=g)
    model = ScanOfBroadcast()
    compiled = compile_cpu(model, (x, c), isa=isa, threads=1)
    assert compiled.report.fallback_ops == {}, compiled.report.fallback_ops
    for got, want in zip(compiled(x, c), model(x, c), strict=True):
        torch.testing.assert_close(got, want)
