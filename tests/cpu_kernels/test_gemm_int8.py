"""The AVX512-VNNI int8 GEMM (``kernels/gemm_int8.py``) against the exact sum in float64 and
against eager's float32 ``linear`` of the dequantized operands: odd sizes (row-group, panel,
K-group and 16-lane tails), zero points, every epilogue, one and two threads.  The packing runs
on every host; the kernel where the host has AVX512-VNNI."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tests.support.sweep import each_choice
from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.dialects.fused.pack_int8 import (
    pack_quantized_linear,
    pack_weight_int8,
    unpack_quantized_linear,
    unpack_weight_int8,
)

needs_vnni = pytest.mark.skipif(not host_features().get("avx512vnni"),
                                reason="this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")


def _operands(m: int, n: int, k: int, a_scale: float, zp: int, seed: int = 0):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    u = torch.randint(0, 256, (m, k), generator=g)
    a = (u - zp).to(torch.float32) * torch.tensor(a_scale, dtype=torch.float32)  # dequantize_per_tensor
    w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)
    w_scales = torch.rand(n, generator=g) * 0.01 + 1e-4
    return u, a, w, w_scales


@pytest.mark.parametrize(("n", "k"), [(1, 1), (31, 5), (33, 64), (45, 133), (70, 1000)])
def test_packing_round_trips(n: int, k: int) -> None:
    _, _, w, w_scales = _operands(1, n, k, 0.1, 3)
    assert torch.equal(unpack_weight_int8(pack_weight_int8(w), n, k), w)
    assert torch.equal(unpack_quantized_linear(pack_quantized_linear(w, w_scales, 0.1, 3), n, k),
                       w.to(torch.float32) * w_scales[:, None])


@needs_vnni
@pytest.mark.parametrize(("m", "n", "k"), [(1, 1, 1), (7, 31, 3), (8, 32, 4), (9, 33, 5), (17, 45, 133), (64, 70, 784)])
@pytest.mark.parametrize("zp", [0, 128, 255])
def test_products_are_exact_sums_scaled(m: int, n: int, k: int, zp: int) -> None:
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    a_scale = 0.0173
    u, a, w, w_scales = _operands(m, n, k, a_scale, zp, seed=m * 1000 + n + k)
    bias = torch.randn(n)
    spec = Int8GemmSpec(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, bias=True)
    got = int8_gemm_callable(spec)(a, pack_quantized_linear(w, w_scales, a_scale, zp), bias)
    exact = ((u - zp).double() @ w.double().t()) * (torch.tensor(a_scale, dtype=torch.float32).double()
                                                      * w_scales.double()) + bias.double()
    eager = F.linear(a, w.to(torch.float32) * w_scales[:, None], bias)
    ours, theirs = (got.double() - exact).abs().max(), (eager.double() - exact).abs().max()
    assert float(ours) <= max(float(theirs), 1e-6 * float(exact.abs().max()) + 1e-12), (ours, theirs)


def _dyadic(x: float) -> tuple[int, int]:
    """A finite float as ``mantissa * 2**exponent`` with integers."""
    mantissa, exponent = math.frexp(x)
    return int(mantissa * 2**53), exponent - 53


def _round_to_float32(num: int, exp: int) -> float:
    """``num * 2**exp`` correctly rounded to float32 (ties to even; normal range)."""
    if num == 0:
        return 0.0
    sign, num = (-1 if num < 0 else 1), abs(num)
    shift = num.bit_length() - 24
    if shift > 0:
        q, r = divmod(num, 1 << shift)
        half = 1 << (shift - 1)
        q += 1 if r > half or (r == half and q & 1) else 0
        num, exp = q, exp + shift
    return sign * math.ldexp(num, exp)


@needs_vnni
@pytest.mark.parametrize("seed", range(4))
def test_products_are_the_correctly_rounded_real_values(seed: int) -> None:
    """Every output is ``sum * a_scale * w_scale[j] + bias[j]`` in real numbers rounded once to
    float32 (a float32 epilogue was one ulp off now and then, and a following quantizer made it
    a quantum: fuzz seed 41, program 90, a sum of 7.4999996 quanta came out 7.5000005)."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    m, n, k, zp = 23, 41, 37, 165
    a_scale = float(torch.tensor(0.04, dtype=torch.float32))
    u, a, w, _ = _operands(m, n, k, a_scale, zp, seed=seed)
    w_scales = torch.tensor([0.005, 0.0008, 0.011, 0.002] * 11, dtype=torch.float32)[:n]
    bias = torch.randn(n, generator=torch.Generator().manual_seed(seed))
    spec = Int8GemmSpec(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, bias=True)
    got = int8_gemm_callable(spec)(a, pack_quantized_linear(w, w_scales, a_scale, zp), bias)
    sums = ((u - zp) @ w.to(torch.int64).t()).tolist()
    am, ae = _dyadic(a_scale)
    for j in range(n):
        wm, we = _dyadic(float(w_scales[j]))
        bm, be = _dyadic(float(bias[j]))
        for i in range(m):
            num, exp = sums[i][j] * am * wm, ae + we
            low = min(exp, be)
            total = (num << (exp - low)) + (bm << (be - low))
            assert float(got[i, j]) == _round_to_float32(total, low), (i, j)


