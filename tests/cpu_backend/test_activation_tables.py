"""16-bit activations looked up (``look-up-half-float-activations``, ``codegen/lookup.py``), in
the kernels of every ISA the host runs: 16-lane gathers (avx512), 8-lane ones (avx2) and
scalar loads.

On every bf16 and float16 bit pattern (each function on one of the host's ISAs, in turn):
* the kernel's answer is eager's bits (its float32 function of the widened value, rounded back)
  wherever the input is finite and eager's vector loop is finite; elsewhere it is eager's scalar
  function's, as the computed kernel's is;
* the computed kernel (tables off) is within one 16-bit ulp of it, or nearer the float64 truth
  where eager's float32 function cancels, and the same value wherever the input or the answer is
  not finite: the table changes no special value.
A bf16 model's activation with a ragged length and 2 threads is eager's bits, on every ISA,
and the tables are on by default (``activation_tables=False`` computes).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from xdsl.dialects.builtin import BFloat16Type, Float16Type, VectorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from tests.cpu_backend.conftest import compile_cpu
from tests.support.host import host_isas
from ziggurat.backends.cpu.codegen.lookup import eager_table
from ziggurat.dialects import loop
from ziggurat.dialects.torch.eager_half_floats import every_bit_pattern, on_eager_16_bit_path

#: (loop.unary kind, eager's float32 function)
FUNCTIONS: list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = [
    ("gelu_erf", F.gelu),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    ("silu", F.silu),
    ("sigmoid", torch.sigmoid),
    ("tanh", torch.tanh),
    ("mish", F.mish),
    ("selu", F.selu),
    ("exp", torch.exp),
    ("exp2", torch.exp2),
    ("expm1", torch.expm1),
    ("log", torch.log),
    ("log2", torch.log2),
    ("log10", torch.log10),
    ("log1p", torch.log1p),
    ("erf", torch.erf),
    ("erfc", torch.erfc),
    ("sin", torch.sin),
    ("cos", torch.cos),
]


class Rounded(torch.nn.Module):
    """``fn`` of the widened input, rounded back to the input's type."""

    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x.float()).to(x.dtype)


def _every(dtype: torch.dtype) -> torch.Tensor:
    return every_bit_pattern(dtype).reshape(256, 256)


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int16)


