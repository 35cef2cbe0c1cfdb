"""Elementwise, comparison, logic and selection converters vs eager."""

from __future__ import annotations

import pytest
import torch

from conversion_harness import check_converts, convert_and_run

torch.manual_seed(0)
A = torch.randn(3, 4) * 3
B = torch.randn(4) * 2 + 0.1
I = torch.tensor([[-7, 7, 5], [3, -4, 9]], dtype=torch.int32)
J = torch.tensor([2, -3, 4], dtype=torch.int32)

FLOAT_CASES = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2.5),
    "add_scalar": lambda a, b: a + 1.5,
    "sub": lambda a, b: a - b,
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=0.5),
    "rsub": lambda a, b: 3.0 - a,
    "rsub_tensor": lambda a, b: torch.rsub(a, b, alpha=2),
    "mul": lambda a, b: a * b,
    "mul_scalar": lambda a, b: a * 0.25,
    "div": lambda a, b: a / b,
    "div_scalar": lambda a, b: a / 4.0,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "pow": lambda a, b: torch.pow(a.abs() + 0.5, b),
    "pow_scalar": lambda a, b: a ** 2,
    "pow_scalar_base": lambda a, b: torch.pow(2.0, b),
    "square": lambda a, b: torch.square(a),
    "maximum": lambda a, b: torch.maximum(a, b),
    "minimum": lambda a, b: torch.min(a, b),
    "atan2": lambda a, b: torch.atan2(a, b),
    "eq": lambda a, b: a == b.round(),
    "ne": lambda a, b: a.round() != 1.0,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a.round() >= b.round(),
    "lt": lambda a, b: a < 0.5,
    "le": lambda a, b: a.round() <= 1,
    "where": lambda a, b: torch.where(a > 0, a, b),
    "where_scalar": lambda a, b: torch.where(a > 0, 1.0, b),
    "masked_fill": lambda a, b: a.masked_fill(b > 0, -1.0),
    "logical": lambda a, b: torch.logical_and(a > 0, b > 0) | torch.logical_xor(a > 1, b < 0),
    "logical_not": lambda a, b: torch.logical_not(a > 0),
    "logical_float": lambda a, b: torch.logical_or(a.round(), b.round()),
}


@pytest.mark.parametrize("name", sorted(FLOAT_CASES))
def test_float_binary(name: str) -> None:
    check_converts(FLOAT_CASES[name], [A.clone(), B.clone()])


#: Float floor division and remainder stay in torch: torch floors from the exact fmod
#: (1 // 0.1 == 9), TensorRT's kFLOOR_DIV is floor(a / b) (10).
FLOAT_FLOOR_CASES = {
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "floor_divide": lambda a, b: torch.floor_divide(a, b),
    "remainder": lambda a, b: torch.remainder(a, b),
    "remainder_scalar": lambda a, b: torch.remainder(a, 1.5),
}


@pytest.mark.parametrize("name", sorted(FLOAT_FLOOR_CASES))
def test_float_floor_division_stays_in_torch(name: str) -> None:
    a = torch.cat([A.flatten(), torch.tensor([1.0, -1.0, 1e6])])
    b = torch.cat([B.repeat(3), torch.tensor([0.1, 0.1, 0.1])])
    converted = convert_and_run(FLOAT_FLOOR_CASES[name], [a, b])
    assert converted.fallback_ops, "float floor division must not convert"
    assert all("exact fmod" in r.reason for r in converted.report.fallback)
    for got, expected in zip(converted.outputs, converted.expected, strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


INT_CASES = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "div_true": lambda a, b: a / b,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "remainder": lambda a, b: a % b,
    "gt": lambda a, b: a > b,
    "bitwise_not": lambda a, b: ~a,
    "bool_not": lambda a, b: ~(a > b),
    "mixed_scalar": lambda a, b: a * 0.5,
}


@pytest.mark.parametrize("name", sorted(INT_CASES))
def test_integer_binary(name: str) -> None:
    check_converts(INT_CASES[name], [I.clone(), J.clone()])


def test_bool_arithmetic_stays_in_torch() -> None:
    from conversion_harness import convert_and_run

    result = convert_and_run(lambda a, b: (a > 0) + (b > 0), [A.clone(), B.clone()])
    assert any("aten::add" in r.op and "bool" in r.reason for r in result.report.fallback)


UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "floor",
         "log", "log2", "log10", "log1p", "expm1", "exp2", "neg", "reciprocal", "sign", "sin", "sinh", "sqrt",
         "rsqrt", "tan", "round", "trunc", "frac", "isfinite", "isinf", "isnan"]
DOMAIN = {"acos": lambda x: x.clamp(-0.9, 0.9), "asin": lambda x: x.clamp(-0.9, 0.9),
          "atanh": lambda x: x.clamp(-0.9, 0.9), "acosh": lambda x: x.abs() + 1.0}


@pytest.mark.parametrize("name", UNARY)
def test_unary(name: str) -> None:
    fn = getattr(torch, name)
    x = torch.randn(3, 5) * 2
    x[0, 0] = 2.5  # a half for round
    if name in ("log", "log2", "log10", "sqrt", "rsqrt", "log1p"):
        x = x.abs() + 0.1
    if name in ("isfinite", "isinf", "isnan"):
        x[1, 1], x[1, 2] = float("inf"), float("nan")
    x = DOMAIN.get(name, lambda t: t)(x)
    check_converts(fn, [x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["abs", "neg", "sign", "sqrt", "floor", "isfinite"])
def test_unary_on_integers(name: str) -> None:
    check_converts(getattr(torch, name), [torch.tensor([[-4, 0, 9]], dtype=torch.int32)], rtol=1e-5, atol=1e-6)
