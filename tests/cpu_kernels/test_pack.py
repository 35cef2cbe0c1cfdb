"""Weight layouts: definitions, round trips and error messages."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ziggurat.backends.cpu.isa import Isa, vector_width
from ziggurat.backends.cpu.kernels.tiles import choose_nr
from ziggurat.dialects.fused.pack import (
    GemmPackedLayout,
    PackError,
    conv_layout_name,
    pack_conv_weight,
    pack_conv_weight_gemm,
    pack_gemm_b,
    pack_linear_weight,
    unpack_conv_weight,
    unpack_conv_weight_gemm,
    unpack_gemm_b,
    unpack_linear_weight,
)


@pytest.mark.parametrize("k, n, nr", [(1, 1, 16), (5, 33, 16), (64, 64, 32), (7, 100, 32), (3, 9, 4)])
def test_gemm_b_round_trip_and_definition(k: int, n: int, nr: int) -> None:
    b = torch.randn(k, n)
    packed = pack_gemm_b(b, nr)
    layout = GemmPackedLayout(nr=nr, k=k, n=n)
    assert tuple(packed.shape) == layout.packed_shape and packed.is_contiguous()
    assert layout.name == f"KN{nr}n"
    flat = packed.reshape(-1)
    for kk in range(k):
        for nn in range(n):
            assert flat[layout.offset(kk, nn)] == b[kk, nn]
    # zero padding past N
    pad = packed[-1, :, n - (layout.panels - 1) * nr:]
    assert torch.count_nonzero(pad) == 0
    torch.testing.assert_close(unpack_gemm_b(packed, n), b, rtol=0, atol=0)


def test_linear_weight_round_trip() -> None:
    w = torch.randn(70, 45)  # [N, K]
    packed = pack_linear_weight(w, 32)
    assert tuple(packed.shape) == (3, 45, 32)
    torch.testing.assert_close(unpack_linear_weight(packed, 70), w, rtol=0, atol=0)
    torch.testing.assert_close(unpack_gemm_b(packed, 70), w.t(), rtol=0, atol=0)


def test_choose_nr_is_a_multiple_of_the_vector_width() -> None:
    for isa in Isa:
        nr = choose_nr(isa)
        assert nr % vector_width(isa) == 0
    assert choose_nr(Isa.AVX512) == 32 and choose_nr(Isa.AVX2) == 16


@pytest.mark.parametrize("o, i, ib, ob", [(16, 16, 16, 16), (10, 3, 4, 8), (33, 17, 16, 16)])
def test_conv_weight_blocked(o: int, i: int, ib: int, ob: int) -> None:
    w = torch.randn(o, i, 3, 2)
    packed = pack_conv_weight(w, ib, ob)
    ob_n, ib_n = -(-o // ob), -(-i // ib)
    assert tuple(packed.shape) == (ob_n, ib_n, 3, 2, ib, ob)
    assert conv_layout_name(ib, ob) == f"OIhw{ib}i{ob}o"
    for oo in (0, o - 1):
        for ii in (0, i - 1):
            assert packed[oo // ob, ii // ib, 2, 1, ii % ib, oo % ob] == w[oo, ii, 2, 1]
    torch.testing.assert_close(unpack_conv_weight(packed, o, i), w, rtol=0, atol=0)
    with pytest.raises(PackError, match="do not match"):
        unpack_conv_weight(packed, o + ob, i)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_weight_gemm_layout_is_implicit_gemm(groups: int) -> None:
    """Per group, the packed panels are the B operand of conv as a GEMM over NHWC
    patches with K ordered (y, x, i)."""
    o, ig, kh, kw = 6, 5, 3, 2
    w = torch.randn(o, ig, kh, kw)
    x = torch.randn(1, ig * groups, 7, 6)
    nr = 4
    packed = pack_conv_weight_gemm(w, nr, groups)
    assert tuple(packed.shape) == (groups, -(-(o // groups) // nr), kh * kw * ig, nr)
    ref = F.conv2d(x, w, groups=groups)  # [1, O, oh, ow]
    oh, ow = ref.shape[2:]
    og = o // groups
    for g in range(groups):
        xg = x[:, g * ig:(g + 1) * ig]
        cols = F.unfold(xg, (kh, kw))  # [1, ig*kh*kw, L] ordered (i, y, x)
        patches = cols.reshape(ig, kh, kw, -1).permute(3, 1, 2, 0).reshape(-1, kh * kw * ig)  # (y, x, i)
        b_kn = unpack_gemm_b(packed[g], og)
        out = (patches @ b_kn).t().reshape(og, oh, ow)
        torch.testing.assert_close(out, ref[0, g * og:(g + 1) * og], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(unpack_conv_weight_gemm(packed, tuple(w.shape), groups), w, rtol=0, atol=0)


def test_pack_errors() -> None:
    with pytest.raises(PackError, match="2-d"):
        pack_gemm_b(torch.randn(3), 16)
    with pytest.raises(PackError, match="nr must be a positive int"):
        pack_gemm_b(torch.randn(3, 3), 0)
    with pytest.raises(PackError, match="floating-point"):
        pack_gemm_b(torch.ones(3, 3, dtype=torch.int64), 16)
    with pytest.raises(PackError, match="does not match"):
        unpack_gemm_b(torch.zeros(2, 3, 16), 40)
    with pytest.raises(PackError, match="positive int"):
        GemmPackedLayout(nr=0, k=1, n=1)
    with pytest.raises(PackError, match="divisible by groups"):
        pack_conv_weight_gemm(torch.randn(5, 2, 1, 1), 4, groups=2)
