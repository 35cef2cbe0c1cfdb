"""bf16 GEMM epilogues whose activation is looked up in eager's answers for every bf16 input
(``Bf16GemmSpec.unary_table``): bit for bit eager's activation of the kernel's rounded product,
NaN's bits included, where the computed activation differs by a bf16 ulp."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.test_gemm_bf16 import KERNELS
from tests.support.eager_activations import EAGER
from ziggurat.backends.cpu.kernels.bf16_tables import TABLED, eager_table, has_table
from ziggurat.dialects.torch.eager_half_floats import every_bit_pattern
from ziggurat.backends.cpu.kernels.gemm_bf16_callable import bf16_gemm_callable
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.backends.cpu.kernels.pack_bf16 import pack_b_bf16

M, N, K = 77, 45, 40  # tails in rows (a 13-row block), columns (13 of a 32-column panel) and K


def _operands() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    a = (torch.randn(M, K, generator=g) * 3).bfloat16()
    a[3, 5], a[4, 2], a[6, 1] = float("nan"), float("inf"), -float("inf")  # NaN, +inf, -inf rows
    a[7] = 3e38  # sums past float32: infinities and NaN
    b = torch.randn(K, N, generator=g).bfloat16()
    bias = torch.randn(N, generator=g)
    other = torch.randn(M, N, generator=g).bfloat16()
    return a, b, bias, other


def _differing(got: torch.Tensor, want: torch.Tensor) -> int:
    return int((got.view(torch.int16) != want.view(torch.int16)).sum())


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("kind", sorted(TABLED))
@pytest.mark.parametrize("binary", [None, "after", "first"])
def test_looked_up_activation_is_eagers_of_the_rounded_product(kernel: str, kind: str, binary: str | None) -> None:
    a, b, bias, other = _operands()
    packed = pack_b_bf16(b)
    plain = bf16_gemm_callable(Bf16GemmSpec(M, N, K, kernel=kernel, threads=1, bias=True, rounded_steps=True))(a, packed, bias)
    epilogue = {} if binary is None else {"binary": "add", "binary_first": binary == "first"}
    spec = Bf16GemmSpec(M, N, K, kernel=kernel, threads=1, bias=True, rounded_steps=True, unary=kind, unary_table=True,
                        **epilogue)  # type: ignore[arg-type]
    got = bf16_gemm_callable(spec)(a, packed, bias, other if binary else None)
    act = EAGER[kind]
    want = act(plain + other) if binary == "first" else act(plain) + other if binary == "after" else act(plain)
    assert _differing(got, want) == 0
    assert bool(got[3].isnan().all()) and not bool(plain[7].isfinite().all())  # the premise: non-finite inputs


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_computed_gelu_differs_where_the_table_does_not(kernel: str) -> None:
    """The premise, and a mutant: the vecmath GELU of the same rounded products differs from
    eager's in some elements (one bf16 ulp across a rounding boundary, and NaN's bits)."""
    a, b, bias, _ = _operands()
    packed = pack_b_bf16(b)
    plain = bf16_gemm_callable(Bf16GemmSpec(M, N, K, kernel=kernel, threads=1, bias=True, rounded_steps=True))(a, packed, bias)
    computed = bf16_gemm_callable(Bf16GemmSpec(M, N, K, kernel=kernel, threads=1, bias=True, rounded_steps=True,
                                               unary="gelu_erf"))(a, packed, bias)
    assert _differing(computed, torch.nn.functional.gelu(plain)) > 0


def test_table_is_eagers_answer_for_every_input() -> None:
    every = every_bit_pattern(torch.bfloat16)
    for kind in sorted(TABLED):
        act = EAGER[kind]
        data = eager_table(kind)
        assert len(data) == 2 * (1 << 16) + 2 and data[-2:] == bytes(2)
        table = torch.frombuffer(bytearray(data[:-2]), dtype=torch.int16)
        assert torch.equal(table, act(every).view(torch.int16)), kind


def test_spec_needs_rounded_steps_and_a_tabled_activation() -> None:
    assert has_table("silu") and not has_table("relu") and not has_table(None)
    with pytest.raises(GemmSpecError, match="unary_table needs rounded_steps"):
        Bf16GemmSpec(8, 8, 8, kernel="amx", unary="gelu_erf", unary_table=True)
    with pytest.raises(GemmSpecError, match="unary_table"):
        Bf16GemmSpec(8, 8, 8, kernel="amx", unary="relu", rounded_steps=True, unary_table=True)
