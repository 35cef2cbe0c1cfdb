"""Loads that do not move by one element per lane: ``//`` and ``%`` of the vector variable
(attention's head merge, a plain vector load: ``lane_step`` against brute force) and
transposing reads (gathers, tiled by the vector width), each against eager on every ISA."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.cpu_backend.test_index_expr import _eval
from tests.support.opinfo import OpModule
from ziggurat.backends.cpu.loopgen.emitter import lane_step
from ziggurat.backends.cpu.lowering.index import IndexExpr, Var


def _random_expr(rng: random.Random, v: Var, other: Var, width: int) -> IndexExpr:
    e = IndexExpr.of(rng.randint(-3, 3) * rng.choice([1, width]))
    for _ in range(rng.randint(1, 3)):
        inner = IndexExpr.of(v) * rng.choice([1, 1, 2]) + IndexExpr.of(other) * rng.choice([0, width, 3])
        inner = inner + rng.choice([0, width, 5, -width])
        d = rng.choice([width, 2 * width, 4 * width, width // 2, 3 * width, 24])
        part = inner // d if rng.random() < 0.5 else inner % d
        e = e + part * rng.choice([1, 1, 7, -2, 64])
    if rng.random() < 0.5:
        e = e + IndexExpr.of(v) * rng.choice([0, 1, 2])
    return e


@pytest.mark.parametrize("width", [8, 16])
def test_lane_step_matches_brute_force(width: int) -> None:
    """Whenever lane_step claims a constant step, every aligned vector of lanes moves by it."""
    rng = random.Random(width)
    v, other = Var("v", 6 * width + 5), Var("o", 5)
    claimed = 0
    for _ in range(400):
        e = _random_expr(rng, v, other, width)
        step = lane_step(e, v, width)
        if step is None:
            continue
        claimed += 1
        for o in range(other.extent):
            for v0 in range(0, v.extent, width):
                base = _eval(e, {v: v0, other: o})
                for lane in range(min(width, v.extent - v0)):
                    assert _eval(e, {v: v0 + lane, other: o}) == base + step * lane, (e, v0, lane)
    assert claimed > 20  # the generator does reach the non-affine cases


@pytest.mark.parametrize(
    "heads, seq, dh",
    [(12, 128, 64), (12, 7, 64), (3, 5, 48), (4, 9, 32), (2, 3, 16), (5, 6, 24), (4, 8, 8), (2, 3, 40)],
    ids=str,
)
def test_head_merge_matches_eager(isa: str, heads: int, seq: int, dh: int) -> None:
    def merge(x: torch.Tensor) -> torch.Tensor:
        return (x * 2.0).transpose(1, 2).reshape(x.shape[0], seq, heads * dh)

    x = torch.randn(2, heads, seq, dh)
    compiled = compile_cpu(OpModule(merge), (x,), isa=isa)
    torch.testing.assert_close(compiled(x), merge(x), rtol=0, atol=0)
    loop_ir = compiled.executable.ir["loop"]
    width = {"avx512": 16, "avx2": 8, "scalar": 1}[isa]
    if width > 1 and dh % width == 0:
        assert "loop.vgather" not in loop_ir, loop_ir


@pytest.mark.parametrize(
    "shape, dims",
    [((512, 512), (1, 0)), ((64, 48), (1, 0)), ((40, 33), (1, 0)), ((33, 40), (1, 0)), ((2, 96, 7, 16), (0, 2, 3, 1)),
     ((3, 32, 20), (0, 2, 1)), ((16, 16), (1, 0))],
    ids=str,
)
def test_transposing_copy_matches_eager(isa: str, shape: tuple[int, ...], dims: tuple[int, ...]) -> None:
    """Transposes run the source-contiguous variable inside the vector loop (tiled by the
    vector width when its extent allows); every element must land where eager puts it."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x.permute(*dims) + 1.0

    x = torch.randn(*shape)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)
    if isa == "avx512" and shape == (512, 512):
        loop_ir = compiled.executable.ir["loop"]
        vfor = loop_ir.index("loop.vfor")
        assert "loop.for" in loop_ir[vfor:], loop_ir  # the tiled row loop runs inside the vector loop


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda x: torch.nn.functional.pixel_shuffle(x, 3), id="pixel_shuffle3"),
        pytest.param(lambda x: torch.nn.functional.interpolate(x, scale_factor=3, mode="nearest"), id="upsample3"),
        pytest.param(lambda x: x.permute(0, 2, 3, 1).reshape(x.shape[0], -1) * 2.0, id="to_channels_last"),
    ],
)
@pytest.mark.parametrize("shape", [(1, 9, 7, 5), (2, 18, 3, 11)], ids=str)
def test_lane_divmod_by_non_power_of_two(isa: str, fn: Callable[[torch.Tensor], torch.Tensor],
                                         shape: tuple[int, ...]) -> None:
    """Lane indices divided by 3 or 9 (kept in i32 lanes by ``_divrem_i32``) land every
    element where eager puts it, tails included."""
    x = torch.randn(*shape)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0)


@pytest.mark.parametrize("hw", [(9, 10), (17, 5), (224, 224)], ids=str)
def test_three_channel_stem_conv(isa: str, hw: tuple[int, int]) -> None:
    """The NCHW -> padded channels-last copy of a 3-channel image (``j // 3``, ``j % 3`` per lane)."""
    torch.manual_seed(hw[0])
    conv = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1).eval()
    x = torch.randn(1, 3, *hw)
    compiled = compile_cpu(conv, (x,), isa=isa)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), conv(x), rtol=1e-4, atol=1e-5)
