"""A bf16 linear's A, where the lowering stores it, is kept in rows the AMX tile loads read best
(``amx.tile_row_stride``: an odd number of 64-byte lines): realized from a kernel's output (a
layer norm, a head merge), it is written one line wider; the output of an AMX GEMM whose only
readers are AMX linears is stored at that stride and read there (BERT's FFN).  The sums do not
change: the padded build is the unpadded one's bits (the rule replaced by the identity), and
both are eager autocast's within its tolerance.  On a host without AMX the rows keep their width."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.kernels import amx

KERNEL = amx.host_bf16_kernel()
needs_bf16 = pytest.mark.skipif(KERNEL is None, reason="this host has neither AMX-BF16 nor AVX512-BF16")


class Ffn(nn.Module):
    """Layer norm, then two linears with a GELU between; ``expose`` also returns the middle."""

    def __init__(self, width: int, hidden: int, expose: bool = False) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)
        self.expose = expose

    def forward(self, x: torch.Tensor) -> Any:
        h = nn.functional.gelu(self.up(self.norm(x)))
        y = self.down(h) + x
        return (y, h) if self.expose else y


def _strides(compiled: Any) -> list[tuple[int, int, int, int]]:
    """``(n, k, lda, ldc)`` of each bf16 GEMM in the loop IR, in order."""
    found = []
    for line in compiled.ir["loop"].splitlines():
        if "loop.gemm" in line and "bf16_kernel" in line:
            fields = {key: int(re.search(rf"\b{key} = (\d+) : i64", line).group(1))  # type: ignore[union-attr]
                      for key in ("n", "k", "lda", "ldc")}
            found.append((fields["n"], fields["k"], fields["lda"], fields["ldc"]))
    return found


def _compile(model: nn.Module, x: torch.Tensor) -> Any:
    return ziggurat.compile(model, (x,), backend="cpu", precision="bf16", threads=1)


@needs_bf16
def test_linear_inputs_are_stored_at_the_tile_stride(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    model = Ffn(256, 512).eval()
    x = torch.randn(2, 37, 256)
    padded = _compile(model, x)
    if KERNEL == "amx":
        # A of `up` realized from the norm at 288 (256 + one line); `up` stores its output at 544
        # (512 + 32), where `down` reads it
        assert _strides(padded) == [(512, 256, 288, 544), (256, 512, 544, 256)]
    else:
        assert _strides(padded) == [(512, 256, 256, 512), (256, 512, 512, 256)]
    monkeypatch.setattr(amx, "tile_row_stride", lambda row_bytes: row_bytes)
    plain = _compile(model, x)
    assert _strides(plain) == [(512, 256, 256, 512), (256, 512, 512, 256)]
    with torch.no_grad():
        out = padded(x)
        assert torch.equal(out, plain(x))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            expected = model(x)
    scale = expected.float().abs().max().item()
    torch.testing.assert_close(out.float(), expected.float(), rtol=2e-2, atol=2e-2 * scale)


@needs_bf16
def test_a_result_read_elsewhere_keeps_its_width() -> None:
    """The middle is also an output of the graph: stored at its own width (only a result whose
    readers are all AMX linears is widened)."""
    torch.manual_seed(1)
    model = Ffn(256, 512, expose=True).eval()
    x = torch.randn(3, 256)
    compiled = _compile(model, x)
    up, down = _strides(compiled)
    assert up[3] == 512 and down[2] == 512
    with torch.no_grad():
        y, h = compiled(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            want_y, want_h = model(x)
    for got, want in ((y, want_y), (h, want_h)):
        scale = want.float().abs().max().item()
        torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2 * scale)
