"""Fused epilogues (bias, activations, residual add/sub with broadcasting)
against the eager composition.  K is large enough for several K blocks, so the
epilogue must only run after the last one."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels import GemmSpec, gemm_callable, make_plan, pack_gemm_b
from ziggurat.backends.cpu.kernels.unary import INLINE_KINDS, VECMATH_KINDS

from .helpers import ALL_ISAS, assert_close_to

M, N, K = 29, 45, 700

EAGER = {
    "relu": lambda x, p: F.relu(x),
    "relu6": lambda x, p: F.relu6(x),
    "hardtanh": lambda x, p: F.hardtanh(x, p.get("min_val", -1.0), p.get("max_val", 1.0)),
    "clamp": lambda x, p: torch.clamp(x, p.get("min"), p.get("max")),
    "leaky_relu": lambda x, p: F.leaky_relu(x, p.get("negative_slope", 0.01)),
    "hardswish": lambda x, p: F.hardswish(x),
    "hardsigmoid": lambda x, p: F.hardsigmoid(x),
    "gelu_erf": lambda x, p: F.gelu(x),
    "gelu_tanh": lambda x, p: F.gelu(x, approximate="tanh"),
    "silu": lambda x, p: F.silu(x),
    "sigmoid": lambda x, p: torch.sigmoid(x),
    "tanh": lambda x, p: torch.tanh(x),
}

UNARY_CASES = [
    ("relu", {}),
    ("relu6", {}),
    ("hardtanh", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("clamp", {"min": -1.5, "max": 0.25}),
    ("clamp", {"min": 0.1}),
    ("clamp", {"max": -0.1}),
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("hardswish", {}),
    ("hardsigmoid", {}),
] + [(kind, {}) for kind in sorted(VECMATH_KINDS)]


def _operands(m: int = M, n: int = N, k: int = K) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Scaled so the activations see values on both sides of their kinks.
    a = torch.randn(m, k) / k**0.5 * 3
    b = torch.randn(k, n)
    bias = torch.randn(n)
    return a, b, bias


def test_k_is_blocked_here() -> None:
    plan = make_plan(GemmSpec(m=M, n=N, k=K, threads=1))
    assert plan.kc < K, "the epilogue tests must exercise K blocking"


HOST = ALL_ISAS[0]
OTHER_ISAS = ALL_ISAS[1:]
# Every kind on the host ISA; a representative subset on the narrower ISAs.
UNARY_GRID = [(HOST, kind, params) for kind, params in UNARY_CASES] + [
    (isa, kind, params)
    for isa in OTHER_ISAS
    for kind, params in UNARY_CASES
    if kind in ("relu", "leaky_relu", "hardswish", "gelu_erf") or params.get("min") == 0.1
]


def _ids(x: object) -> str:
    if isinstance(x, Isa):
        return x.value
    if isinstance(x, dict):
        return "-".join(f"{k}={v}" for k, v in x.items()) or "default"
    return str(x)


@pytest.mark.parametrize("isa, kind, params", UNARY_GRID, ids=_ids)
def test_bias_and_unary(isa: Isa, kind: str, params: dict[str, float]) -> None:
    a, b, bias = _operands()
    spec = GemmSpec(m=M, n=N, k=K, isa=isa, threads=2, bias=True, unary=kind, unary_params=params)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(M, N), bias=bias)
    want = EAGER[kind](a @ b + bias, params)
    tol = 1e-5 if kind in INLINE_KINDS else 5e-5
    torch.testing.assert_close(got, want, rtol=tol, atol=tol * 4)


# (strides of `other` as seen by the kernel, how to build it)
BROADCASTS = {
    "full": ((N, 1), lambda: torch.randn(M, N)),
    "row": ((0, 1), lambda: torch.randn(N)),
    "col": ((1, 0), lambda: torch.randn(M, 1)),
    "scalar": ((0, 0), lambda: torch.randn(1, 1)),
    "transposed": ((1, M), lambda: torch.randn(N, M).t()),
}


BINARY_GRID = [(HOST, how, op, alpha) for how in BROADCASTS for op, alpha in (("add", 1.0), ("sub", 2.5))] + [
    (isa, how, "add", -0.5) for isa in OTHER_ISAS for how in ("row", "transposed")
]


@pytest.mark.parametrize("isa, how, op, alpha", BINARY_GRID, ids=_ids)
def test_binary_residual(isa: Isa, how: str, op: str, alpha: float) -> None:
    strides, make = BROADCASTS[how]
    other = make()
    a, b, bias = _operands()
    spec = GemmSpec(m=M, n=N, k=K, isa=isa, threads=2, bias=True, binary=op, alpha=alpha, other_strides=strides)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(M, N), bias=bias, other=other)
    fn = torch.add if op == "add" else torch.sub
    want = fn(a @ b + bias, other, alpha=alpha)
    assert_close_to(got, want, K)


@pytest.mark.parametrize("binary_first", [False, True], ids=["unary-then-add", "add-then-unary"])
def test_epilogue_order(binary_first: bool) -> None:
    a, b, _ = _operands()
    other = torch.randn(M, N)
    spec = GemmSpec(m=M, n=N, k=K, threads=1, unary="relu", binary="add", binary_first=binary_first)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(M, N), other=other)
    want = F.relu(a @ b + other) if binary_first else F.relu(a @ b) + other
    assert_close_to(got, want, K)


@pytest.mark.parametrize("unary", [None, "relu"])
def test_in_place_residual(unary: str | None) -> None:
    """``c`` may be the residual itself (y = x @ W + b + y, or relu of it),
    even with K blocking."""
    a, b, bias = _operands()
    c = torch.randn(M, N)
    want = a @ b + bias + c
    if unary:
        want = F.relu(want)
    spec = GemmSpec(m=M, n=N, k=K, threads=2, bias=True, binary="add", unary=unary, binary_first=True)
    gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), c, bias=bias, other=c)
    assert_close_to(c, want, K)


def test_in_place_residual_after_activation_is_refused() -> None:
    a, b, _ = _operands()
    c = torch.randn(M, N)
    spec = GemmSpec(m=M, n=N, k=K, threads=1, unary="relu", binary="add")
    kern = gemm_callable(spec)
    with pytest.raises(ValueError, match="overwritten before `other` is read"):
        kern(a, pack_gemm_b(b, spec.b_layout.nr), c, other=c)
    rows = torch.randn(M + 1, N)
    with pytest.raises(ValueError, match="partially overlaps"):
        kern(a, pack_gemm_b(b, spec.b_layout.nr), rows[1:], other=rows[:-1])
    with pytest.raises(ValueError, match="overlaps input a"):
        square, spec = torch.randn(M, K), GemmSpec(m=M, n=K, k=K, threads=1)
        gemm_callable(spec)(square, pack_gemm_b(torch.randn(K, K), spec.b_layout.nr), square)


def test_batched_residual_with_batch_stride() -> None:
    batch = 3
    a = torch.randn(batch, M, K) / K**0.5
    b = torch.randn(K, N)
    other = torch.randn(batch, 1, N)  # per-batch row vector
    spec = GemmSpec(m=M, n=N, k=K, threads=2, batch=batch, batch_stride_b=0, binary="sub",
                    other_strides=(0, 1), other_batch_stride=N)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(batch, M, N), other=other)
    assert_close_to(got, a @ b - other, K)


def test_nan_propagates_through_relu() -> None:
    a, b, _ = _operands(m=5, n=20, k=8)
    a[2, 3] = float("nan")
    spec = GemmSpec(m=5, n=20, k=8, threads=1, unary="relu")
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(5, 20))
    want = F.relu(a @ b)
    assert torch.isnan(got[2]).all() and torch.isnan(want[2]).all()
    torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
def test_epilogue_with_unpacked_transposed_b(isa: Isa) -> None:
    a, b, bias = _operands(m=40, n=19, k=33)
    other = torch.randn(19)
    spec = GemmSpec(m=40, n=19, k=33, isa=isa, threads=2, b_packed=False, b_transposed=True,
                    bias=True, unary="hardswish", binary="add", other_strides=(0, 1))
    got = gemm_callable(spec)(a, b.t().contiguous(), torch.empty(40, 19), bias=bias, other=other)
    assert_close_to(got, F.hardswish(a @ b + bias) + other, 33)


STAGED_GRID = [(isa, kind, how) for isa in ALL_ISAS for kind in ("gelu_erf", "silu", "tanh")
               for how in ("full", "col", "transposed") if isa is HOST or how == "col"]


@pytest.mark.parametrize("isa, kind, how", STAGED_GRID, ids=_ids)
def test_staged_activation_then_residual(isa: Isa, kind: str, how: str) -> None:
    """A transcendental activation runs over a staged tile, two rows at a time (``staged_epilogue``);
    the residual that follows it is added per vector.  M = 29 gives full 12-row tiles (a loop
    over row pairs) and a 5-row tail (two pairs and a last row), N = 45 a masked column tail."""
    strides, make = BROADCASTS[how]
    other = make()
    a, b, bias = _operands()
    spec = GemmSpec(m=M, n=N, k=K, isa=isa, threads=2, bias=True, unary=kind, binary="sub", alpha=0.5,
                    other_strides=strides)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(M, N), bias=bias, other=other)
    want = torch.sub(EAGER[kind](a @ b + bias, {}), other, alpha=0.5)
    torch.testing.assert_close(got, want, rtol=5e-5, atol=2e-4)


def test_in_place_residual_before_staged_activation() -> None:
    """``c`` is the residual of ``gelu(x @ W + b + c)``: it is read in the first K block,
    before the staged epilogue of the last one writes ``c``."""
    a, b, bias = _operands()
    c = torch.randn(M, N)
    want = F.gelu(a @ b + bias + c)
    spec = GemmSpec(m=M, n=N, k=K, threads=2, bias=True, binary="add", unary="gelu_erf", binary_first=True)
    gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), c, bias=bias, other=c)
    torch.testing.assert_close(c, want, rtol=5e-5, atol=2e-4)


def test_staged_epilogue_ir_shape() -> None:
    """The 12x32 AVX-512 GELU microkernel stages its tile and loops over row pairs on <64 x float>;
    an inline activation (relu) stays on the accumulators."""
    from ziggurat.backends.cpu.kernels.gemm_callable import _build_ir

    spec = GemmSpec(m=48, n=64, k=32, isa=Isa.AVX512, threads=1, unary="gelu_erf")
    text = _build_ir(spec, make_plan(spec))
    assert "%\"epi.tile\" = alloca [24 x <16 x float>]" in text
    assert "epi.rows" in text and "<64 x float>" in text
    relu = GemmSpec(m=48, n=64, k=32, isa=Isa.AVX512, threads=1, unary="relu")
    assert "epi.tile" not in _build_ir(relu, make_plan(relu))


@pytest.mark.parametrize("isa", ALL_ISAS, ids=_ids)
@pytest.mark.parametrize("m", [1, 2])
def test_staged_activation_on_short_tiles(isa: Isa, m: int) -> None:
    """One- and two-row tiles are wide (up to 8 vectors per row): their vectors go through
    the activation in power-of-two groups; N = 200 leaves a masked tail."""
    n = 200
    a, b, bias = _operands(m, n)
    spec = GemmSpec(m=m, n=n, k=K, isa=isa, threads=1, bias=True, unary="gelu_erf")
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(m, n), bias=bias)
    torch.testing.assert_close(got, F.gelu(a @ b + bias), rtol=5e-5, atol=2e-4)
