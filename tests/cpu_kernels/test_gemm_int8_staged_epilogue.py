"""The int8 GEMM's transcendental epilogues run over a staged tile (``staged_epilogue``), a few
rows per activation call: each is bit for bit the kernel without the activation followed by the
same vecmath activation applied on its own, with the binary op before or after it, a float32 or
a requantized uint8 output, every row-group remainder and a masked column tail."""

from __future__ import annotations

import pytest
import torch

from tests.support.sweep import each_choice
from tests.support.vector_activation import activated
from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec
from ziggurat.dialects.fused.pack_int8 import pack_quantized_linear

pytestmark = pytest.mark.skipif(not host_features().get("avx512vnni"),
                                reason="this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")

def _quantized(y: torch.Tensor, scale: float, zp: int) -> torch.Tensor:
    """PT2E's quantize_per_tensor in float32: round(y * float32(1/scale)) + zp, clamped."""
    inv = torch.tensor(1.0 / scale, dtype=torch.float32)
    return torch.clamp(torch.round(y * inv) + zp, 0, 255).to(torch.uint8)


@each_choice("kind, binary, m", ["gelu_erf", "gelu_tanh", "silu", "sigmoid", "tanh"], [None, "first", "after"],
             [1, 3, 8, 19])
def test_staged_activation_is_the_activation_of_the_plain_kernel(kind: str, binary: str | None, m: int) -> None:
    from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable

    n, k, a_scale, zp = 37, 70, 0.05, 7
    g = torch.Generator().manual_seed(m * 7 + len(kind))
    u = torch.randint(0, 256, (m, k), generator=g, dtype=torch.uint8)
    w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)
    packed = pack_quantized_linear(w, torch.rand(n, generator=g) * 0.02 + 1e-3, a_scale, zp)
    bias = torch.randn(n, generator=g)
    other = torch.randn(m, n, generator=g) * 2
    common = dict(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, a_u8=True, bias=True, threads=1)
    epilogue = {} if binary is None else dict(binary="add", alpha=0.5, other_strides=(n, 1), binary_first=binary == "first")
    plain = int8_gemm_callable(Int8GemmSpec(**common, **(epilogue if binary == "first" else {})))  # type: ignore[arg-type]
    y = plain(u, packed, bias, other if binary == "first" else None).clone()
    want = activated(kind, y)
    if binary == "after":
        want = want + other * 0.5
    got = int8_gemm_callable(Int8GemmSpec(**common, **epilogue, unary=kind))(u, packed, bias, other if binary else None)  # type: ignore[arg-type]
    assert torch.equal(got, want)
    requantize = (0.02, 100, 0, 255)
    spec = Int8GemmSpec(**common, **epilogue, unary=kind, requantize=requantize, store_u8=True)  # type: ignore[arg-type]
    got_u8 = int8_gemm_callable(spec)(u, packed, bias, other if binary else None)
    assert torch.equal(got_u8, _quantized(want, requantize[0], requantize[1]))
