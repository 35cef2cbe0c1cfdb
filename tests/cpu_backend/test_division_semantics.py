"""Integer and float division, remainder and fmod, bit-exact against eager on every ISA.

Regression tests of issue 14 item 6: ``rounding_mode="trunc"`` on integers was the floor
quotient for operands of different signs (-98 for -293 // 3), integer ``fmod`` had the
divisor's sign instead of the dividend's, float floor division was ``floor(a / b)`` (10 for
``1 // 0.1``, torch gives 9: it floors from the exact ``fmod``) and float ``fmod`` /
``remainder`` were ``a - trunc(a / b) * b`` (0 instead of 0.0851 for ``fmod(1e6, 0.1)``).
``INT_MIN // -1`` killed the process with SIGFPE (x86 ``idiv`` traps on it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

import ziggurat

BinaryFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

OPS: dict[str, BinaryFn] = {
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "floor_divide": torch.floor_divide,
    "remainder": torch.remainder,
    "fmod": torch.fmod,
}


def _all_ops(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(fn(a, b) for fn in OPS.values())


def _int_operands(dtype: torch.dtype, n: int = 203) -> tuple[torch.Tensor, torch.Tensor]:
    """Small, large (|x| up to 2**62 for int64) and negative operands, every sign pair, the
    boundary values; no zero divisor (a run-time error) and no ``INT_MIN / -1`` (eager's
    trunc division traps on it)."""
    g = torch.Generator().manual_seed(14)
    info = torch.iinfo(dtype)
    big = 2 ** 62 if dtype == torch.int64 else 2 ** 30
    a = torch.cat([
        torch.randint(-300, 300, (n,), generator=g),
        torch.randint(-big, big, (n,), generator=g),
        torch.tensor([info.max, info.min + 1, -1, 0, 1, 7, -7, 6, -6]),
    ]).to(dtype)
    b = torch.cat([
        torch.randint(-9, 10, (n,), generator=g),
        torch.randint(-big, big, (n,), generator=g) // torch.randint(1, 2 ** 20, (n,), generator=g),
        torch.tensor([-2, 3, 7, -3, 2, -2, 2, -3, 3]),
    ]).to(dtype)
    b[b == 0] = 5
    return a, b


def _float_operands(n: int = 301) -> tuple[torch.Tensor, torch.Tensor]:
    """Quotients from 1e-30 to 1e30, exact multiples, signed zeros, infinities, NaN and the
    ``1 // 0.1`` class (a quotient that rounds up to an integer), subnormals.  No quotient
    beyond float32's range: there eager's vectorized ``fmod``/``remainder`` (Sleef's fmodf,
    whose quotient estimate overflows) gives NaN while its scalar tail gives the exact value
    (``std::fmod``), as the native code does in every lane."""
    g = torch.Generator().manual_seed(7)
    a = torch.randn(n, generator=g) * torch.logspace(-10, 20, n)
    b = torch.randn(n, generator=g) * torch.logspace(5, -10, n)
    special_a = torch.tensor([1.0, -1.0, 1e6, -1e6, 7.5, -7.5, 3e7, 0.3, 6.0, -6.0, 0.0, -0.0, 5.0, 5.0,
                              float("inf"), 3.0, float("nan"), 2.0, 1e38, 1e-38, -3.0, 0.0, 1e-30])
    special_b = torch.tensor([0.1, 0.1, 0.1, -0.3, -2.0, 2.0, 0.7, 0.1, 3.0, -3.0, 2.0, 2.0, 0.0, -0.0,
                              3.0, float("inf"), 1.0, float("nan"), 3.0, 1e38, float("-inf"), 0.0, 1e-39])
    return torch.cat([a, special_a]), torch.cat([b, special_b])


def _assert_bit_exact(got: object, expected: tuple[torch.Tensor, ...]) -> None:
    assert isinstance(got, tuple | list)
    for name, g, e in zip(OPS, got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=0, atol=0, equal_nan=True, msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_tensor_divisor(isa: str, dtype: torch.dtype) -> None:
    a, b = _int_operands(dtype)
    compiled = compile_cpu(OpModule(_all_ops), (a, b), isa=isa)
    _assert_bit_exact(compiled(a, b), _all_ops(a, b))


@pytest.mark.parametrize("divisor", [-3, 3, -1, 7, -2 ** 31 + 1])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_scalar_divisor(dtype: torch.dtype, divisor: int) -> None:
    a, _ = _int_operands(dtype)
    if divisor == -1:
        a = a[a != torch.iinfo(dtype).min]

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.div(x, divisor, rounding_mode="trunc"), torch.div(x, divisor, rounding_mode="floor"),
                torch.floor_divide(x, divisor), torch.remainder(x, divisor), torch.fmod(x, divisor))

    compiled = compile_cpu(OpModule(fn), (a,))
    _assert_bit_exact(compiled(a), fn(a))


def test_float_tensor_divisor(isa: str) -> None:
    a, b = _float_operands()
    compiled = compile_cpu(OpModule(_all_ops), (a, b), isa=isa)
    _assert_bit_exact(compiled(a, b), _all_ops(a, b))


@pytest.mark.parametrize("divisor", [0.1, -0.3, 2.5, 1e-30, -0.75, 3e38, 1e-45])
def test_float_scalar_divisor(divisor: float) -> None:
    a, _ = _float_operands()
    a = a[~((a.double() / divisor).abs() > 1e38)]  # see _float_operands: eager's own lanes disagree there

    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (torch.div(x, divisor, rounding_mode="trunc"), torch.div(x, divisor, rounding_mode="floor"),
                torch.floor_divide(x, divisor), torch.remainder(x, divisor), torch.fmod(x, divisor))

    compiled = compile_cpu(OpModule(fn), (a,))
    _assert_bit_exact(compiled(a), fn(a))


def test_int_min_by_minus_one_does_not_trap() -> None:
    """``INT_MIN // -1`` wraps to ``INT_MIN`` in eager; natively it must not raise SIGFPE
    (run in a subprocess so that a trap fails the test instead of killing pytest)."""
    script = textwrap.dedent("""
        import torch
        from tests.cpu_backend.conftest import compile_cpu
        from tests.support.opinfo import OpModule
        for dtype in (torch.int32, torch.int64):
            lo = torch.iinfo(dtype).min
            a = torch.tensor([lo, lo, 5, -5] * 5, dtype=dtype)
            b = torch.tensor([-1, 1, -1, -1] * 5, dtype=dtype)
            fn = lambda x, y: (x // y, x % y, torch.fmod(x, y))
            for isa in ("avx2", "scalar"):
                got = compile_cpu(OpModule(fn), (a, b), isa=isa)(a, b)
                for g, e in zip(got, fn(a, b)):
                    assert torch.equal(g, e), (dtype, isa, g, e)
        print("ok")
    """)
    root = __file__.rsplit("/tests/", 1)[0]
    run = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, (run.returncode, run.stderr[-2000:])


def test_tensorrt_reference_keeps_float_floor_in_torch() -> None:
    """TensorRT's kFLOOR_DIV is floor(a / b) on floats: the converters leave float floor
    division and remainder to torch (integers still convert), so the numbers are eager's."""

    def fn(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a, b = a * 1, b * 1  # a block of at least min_block_size ops around each division
        return tuple(r + 0 for r in _all_ops(a, b))

    a, b = _float_operands()
    compiled = ziggurat.compile(OpModule(fn), (a, b), backend="tensorrt-reference")
    _assert_bit_exact(compiled(a, b), fn(a, b))
    fallback = compiled.report.fallback_ops
    assert "floor" in " ".join(fallback.get("aten::floor_divide", [])), fallback
    ai, bi = _int_operands(torch.int64)
    compiled = ziggurat.compile(OpModule(fn), (ai, bi), backend="tensorrt-reference")
    _assert_bit_exact(compiled(ai, bi), fn(ai, bi))
    assert "aten::floor_divide" not in compiled.report.fallback_ops


@pytest.mark.parametrize(("divisor", "stages"), [(-0.75, 5), (3e38, 1), (1e-30, 8), (0.1, 5)])
def test_constant_divisor_fmod_keeps_the_stages_it_needs(divisor: float, stages: int) -> None:
    """The exact float fmod reduces by ``|y| * 2**m`` for m = 261, 232, ..., 0; for a constant
    ``y`` the stages with ``|y| * 2**m >= 2**129`` (beyond any float32) are left out. Ten stages
    in a scalar ``logsumexp`` kernel kept LLVM's optimizer busy for minutes (fuzz seed 3 program
    1644); values stay bit-exact (``test_float_scalar_divisor``)."""
    a, _ = _float_operands()
    compiled = compile_cpu(OpModule(lambda x: torch.fmod(x, divisor)), (a,), isa="scalar")
    assert compiled.ir["llvm"].count('call double @"llvm.trunc.f64"') == stages


def test_two_pass_reduction_computes_an_expensive_input_once() -> None:
    """``logsumexp`` and ``softmax`` read their input in two passes (a max, then a sum of
    exponentials): an input with a long element function (the exact fmod's ten stages by a
    tensor divisor) is computed once into a buffer instead of inlined into both. Inlined, the
    scalar kernel kept LLVM's optimizer busy for over four minutes (fuzz seed 3)."""
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(8, 7, 3, 5, generator=g), torch.randn(8, 7, 3, 5, generator=g)

    def fn(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = torch.remainder(torch.asinh(x), y)
        return torch.logsumexp(r, dim=[2, -3, 3, -4], keepdim=True), torch.softmax(torch.fmod(x, y), 1)

    compiled = compile_cpu(OpModule(fn), (x, y), isa="scalar")
    assert compiled.ir["llvm"].count('call double @"llvm.trunc.f64"') == 20  # two chains, each once
    for got, want in zip(compiled(x, y), fn(x, y), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