def _scalar_answers(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Eager's scalar function of each element (an element-wise op reads a strided tensor one
    element at a time)."""
    strided = torch.empty(2 * x.numel())[::2]
    strided.copy_(x.float().flatten())
    return fn(strided).to(x.dtype).reshape(x.shape)


def _same_values(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a == b) | (a.isnan() & b.isnan())


#: (function, ISA): each function on one of the host's ISAs, in turn (each ISA meets both dtypes)
CASES = [(kind, fn, host_isas()[i % len(host_isas())]) for i, (kind, fn) in enumerate(FUNCTIONS)]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize(("kind", "fn", "isa"), CASES, ids=[f"{k}-{i}" for k, _, i in CASES])
def test_every_16_bit_input_gets_eagers_answer(kind: str, fn: Callable[[torch.Tensor], torch.Tensor],
                                               isa: str, dtype: torch.dtype) -> None:
    x = _every(dtype)
    model = Rounded(fn).eval()
    looked_up = compile_cpu(model, (x,), isa=isa, threads=1, activation_tables=True)
    computed = compile_cpu(model, (x,), isa=isa, threads=1, activation_tables=False)
    assert f'loop.lookup "{kind}"' in str(looked_up.ir["loop"])
    assert "loop.lookup" not in str(computed.ir["loop"])

    ours, theirs = looked_up(x), computed(x)
    # the table holds the float32 function eager's 16-bit kernel computes: where that is torch's
    # own loop and a float32 GELU oneDNN's (float16 on Zen 4 and 5), the loop's
    eager = fn(on_eager_16_bit_path(x.float().flatten(), dtype)).reshape(x.shape).to(dtype)
    regular = x.isfinite() & fn(x.float()).isfinite()
    assert torch.equal(_bits(ours)[regular], _bits(eager)[regular])
    special = ~regular
    assert bool(_same_values(ours[special], _scalar_answers(fn, x)[special]).all())
    assert bool(_same_values(ours[special], theirs[special]).all())
    # a one-ulp rounding apart, or eager's float32 function cancels and the computed one is
    # nearer the truth (GELU below x = -3.6: 1 + erf(x / sqrt 2) loses eager's bits), or the
    # same value of another sign (GELU below -5.5 on avx2: eager's -0, the computed +0)
    one_ulp = ((_bits(ours).int() - _bits(theirs).int()).abs() <= 1) | (ours == theirs)
    truth = fn(x.double())
    nearer = (theirs.double() - truth).abs() < (ours.double() - truth).abs()
    assert bool((one_ulp | nearer)[regular].all())


@pytest.mark.parametrize("isa", host_isas())
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_a_16_bit_model_gets_eagers_bits_over_a_ragged_length_and_threads(dtype: torch.dtype, isa: str) -> None:
    class M(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(F.gelu(x) * 3.0) + F.silu(x)

    x = (torch.randn(37, 1001) * 3).to(dtype)
    c = compile_cpu(M().eval(), (x,), isa=isa, threads=2)  # the tables are on by default
    assert set(re.findall(r'loop\.lookup "(\w+)"', str(c.ir["loop"]))) == {"gelu_erf", "sigmoid", "silu"}
    expected, actual = M()(x), c(x)
    # eager's scalar tail (the last elements, fewer than a vector) may round a GELU the other way
    body = slice(0, x.numel() - 32)
    assert torch.equal(_bits(actual).flatten()[body], _bits(expected).flatten()[body])
    torch.testing.assert_close(actual, expected, atol=0, rtol=2 ** -7)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_a_gelu_table_holds_eagers_16_bit_gelu(dtype: torch.dtype) -> None:
    """Every finite answer of the GELU table is eager's 16-bit GELU's, on the path torch takes
    for that type here (oneDNN, or its own loop where oneDNN lacks the type: float16 on Zen 4,
    where a table of oneDNN's float32 GELU was an ulp off on 402 inputs).  Not bf16's subnormal
    answers, which eager's oneDNN GELU flushes to zero (the module docstring of lookup.py)."""
    x = every_bit_pattern(dtype)
    table = torch.frombuffer(bytearray(eager_table("gelu_erf", "bf16" if dtype == torch.bfloat16 else "f16")),
                             dtype=torch.int16)[: 1 << 16]
    eager = F.gelu(x)
    kept = x.isfinite() & eager.isfinite() & ~((eager == 0) & (table.view(dtype) != 0))
    assert torch.equal(table[kept], _bits(eager)[kept])


@pytest.mark.parametrize("isa", host_isas())
def test_every_isa_looks_up_by_default(isa: str) -> None:
    x = torch.randn(64, 64).to(torch.bfloat16)
    model = Rounded(torch.tanh).eval()
    assert "loop.lookup" in str(compile_cpu(model, (x,), isa=isa, threads=1).ir["loop"])
    assert "loop.lookup" not in str(compile_cpu(model, (x,), isa=isa, threads=1, activation_tables=False).ir["loop"])


def test_a_lookup_takes_an_isas_lanes() -> None:
    """16 or 8 lanes, or one scalar, of bf16 or float16; nothing else."""
    good = [BFloat16Type(), Float16Type(), VectorType(BFloat16Type(), [16]), VectorType(Float16Type(), [8])]
    bad = [VectorType(BFloat16Type(), [4]), VectorType(Float16Type(), [32]), f32, VectorType(f32, [8])]
    block = Block(arg_types=good + bad)
    for arg in block.args[: len(good)]:
        loop.LookupOp("gelu_erf", arg).verify()
    for arg in block.args[len(good):]:
        with pytest.raises(VerifyException, match="loop.lookup takes"):
            loop.LookupOp("gelu_erf", arg).verify()
