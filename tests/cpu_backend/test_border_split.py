"""Border splits (``backends/cpu/loopgen/borders.py``): a padded window's kernel runs its
interior, where no subscript check can fail, in a loop nest of its own.  Every case is eager's
bits on every ISA the host has, with infinities, NaN and signed zeros in the input; the split cases must
have an unguarded nest (no masked load), and the small or single-load cases must not be split."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule
from tests.support.special_values import with_special_values
from ziggurat.backends.cpu.loopgen import borders


#: (name, input shape, function): windows with padding on both sides or one, strides 1-3,
#: dilation, ceil mode, a count that leaves the padding out, 1-d and 3-d, and odd sizes
CASES: list[tuple[str, tuple[int, ...], Callable[[torch.Tensor], torch.Tensor]]] = [
    ("max3s2p1_stem", (1, 8, 80, 80), lambda x: F.max_pool2d(x, 3, 2, 1)),
    ("max3s1p1", (2, 5, 23, 37), lambda x: F.max_pool2d(x, 3, 1, 1)),
    ("max5s3p2_ceil", (1, 6, 121, 160), lambda x: F.max_pool2d(x, 5, 3, 2, ceil_mode=True)),
    ("max3_dilated", (1, 4, 45, 50), lambda x: F.max_pool2d(x, 3, 1, 1, dilation=2)),
    ("max_rect", (1, 3, 33, 140), lambda x: F.max_pool2d(x, (3, 5), (1, 2), (1, 2))),
    ("avg3s1p1", (1, 7, 35, 35), lambda x: F.avg_pool2d(x, 3, 1, 1)),
    ("avg3s2p1_no_pad_count", (2, 4, 79, 81), lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    ("avg_divisor_ceil", (1, 5, 91, 140), lambda x: F.avg_pool2d(x, 4, 3, 1, ceil_mode=True, divisor_override=7)),
    ("max1d", (4, 32, 300), lambda x: F.max_pool1d(x, 5, 1, 2)),
    ("avg3d", (1, 3, 12, 20, 24), lambda x: F.avg_pool3d(x, 3, 1, 1)),
    ("max3d", (1, 2, 17, 19, 66), lambda x: F.max_pool3d(x, 3, 2, 1)),
]


def _nests(loop_ir: str) -> int:
    return len(re.findall(r"^      loop\.(?:parallel|for|vfor) ", loop_ir, flags=re.M))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("name,shape,fn", CASES, ids=[c[0] for c in CASES])
def test_split_windows_give_eagers_bits(name: str, shape: tuple[int, ...],
                                        fn: Callable[[torch.Tensor], torch.Tensor], dtype: torch.dtype,
                                        isa: str) -> None:
    if dtype == torch.bfloat16 and len(shape) == 5:
        pytest.skip("bf16 3-d pooling runs in torch")
    if dtype == torch.bfloat16 and isa != "avx512":
        pytest.skip("bf16 windows split as float32's; their casts are tested on every ISA (test_bf16_casts.py)")
    x = with_special_values(shape).to(dtype)
    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, threads=2)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, want = compiled(x), fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (got == want) | (got.isnan() & want.isnan())
    assert bool(same.all()), f"{int((~same).sum())} of {same.numel()} values differ"
    assert torch.equal(torch.signbit(got[~got.isnan()]), torch.signbit(want[~want.isnan()]))
    loop_ir = compiled.ir["loop"]
    assert _nests(loop_ir) > 1, "the window kernel was not split"
    if isa != "scalar" and len(shape) < 5:  # an interior nest reads without masks (3-d: the depth's checks stay)
        assert re.search(r"loop\.v(?:gather|load) [^\n]*\] (?:lanes\([^)]*\) )?: ", loop_ir), loop_ir


def test_a_small_window_kernel_is_not_split() -> None:
    x = with_special_values((1, 4, 12, 12))  # 4 x 6 x 6 outputs: under MIN_ELEMENTS
    compiled = compile_cpu(OpModule(lambda x: F.max_pool2d(x, 3, 2, 1)), (x,))
    assert _nests(compiled.ir["loop"]) == 1


def test_a_padded_copy_is_not_split() -> None:
    """One guarded load an element (a zero pad): the split's nests cost more than its checks."""
    x = with_special_values((1, 8, 56, 56))
    fn = lambda x: F.pad(x, (1, 1, 1, 1)) * 2  # noqa: E731
    compiled = compile_cpu(OpModule(fn), (x,))
    assert _nests(compiled.ir["loop"]) == 1
    torch.testing.assert_close(compiled(x), fn(x), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("extent,lo,hi,width,expected", [
    (56, 1, 56, 16, [(0, 16), (16, 40)]),  # the stem pool's columns: one vector of border
    (56, 1, 55, 1, [(0, 1), (1, 54), (55, 1)]),  # rows: no rounding
    (58, 1, 57, 16, [(0, 16), (16, 32), (48, 10)]),  # the interior rounded down to whole vectors
    (34, 1, 33, 16, [(0, 16), (16, 16), (32, 2)]),
    (33, 1, 32, 16, None),  # [16, 32) would leave a one-element last piece, and [16, 16) is empty
    (20, 1, 19, 16, None),  # no whole vector inside
    (40, 0, 40, 16, None),  # no border
])
def test_pieces(extent: int, lo: int, hi: int, width: int, expected: list[tuple[int, int]] | None) -> None:
    assert borders._pieces(extent, lo, hi, width) == expected  # pyright: ignore[reportPrivateUsage]
