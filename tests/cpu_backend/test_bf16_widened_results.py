"""A bf16 GEMM whose one reader casts its result to float32 stores the widened bf16 values
itself (``Bf16GemmSpec.round_out``, ``lowering/gemm_bf16.widened_result``): GPT-2's logits
cast was a 12.9 MB pass of its own.  The values are the bf16 result's, so the outputs are
those of the build that casts in a kernel, bit for bit, on the AMX and the AVX512-BF16 kernels."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import ziggurat.backends.cpu.lowering.gemm_bf16 as gemm_bf16
from tests.cpu_backend.conftest import compile_cpu
from ziggurat.backends.cpu.kernels import amx

KERNEL = amx.host_bf16_kernel()
pytestmark = pytest.mark.skipif(KERNEL is None, reason="this host has neither AMX-BF16 nor AVX512-BF16")


class Head(torch.nn.Module):
    """A language model's head: logits in float32 from a bf16 linear (no bias, as tied heads)."""

    def __init__(self, bias: bool, activation: str | None = None) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(11)
        self.linear = torch.nn.Linear(96, 1003, bias=bias)
        with torch.no_grad():
            self.linear.weight.copy_(torch.randn(1003, 96, generator=g) * 0.2)
            if bias:
                self.linear.bias.copy_(torch.randn(1003, generator=g))
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return F.gelu(y) if self.activation == "gelu" else y


class Scores(torch.nn.Module):
    """Attention scores read in float32 by a softmax, and a residual add in float32."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = (q @ k.transpose(-1, -2)).float()
        p = torch.softmax(s * 0.25, -1)
        return p, (p.to(v.dtype) @ v).float() + 1.0


Build = Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...], dict[str, object]]]


def _x(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape))) * 3).to(dtype)


CASES: dict[str, Build] = {
    "logits": lambda: (Head(False).eval(), (_x(1, 37, 96),), {"precision": "bf16"}),
    "logits_bias": lambda: (Head(True).eval(), (_x(2, 5, 96),), {"precision": "bf16"}),
    "logits_gelu": lambda: (Head(True, "gelu").eval(), (_x(3, 96),), {"precision": "bf16"}),
    "native_scores": lambda: (Scores(), tuple(_x(1, 4, 33, 16, dtype=torch.bfloat16) for _ in range(3)), {}),
}


def _compile(name: str, widened: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[object, tuple[torch.Tensor, ...]]:
    model, xs, options = CASES[name]()
    with monkeypatch.context() as m:
        if not widened:
            m.setattr(gemm_bf16, "widened_result", lambda *a: None)
        return compile_cpu(model, xs, **options), xs


@pytest.mark.parametrize("kernel", ["amx", "avx512bf16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_widened_result_is_the_cast_result(name: str, kernel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if kernel == "avx512bf16":
        monkeypatch.setenv(amx.DISABLE_ENV, "1")
    elif KERNEL != "amx":
        pytest.skip("this host has no AMX-BF16")
    widened, xs = _compile(name, True, monkeypatch)
    cast, _ = _compile(name, False, monkeypatch)
    loop_ir = widened.ir["loop"]  # type: ignore[attr-defined]
    assert "round_out = true" in loop_ir and "round_out" not in cast.ir["loop"]  # type: ignore[attr-defined]
    assert f'bf16_kernel = "{kernel}"' in loop_ir
    for got, want in zip(_flat(widened(*xs)), _flat(cast(*xs)), strict=True):  # type: ignore[operator]
        assert got.dtype == want.dtype == torch.float32
        assert torch.equal(got, want)


def test_the_logits_cast_is_no_kernel_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head's GEMM writes the float32 output itself (only the input's cast to bf16 is a
    kernel); the values are eager autocast's bf16 logits, widened."""
    widened, xs = _compile("logits", True, monkeypatch)
    cast, _ = _compile("logits", False, monkeypatch)

    def kernels(compiled: object) -> list[str]:
        return [line for line in compiled.ir["loop"].splitlines() if "loop.kernel @" in line]  # type: ignore[attr-defined]

    assert len(kernels(widened)) == 1 and len(kernels(cast)) == 2, (kernels(widened), kernels(cast))
    model, _, _ = CASES["logits"]()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = model(*xs)
    got = widened(*xs)  # type: ignore[operator]
    assert got.dtype == torch.float32 and torch.equal(got, expected.float())


def _flat(out: object) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple | list) else [out]  # type: ignore[list-item]


def test_round_out_needs_a_float32_c() -> None:
    from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
    from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError

    with pytest.raises(GemmSpecError, match="round_out"):
        Bf16GemmSpec(4, 4, 4, kernel="amx", round_out=True)
    assert Bf16GemmSpec(4, 4, 4, kernel="amx", out_bf16=False, round_out=True, rounded_steps=True).round_out


@pytest.mark.parametrize("view", ["narrow", "split", "chunk"])
def test_a_view_of_a_gemm_read_elsewhere_keeps_its_bf16_result(view: str) -> None:
    """A full narrow or a one-piece split lowers to the GEMM's own value: the cast behind it is
    that view's only reader, not the GEMM's.  Widening the GEMM's output there left the relu
    reading a buffer nothing wrote (a LoweringBug at compile time, found in review)."""
    views = {"narrow": lambda y: y.narrow(0, 0, 5), "split": lambda y: y.split(48, 1)[0],
             "chunk": lambda y: y.chunk(1, 0)[0]}

    class TwoReaders(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(32, 48)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            y = self.linear(x)
            return views[view](y).float(), torch.relu(y) - 1

    torch.manual_seed(0)
    model = TwoReaders().eval().bfloat16()
    x = _x(5, 32, dtype=torch.bfloat16)
    compiled = compile_cpu(model, (x,))
    assert "round_out" not in compiled.ir["loop"]
    for got, want in zip(compiled(x), model(x), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-2, atol=1e-2)
