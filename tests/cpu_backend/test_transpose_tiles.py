"""Transposing reads emitted as tiles (``backends/cpu/codegen/transpose_tiles.py``): ``W`` row
loads and an in-register transpose instead of ``W`` gathers, bit for bit the gathers' values.

Each case checks eager's bits on every ISA the host has, and that the tiled kernels have no
gather left (at the parent commit each of them gathered: ConvNeXt's NCHW -> NHWC input,
1x96x56x56 float32, 1 thread, 0.112 -> 0.034 ms).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule


def _nhwc(x: torch.Tensor) -> torch.Tensor:
    return x.permute(0, 2, 3, 1).contiguous() * 1


def _nchw(x: torch.Tensor) -> torch.Tensor:
    return x.permute(0, 3, 1, 2).contiguous() * 1


def _t(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-1, -2).contiguous() * 1


def _fused(x: torch.Tensor) -> torch.Tensor:  # a cast and arithmetic on the transposed values
    return (x.permute(0, 2, 3, 1) * 2 + 1).to(torch.bfloat16)


#: (name, shape, dtype, function): the vector loop's tail (40 columns: 16 + 16 + 8 lanes, the
#: rows past 8 read nothing), 16- and 64-bit elements, integers, NaN and signed zeros
CASES = [
    ("nchw_to_nhwc", (1, 96, 14, 16), torch.float32, _nhwc),
    ("nhwc_to_nchw", (2, 16, 12, 48), torch.float32, _nchw),
    ("tail_lanes", (3, 40, 32), torch.float32, _t),
    ("bf16", (1, 64, 8, 16), torch.bfloat16, _nhwc),
    ("int32", (2, 48, 32), torch.int32, _t),
    ("int64", (2, 24, 32), torch.int64, _t),
    ("cast_and_arithmetic", (1, 32, 4, 16), torch.float32, _fused),
]


def _values(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    g = torch.Generator().manual_seed(5)
    if not dtype.is_floating_point:
        return torch.randint(-1000, 1000, shape, generator=g).to(dtype)
    x = torch.randn(shape, generator=g)
    flat = x.view(-1)
    flat[::97] = float("nan")
    flat[::89] = -0.0
    return x.to(dtype)


@pytest.mark.parametrize("name,shape,dtype,fn", CASES, ids=[c[0] for c in CASES])
def test_tiles_give_the_gathers_values(name: str, shape: tuple[int, ...], dtype: torch.dtype,
                                       fn: Callable[[torch.Tensor], torch.Tensor], isa: str) -> None:
    x = _values(shape, dtype)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, threads=1)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, want = compiled(x), fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) | (got.isnan() & want.isnan()) if dtype.is_floating_point else got == want
    assert bool(same.all()), f"{int((~same).sum())} values differ"
    if dtype.is_floating_point:
        assert torch.equal(torch.signbit(got[~got.isnan()]), torch.signbit(want[~want.isnan()]))
    assert "llvm.masked.gather" not in compiled.ir["llvm"], "the transposing read still gathers"


def test_threads_split_the_tiles() -> None:
    x = _values((2, 64, 16, 32), torch.float32)
    compiled = compile_cpu(OpModule(_nhwc), (x,), threads=2)
    torch.testing.assert_close(compiled(x), _nhwc(x), rtol=0, atol=0, equal_nan=True)


#: a tiled variable that is no multiple of W: its whole tiles, then its last rows gathered in a
#: nest of their own (ResNet's 14x14 planes: 196 pixels, 12 tiles and 4 rows)
REST_CASES = [
    ("plane_14x14", (1, 64, 14, 14), torch.float32, _nhwc),
    ("bf16_35_pixels", (2, 32, 5, 7), torch.bfloat16, _nhwc),
    ("rows_44", (3, 40, 44), torch.float32, _t),
    ("int64_rows_37", (2, 24, 37), torch.int64, _t),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,shape,dtype,fn", REST_CASES, ids=[c[0] for c in REST_CASES])
def test_tiles_then_the_rest_give_the_gathers_values(name: str, shape: tuple[int, ...], dtype: torch.dtype,
                                                     fn: Callable[[torch.Tensor], torch.Tensor], threads: int,
                                                     isa: str) -> None:
    x = _values(shape, dtype)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, threads=threads)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, want = compiled(x), fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) | (got.isnan() & want.isnan()) if dtype.is_floating_point else got == want
    assert bool(same.all()), f"{int((~same).sum())} values differ"
    if isa != "scalar":  # the tile loop inside the vector loop, then the rest's own nest
        loop_ir = compiled.ir["loop"]
        assert re.search(r"loop\.for %\w+ = 0 to (4|8|16) step 1", loop_ir), loop_ir
        assert loop_ir.count("loop.vgather") == 2, loop_ir