@needs_vnni
@pytest.mark.parametrize("unary", [None, "relu", "gelu_erf", "hardtanh"])
@pytest.mark.parametrize("binary", [None, "add", "sub-broadcast"])
@pytest.mark.parametrize("threads", [1, 2])
def test_epilogues(unary: str | None, binary: str | None, threads: int) -> None:
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    m, n, k, a_scale, zp = 19, 37, 70, 0.05, 7
    _, a, w, w_scales = _operands(m, n, k, a_scale, zp, seed=3)
    params = {"min_val": -0.5, "max_val": 0.5} if unary == "hardtanh" else {}
    other = torch.randn(m, n) if binary == "add" else torch.randn(1, n)
    kind = None if binary is None else binary.split("-")[0]
    strides = None if binary is None else ((n, 1) if binary == "add" else (0, 1))
    spec = Int8GemmSpec(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, threads=threads, unary=unary,
                        unary_params=params, binary=kind, alpha=0.5 if kind else 1.0, other_strides=strides)
    got = int8_gemm_callable(spec)(a, pack_quantized_linear(w, w_scales, a_scale, zp), None,
                                   other.contiguous() if binary else None)
    y = F.linear(a.double(), (w.to(torch.float32) * w_scales[:, None]).double())
    if unary == "relu":
        y = torch.relu(y)
    elif unary == "gelu_erf":
        y = F.gelu(y)
    elif unary == "hardtanh":
        y = F.hardtanh(y, -0.5, 0.5)
    if kind == "add":
        y = y + 0.5 * other.double()
    elif kind == "sub":
        y = y - 0.5 * other.double()
    torch.testing.assert_close(got.double(), y, rtol=1e-5, atol=1e-5)


def test_spec_refuses_what_the_kernel_cannot_do() -> None:
    with pytest.raises(GemmSpecError, match="overflow"):
        Int8GemmSpec(m=1, n=1, k=70000, a_scale=0.1, a_zero_point=0)
    with pytest.raises(GemmSpecError, match="uint8"):
        Int8GemmSpec(m=1, n=1, k=4, a_scale=0.1, a_zero_point=300)
    with pytest.raises(GemmSpecError, match="positive finite"):
        Int8GemmSpec(m=1, n=1, k=4, a_scale=float("nan"), a_zero_point=0)
    with pytest.raises(GemmSpecError, match="store_u8 needs a requantize"):
        Int8GemmSpec(m=1, n=1, k=4, a_scale=0.1, a_zero_point=0, store_u8=True)
    with pytest.raises(GemmSpecError, match="store_u8 needs a requantize"):  # int8 values are no bytes
        Int8GemmSpec(m=1, n=1, k=4, a_scale=0.1, a_zero_point=0, requantize=(0.1, 0, -128, 127), store_u8=True)
    with pytest.raises(GemmSpecError, match="quant_min <= zero_point"):
        Int8GemmSpec(m=1, n=1, k=4, a_scale=0.1, a_zero_point=0, requantize=(0.1, 300, 0, 255))
    with pytest.raises(GemmSpecError, match="needs a binary post-op"):
        Int8GemmSpec(m=1, n=1, k=4, a_scale=0.1, a_zero_point=0, other_quantization=(0.1, 3))
    with pytest.raises(GemmSpecError, match="at most 16 input channels"):
        Int8GemmSpec(m=1, n=1, k=17, a_scale=0.1, a_zero_point=0, a_conv=(1, 1, 17, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1),
                      a_nchw=True)


