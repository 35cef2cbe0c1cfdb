"""The bf16 GEMM benchmark's L1- and L2-fed AMX loops compute what their docstring says they load, and the
interleaved rounds sample them beside the register-only peak."""

from __future__ import annotations

import math

import pytest
import torch

from ziggurat.backends.cpu.kernels import amx
from ziggurat.bench.gemm_bf16_bench import FED_ROW_BYTES, PeakProbe, interleaved

needs_amx = pytest.mark.skipif(amx.host_bf16_kernel() != "amx", reason="this host has no AMX-BF16")


def test_the_fed_loops_are_amx_probes_only() -> None:
    for level in FED_ROW_BYTES:
        with pytest.raises(ValueError, match="AMX probe"):
            PeakProbe("avx512bf16", fed=level)


def _expected_last_tile(buf: torch.Tensor, iters: int, row_bytes: int) -> torch.Tensor:
    """The loop's fourth accumulator (the last stored): A rows 16..31 (row stride ``row_bytes``,
    64 bytes on at each step, wrapping at the row's end) times B's second 1 KB tile of each 2 KB
    step (``row_bytes / 64`` steps, wrapping)."""
    values = buf.view(torch.bfloat16).float()
    cols, steps = row_bytes // 2, row_bytes // 64
    a_rows = values[:16 * row_bytes].view(32, cols)[16:32]  # 32 rows of row_bytes / 2 bf16
    b_steps = values[16 * row_bytes:].view(steps, 2, 16, 32)  # steps x 2 tiles x 16 pair rows x 16 pairs
    acc = torch.zeros(16, 16, dtype=torch.float64)
    for i in range(iters):
        a = a_rows[:, (32 * i) % cols:(32 * i) % cols + 32].double()  # 16 x 32 (16 pairs of K)
        b = b_steps[i % steps, 1].view(16, 16, 2).permute(0, 2, 1).reshape(32, 16).double()
        acc += a @ b
    return acc


@needs_amx
@pytest.mark.parametrize("level", ["L1", "L2"])
def test_the_fed_loop_multiplies_the_tiles_it_names(level: str) -> None:
    probe = PeakProbe("amx", fed=level)
    out = torch.zeros(256)
    assert probe.buf.numel() * 4 == 64 * FED_ROW_BYTES[level]
    for iters in (1, 3, 8, 11, 40):
        probe.fn(iters, out.data_ptr(), probe.buf.data_ptr())
        want = _expected_last_tile(probe.buf, iters, FED_ROW_BYTES[level])
        got = out.view(16, 16).double()
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-4), (iters, (got - want).abs().max())


@needs_amx
def test_interleaved_rounds_sample_the_fed_loop() -> None:
    peak, fed, fed_l2 = PeakProbe("amx"), PeakProbe("amx", fed="L1"), PeakProbe("amx", fed="L2")
    peak.iters = fed.iters = fed_l2.iters = 2000
    x = torch.zeros(4)
    peaks, rates = interleaved(peak, 1, 10 ** 10, 3, {"ours": lambda: x.add_(1)}, {"fed": fed, "fed_l2": fed_l2})
    assert len(peaks) == len(rates["fed"]) == len(rates["fed_l2"]) == len(rates["ours"]) == 3
    assert all(math.isfinite(v) and v > 0 for v in peaks + rates["fed"] + rates["fed_l2"])
