"""The AVX512-VNNI 1x1 convolution (``kernels/conv_int8.py``) against eager's float32
convolution of the dequantized operands and the exact float64 sum: odd channel counts (the
4-channel groups, the 8-row groups), pixel counts (the 32-pixel panels and 16-lane tails),
batches, zero points, every epilogue, one and two threads."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.cpu.kernels.conv_int8 import Int8PointwiseSpec
from ziggurat.dialects.fused.pack_int8 import pack_quantized_pointwise, unpack_quantized_pointwise

needs_vnni = pytest.mark.skipif(not host_features().get("avx512vnni"),
                                reason="this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")


def _operands(n: int, cout: int, cin: int, pixels: int, a_scale: float, zp: int, seed: int):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    u = torch.randint(0, 256, (n, cin, pixels), generator=g)
    x = (u - zp).to(torch.float32) * torch.tensor(a_scale, dtype=torch.float32)
    w = torch.randint(-128, 128, (cout, cin), generator=g, dtype=torch.int8)
    w_scales = torch.rand(cout, generator=g) * 0.01 + 1e-4
    return u, x, w, w_scales


@pytest.mark.parametrize(("cout", "cin"), [(1, 1), (7, 3), (8, 4), (17, 13), (64, 96)])
def test_packing_round_trips(cout: int, cin: int) -> None:
    _, _, w, w_scales = _operands(1, cout, cin, 1, 0.1, 3, 0)
    unpacked = unpack_quantized_pointwise(pack_quantized_pointwise(w, w_scales, 0.1, 3), cout, cin)
    assert torch.equal(unpacked, (w.to(torch.float32) * w_scales[:, None]).reshape(cout, cin, 1, 1))


@needs_vnni
@pytest.mark.parametrize(("n", "cout", "cin", "pixels"),
                         [(1, 1, 1, 1), (2, 7, 3, 15), (1, 8, 4, 32), (3, 9, 5, 33), (2, 17, 13, 45), (1, 64, 96, 196)])
@pytest.mark.parametrize("zp", [0, 128, 255])
def test_products_are_exact_sums_scaled(n: int, cout: int, cin: int, pixels: int, zp: int) -> None:
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_pointwise_callable

    a_scale = 0.0173
    u, x, w, w_scales = _operands(n, cout, cin, pixels, a_scale, zp, seed=cout * 100 + cin + pixels)
    bias = torch.randn(cout)
    spec = Int8PointwiseSpec(batch=n, cout=cout, cin=cin, pixels=pixels, a_scale=a_scale, a_zero_point=zp, bias=True)
    got = int8_pointwise_callable(spec)(x, pack_quantized_pointwise(w, w_scales, a_scale, zp), bias)
    scale = torch.tensor(a_scale, dtype=torch.float32).double() * w_scales.double()
    exact = torch.einsum("oc,ncp->nop", w.double(), (u - zp).double()) * scale[None, :, None] + bias.double()[None, :, None]
    eager = F.conv2d(x.unsqueeze(-1), (w.to(torch.float32) * w_scales[:, None])[:, :, None, None], bias).squeeze(-1)
    ours, theirs = (got.double() - exact).abs().max(), (eager.double() - exact).abs().max()
    assert float(ours) <= max(float(theirs), 1e-6 * float(exact.abs().max()) + 1e-12), (ours, theirs)


@needs_vnni
@pytest.mark.parametrize("unary", [None, "relu", "relu6", "hardtanh"])
@pytest.mark.parametrize("binary", [None, "add", "sub"])
@pytest.mark.parametrize("threads", [1, 2])
def test_epilogues(unary: str | None, binary: str | None, threads: int) -> None:
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_pointwise_callable

    n, cout, cin, pixels, a_scale, zp = 2, 19, 11, 37, 0.05, 7
    _, x, w, w_scales = _operands(n, cout, cin, pixels, a_scale, zp, seed=9)
    params = {"min_val": -0.5, "max_val": 0.5} if unary == "hardtanh" else {}
    other = torch.randn(n, cout, pixels)
    spec = Int8PointwiseSpec(batch=n, cout=cout, cin=cin, pixels=pixels, a_scale=a_scale, a_zero_point=zp,
                             threads=threads, unary=unary, unary_params=params, binary=binary,
                             alpha=0.5 if binary else 1.0)
    got = int8_pointwise_callable(spec)(x, pack_quantized_pointwise(w, w_scales, a_scale, zp), None,
                                        other if binary else None)
    y = torch.einsum("oc,ncp->nop", (w.to(torch.float32) * w_scales[:, None]).double(), x.double())
    if unary == "relu":
        y = torch.relu(y)
    elif unary == "relu6":
        y = y.clamp(0, 6)
    elif unary == "hardtanh":
        y = F.hardtanh(y, -0.5, 0.5)
    if binary == "add":
        y = y + 0.5 * other.double()
    elif binary == "sub":
        y = y - 0.5 * other.double()
    torch.testing.assert_close(got.double(), y, rtol=1e-5, atol=1e-5)