def test_conv_spec_refuses_quantized_operands_it_cannot_take() -> None:
    from ziggurat.backends.cpu.kernels.conv_spec import ConvSpec, ConvSpecError

    def spec(kind: str, **quantized: Any) -> ConvSpec:
        return ConvSpec(kind=kind, batch=1, in_h=4, in_w=4, channels=8, out_h=4, out_w=4, out_channels=8, kh=3, kw=3,
                        ph=1, pw=1, **quantized)

    with pytest.raises(ConvSpecError, match="for a depthwise call only"):
        spec("igemm", in_quantization=(0.1, 3))
    with pytest.raises(ConvSpecError, match="store_u8 needs a requantize"):
        spec("depthwise", store_u8=True)
    with pytest.raises(ConvSpecError, match="positive scale"):
        spec("depthwise", in_quantization=(0.0, 3))
    assert spec("depthwise", in_quantization=(0.1, 3), requantize=(0.2, 0, 0, 255), store_u8=True).in_quantization == (0.1, 3)


@needs_vnni
@pytest.mark.parametrize(("n", "c", "h", "w", "o", "k", "s", "p", "d"),
                         [(1, 3, 5, 6, 4, 3, 1, 1, 1), (2, 17, 9, 7, 33, 3, 2, 1, 1), (1, 16, 8, 8, 8, 3, 1, 0, 1),
                          (2, 5, 11, 10, 7, 5, 2, 2, 2), (1, 64, 14, 14, 64, 3, 1, 1, 1), (1, 3, 20, 20, 16, 7, 2, 3, 1)])
