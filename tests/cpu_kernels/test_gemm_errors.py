"""Bad specs and bad tensors raise clear errors (never reach native code)."""

from __future__ import annotations

import pytest
import torch

from ziggurat.backends.cpu.kernels import GemmSpec, GemmSpecError, gemm_callable, pack_gemm_b


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"m": 0, "n": 4, "k": 4}, "m must be a positive int"),
        ({"m": 4, "n": 4.0, "k": 4}, "n must be a positive int"),
        ({"m": 4, "n": 4, "k": 4, "lda": 3}, "lda=3 is smaller than k=4"),
        ({"m": 4, "n": 4, "k": 4, "ldc": 2}, "ldc=2 is smaller than n=4"),
        ({"m": 4, "n": 4, "k": 4, "isa": "neon"}, "unknown isa 'neon'"),
        ({"m": 4, "n": 4, "k": 4, "threads": 0}, "threads must be a positive int"),
        ({"m": 4, "n": 4, "k": 4, "nr": 20}, "nr=20 must be a multiple"),
        ({"m": 4, "n": 4, "k": 4, "ldb": 8}, "need b_packed=False"),
        ({"m": 4, "n": 4, "k": 4, "b_packed": False, "nr": 16}, "needs b_packed=True"),
        ({"m": 4, "n": 4, "k": 4, "b_packed": False, "b_transposed": True, "ldb": 3}, "ldb=3 is smaller than k"),
        ({"m": 4, "n": 4, "k": 4, "unary": "swish"}, "unknown unary epilogue 'swish'"),
        ({"m": 4, "n": 4, "k": 4, "unary": "relu", "unary_params": {"slope": 1}}, "unknown parameter"),
        ({"m": 4, "n": 4, "k": 4, "unary": "hardtanh", "unary_params": {"min_val": 2, "max_val": 1}}, "min_val"),
        ({"m": 4, "n": 4, "k": 4, "unary_params": {"min": 1}}, "without a unary kind"),
        ({"m": 4, "n": 4, "k": 4, "binary": "mul"}, "binary must be 'add', 'sub' or None"),
        ({"m": 4, "n": 4, "k": 4, "binary": "add", "alpha": float("inf")}, "alpha must be a finite number"),
        ({"m": 4, "n": 4, "k": 4, "other_strides": (4, 1)}, "without a binary op"),
        ({"m": 4, "n": 4, "k": 4, "binary": "add", "other_strides": (4, -1)}, "non-negative"),
        ({"m": 4, "n": 4, "k": 4, "pack_a": "yes"}, "pack_a must be"),
        ({"m": 4, "n": 4, "k": 4, "name": "bad name"}, "identifier"),
        ({"m": 4, "n": 4, "k": 4, "batch": 2, "batch_stride_c": 0}, "batch_stride_c must be a positive int"),
    ],
)
def test_spec_validation(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(GemmSpecError, match=message):
        GemmSpec(**kwargs)


def test_spec_is_hashable_and_named() -> None:
    s1 = GemmSpec(m=4, n=4, k=4, threads=1, unary="clamp", unary_params={"min": 0})
    s2 = GemmSpec(m=4, n=4, k=4, threads=1, unary="clamp", unary_params={"min": 0.0})
    assert s1 == s2 and hash(s1) == hash(s2) and s1.symbol == s2.symbol
    assert s1.symbol != GemmSpec(m=4, n=4, k=5, threads=1).symbol
    assert GemmSpec(m=4, n=4, k=4, name="my_gemm").symbol == "my_gemm"
    with pytest.raises(GemmSpecError, match="not prepacked"):
        GemmSpec(m=4, n=4, k=4, b_packed=False).b_layout


SPEC = GemmSpec(m=5, n=7, k=3, threads=1, bias=True)


@pytest.fixture(scope="module")
def kern():  # type: ignore[no-untyped-def]
    return gemm_callable(SPEC)


def _good() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.randn(5, 3), pack_gemm_b(torch.randn(3, 7), SPEC.b_layout.nr), torch.empty(5, 7), torch.randn(7)


def test_callable_happy_path(kern) -> None:  # type: ignore[no-untyped-def]
    a, b, c, bias = _good()
    assert kern(a, b, c, bias=bias) is c


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda a, b, c, bias: (a.double(), b, c, bias), "expected dtype torch.float32"),
        (lambda a, b, c, bias: (a[:, :2], b, c, bias), r"expected shape \(5, 3\)"),
        (lambda a, b, c, bias: (torch.randn(3, 5).t(), b, c, bias), "stride 1 in dim 0 does not match"),
        (lambda a, b, c, bias: (a, b[:, :2], c, bias), "b \\(prepacked\\)"),
        (lambda a, b, c, bias: (a, b, torch.empty(5, 8), bias), "operand c: expected shape"),
        (lambda a, b, c, bias: (a, b, c, None), "no bias tensor was given"),
        (lambda a, b, c, bias: (a, b, c, torch.randn(6)), "operand bias: expected shape"),
        (lambda a, b, c, bias: ([[1.0]], b, c, bias), "expected a torch.Tensor"),
    ],
    ids=["dtype", "shape", "stride", "packed-shape", "c-shape", "missing-bias", "bias-shape", "not-tensor"],
)
def test_callable_rejects_bad_tensors(kern, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    args = mutate(*_good())
    with pytest.raises(ValueError, match=message):
        kern(args[0], args[1], args[2], bias=args[3])


def test_callable_rejects_unexpected_operands() -> None:
    kern = gemm_callable(GemmSpec(m=5, n=7, k=3, threads=1))
    a, b, c, bias = _good()
    with pytest.raises(ValueError, match="spec has bias=False"):
        kern(a, b, c, bias=bias)
    with pytest.raises(ValueError, match="no binary op"):
        kern(a, b, c, other=c)
    residual = gemm_callable(GemmSpec(m=5, n=7, k=3, threads=1, binary="add", other_strides=(0, 1)))
    with pytest.raises(ValueError, match="no `other` tensor"):
        residual(a, b, c)
    with pytest.raises(ValueError, match="does not broadcast"):
        residual(a, b, c, other=torch.randn(3))
    with pytest.raises(ValueError, match="broadcast stride"):
        residual(a, b, c, other=torch.randn(5, 7))