def test_implicit_im2col_convolution(n: int, c: int, h: int, w: int, o: int, k: int, s: int, p: int, d: int) -> None:
    """``a_conv``: A gathered from an NHWC input's taps (the padding is the zero point), the
    weight packed taps outer (``conv_rows``), against eager's convolution."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable
    from ziggurat.dialects.fused.pack_int8 import conv_rows, unpack_quantized_conv

    g = torch.Generator().manual_seed(n * 100 + c + o)
    a_scale, zp = 0.02, 77
    u = torch.randint(0, 256, (n, c, h, w), generator=g)
    x = (u - zp).to(torch.float32) * torch.tensor(a_scale, dtype=torch.float32)
    wt = torch.randint(-128, 128, (o, c, k, k), generator=g, dtype=torch.int8)
    w_scales = torch.rand(o, generator=g) * 0.01 + 1e-3
    bias = torch.randn(o, generator=g)
    weight = wt.to(torch.float32) * w_scales[:, None, None, None]
    want = F.conv2d(x, weight, bias, stride=s, padding=p, dilation=d)
    oh, ow = want.shape[2:]
    packed = pack_quantized_linear(conv_rows(wt), w_scales, a_scale, zp)
    assert torch.equal(unpack_quantized_conv(packed, (o, c, k, k)), weight)
    spec = Int8GemmSpec(m=n * oh * ow, n=o, k=c * k * k, a_scale=a_scale, a_zero_point=zp, bias=True, threads=2,
                        a_conv=(h, w, c, k, k, s, s, p, p, d, d, oh, ow))
    got = int8_gemm_callable(spec)(x.permute(0, 2, 3, 1).contiguous(), packed, bias)
    got = got.reshape(n, oh, ow, o).permute(0, 3, 1, 2)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5 * float(want.abs().max()))


@needs_vnni
@each_choice(["n, c, h, w, kh, kw, s, p, d", "u8"],
             [(2, 3, 9, 11, 3, 3, 2, 1, 1), (1, 3, 13, 7, 7, 7, 2, 3, 1), (1, 5, 6, 6, 3, 2, 1, 2, 2),
              (1, 16, 5, 5, 3, 3, 1, 1, 1), (3, 1, 4, 9, 2, 3, 1, 0, 1), (1, 3, 30, 28, 7, 7, 2, 3, 1),
              (2, 4, 21, 19, 5, 5, 1, 2, 1), (1, 2, 6, 5, 9, 9, 1, 4, 1), (1, 1, 3, 40, 1, 17, 1, 0, 1)],
             [False, True], ids=[None, ["float32", "uint8"]])
def test_planar_gather_is_the_channels_last_one(n: int, c: int, h: int, w: int, kh: int, kw: int, s: int, p: int,
                                                d: int, u8: bool) -> None:
    """``a_nchw``: the taps gathered from an NCHW input's planes (float32 requantized, or its
    uint8 values: a row of taps per plane with ``dw == 1``, the padding's columns masked to the
    zero point, a kernel wider than the image included) give the NHWC gather's products bit for
    bit."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    g = torch.Generator().manual_seed(n * 100 + c * 10 + kh)
    oh, ow = (h + 2 * p - d * (kh - 1) - 1) // s + 1, (w + 2 * p - d * (kw - 1) - 1) // s + 1
    k, m, o = c * kh * kw, n * oh * ow, 37
    conv = (h, w, c, kh, kw, s, s, p, p, d, d, oh, ow)
    packed = pack_quantized_linear(torch.randint(-128, 128, (o, k), dtype=torch.int8, generator=g),
                                   torch.rand(o, generator=g) * 0.01 + 1e-3, 0.02, 7)
    u = torch.randint(0, 256, (n, c, h, w), dtype=torch.uint8, generator=g)
    x = (u.to(torch.float32) - 7) * 0.02
    nhwc = Int8GemmSpec(m=m, n=o, k=k, a_scale=0.02, a_zero_point=7, threads=2, a_conv=conv)
    planar = Int8GemmSpec(m=m, n=o, k=k, a_scale=0.02, a_zero_point=7, threads=2, a_conv=conv, a_nchw=True, a_u8=u8)
    want = int8_gemm_callable(nhwc)(x.permute(0, 2, 3, 1).contiguous(), packed)
    got = int8_gemm_callable(planar)((u if u8 else x).contiguous(), packed)
    assert torch.equal(got, want)


@needs_vnni
@each_choice(["conv, planar", "threads", "blocked"], [(False, False), (True, False), (True, True)], [1, 2],
             [None, True, False], ids=[["linear", "conv", "planar-conv"], None, ["by-size", "row-blocks", "two-phases"]])
def test_runtime_m_is_the_static_call_bit_for_bit(threads: int, conv: bool, planar: bool,
                                                  blocked: bool | None) -> None:
    """``m_runtime`` (a range build's dynamic batch or sequence): one kernel, planned for the
    largest ``m``, called with fewer rows (every remainder of the 8-row groups, a single row,
    the largest) gives the static kernel of that ``m`` bit for bit, with a residual post-op and
    a requantized output, and writes no row past its ``m``."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    g = torch.Generator().manual_seed(threads)
    n, zp, a_scale = 45, 9, 0.03
    if conv:  # planar: a float32 NCHW input of 3 channels, its planes quantized first
        h, w, c, oh, ow = (5, 6, 3, 5, 6) if planar else (3, 3, 5, 3, 3)
        k, per_row, sizes = c * 9, oh * ow, [1, 2, 3, 5, 7]
        geometry: dict[str, Any] = {"a_conv": (h, w, c, 3, 3, 1, 1, 1, 1, 1, 1, oh, ow), "a_nchw": planar}
    else:
        k, per_row, sizes = 37, 1, [1, 2, 7, 8, 9, 13, 16, 23, 40]
        geometry = {}
    top = sizes[-1] * per_row
    packed = pack_quantized_linear(torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g),
                                   torch.rand(n, generator=g) * 0.01 + 1e-3, a_scale, zp)
    bias = torch.randn(n, generator=g)
    common: dict[str, Any] = dict(n=n, k=k, a_scale=a_scale, a_zero_point=zp, bias=True, threads=threads,
                                  binary="add", requantize=(0.05, 3, 0, 255), **geometry)
    dynamic = int8_gemm_callable(Int8GemmSpec(m=top, m_runtime=True, blocked=blocked, **common))
    for size in sizes:
        m = size * per_row
        shape = (size, c, h, w) if conv else (m, k)
        u = torch.randint(0, 256, shape, generator=g)
        x = (u - zp).to(torch.float32) * a_scale
        if conv and not planar:
            x = x.permute(0, 2, 3, 1).contiguous()
        other = torch.randn(m, n, generator=g)
        want = int8_gemm_callable(Int8GemmSpec(m=m, **common))(x, packed, bias, other)
        out = torch.full((top + 8, n), 7.0)
        got = dynamic(x, packed, bias, other, m=m, out=out)
        assert torch.equal(got, want), (size, (got - want).abs().max())
        assert bool((out[m:] == 7.0).all()), f"rows past m={m} written"
    with pytest.raises(ValueError, match="not a size this spec takes"):
        dynamic(x, packed, bias, other, m=top + per_row)


@needs_vnni
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("m", "n", "k", "conv"), [
    (1000, 70, 133, None), (4099, 45, 640, None), (37, 33, 5, None),
    (2 * 31 * 29, 64, 3 * 49, (61, 57, 3, 7, 7, 2, 2, 3, 3, 1, 1, 31, 29)),
    (3 * 28 * 28, 40, 64 * 9, (28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 28, 28)),
], ids=["linear-1000", "linear-4099", "linear-37", "conv7x7s2", "conv3x3"])
def test_row_blocks_are_the_two_phases_bit_for_bit(threads: int, m: int, n: int, k: int,
                                                   conv: tuple[int, ...] | None) -> None:
    """The row-block schedule (each block requantized or gathered, then every panel over it) and
    the two-phase one give the same bits, with a residual and a requantized output, on sizes whose
    last block and last row group are partial; the by-size choice takes row blocks on the large
    ones."""
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    g = torch.Generator().manual_seed(m + n + k)
    zp, a_scale = 7, 0.025
    packed = pack_quantized_linear(torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g),
                                   torch.rand(n, generator=g) * 0.01 + 1e-3, a_scale, zp)
    bias = torch.randn(n, generator=g)
    common: dict[str, Any] = dict(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, bias=True, threads=threads,
                                  binary="add", unary="relu", requantize=(0.05, 3, 0, 255), a_conv=conv)
    if conv is None:
        x = (torch.randint(0, 256, (m, k), generator=g) - zp).to(torch.float32) * a_scale
    else:
        h, w, c = conv[:3]
        x = (torch.randint(0, 256, (m // (conv[11] * conv[12]), h, w, c), generator=g) - zp).to(torch.float32) * a_scale
    other = torch.randn(m, n, generator=g)
    blocked = Int8GemmSpec(blocked=True, **common)
    two = Int8GemmSpec(blocked=False, **common)
    assert blocked.blocked_at(m) and not two.blocked_at(m)
    got = int8_gemm_callable(blocked)(x, packed, bias, other)
    want = int8_gemm_callable(two)(x, packed, bias, other)
    assert torch.equal(got, want), float((got - want).abs().max())
    if m * Int8GemmSpec(**common).ldq > 1 << 21:
        assert Int8GemmSpec(**common).blocked_at(m)


@needs_vnni
def test_a_cached_kernel_called_from_threads_gives_each_call_its_products() -> None:
    """``int8_gemm_callable`` caches one kernel per spec, with one workspace: calls from several
    threads (each its own inputs) must not read one another's requantized rows."""
    import concurrent.futures

    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    m, n, k, zp, a_scale = 64, 45, 133, 3, 0.02
    spec = Int8GemmSpec(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, threads=1)
    kernel = int8_gemm_callable(spec)
    g = torch.Generator().manual_seed(9)
    packed = pack_quantized_linear(torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g),
                                   torch.rand(n, generator=g) * 0.01 + 1e-3, a_scale, zp)
    inputs = [(torch.randint(0, 256, (m, k), generator=g) - zp).to(torch.float32) * a_scale for _ in range(8)]
    want = [kernel(x, packed) for x in inputs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(20):
            got = list(pool.map(lambda x: kernel(x, packed), inputs))
            assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
