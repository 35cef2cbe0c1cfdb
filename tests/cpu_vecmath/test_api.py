"""Public API contract: kind registry, parameter validation, type checking."""

from __future__ import annotations

import pytest
from llvmlite import ir

from ziggurat.backends.cpu import vecmath

F32 = ir.FloatType()


def _builder(ty: ir.Type) -> tuple[ir.IRBuilder, ir.Value]:
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ty, [ty]), name="f")
    return ir.IRBuilder(fn.append_basic_block("entry")), fn.args[0]


def test_required_kinds_are_registered() -> None:
    required = {"relu", "relu6", "gelu_erf", "gelu_tanh", "silu", "sigmoid", "tanh", "hardtanh", "hardswish",
                "hardsigmoid", "leaky_relu", "clamp", "exp", "log", "erf", "sqrt", "rsqrt", "abs", "neg"}
    assert isinstance(vecmath.UNARY_KINDS, frozenset)
    assert required <= vecmath.UNARY_KINDS
    assert set(vecmath.UNARY_PARAMS) == vecmath.UNARY_KINDS


def test_unknown_kind_names_it_and_lists_known() -> None:
    b, x = _builder(ir.VectorType(F32, 16))
    with pytest.raises(ValueError) as exc:
        vecmath.apply_unary(b, "gelu_fast", x, {})
    msg = str(exc.value)
    assert "gelu_fast" in msg and "gelu_tanh" in msg and "relu6" in msg


def test_unknown_and_missing_params() -> None:
    b, x = _builder(F32)
    with pytest.raises(ValueError, match="negative_slop"):
        vecmath.apply_unary(b, "leaky_relu", x, {"negative_slop": 0.2})
    with pytest.raises(ValueError, match="exponent"):
        vecmath.apply_unary(b, "pow", x, {})
    with pytest.raises(ValueError, match="relu"):
        vecmath.apply_unary(b, "relu", x, {"alpha": 1.0})


def test_clamp_none_means_unbounded() -> None:
    b, x = _builder(F32)
    assert vecmath.apply_unary(b, "clamp", x, {"min": None, "max": None}) is x
    assert vecmath.clamp(b, x) is x


@pytest.mark.parametrize("ty", [ir.IntType(32), ir.VectorType(ir.IntType(32), 8), ir.HalfType(),
                                ir.VectorType(F32, 3), ir.VectorType(F32, 128)])
def test_unsupported_types_raise_type_error(ty: ir.Type) -> None:
    b, x = _builder(ty)
    with pytest.raises(TypeError):
        vecmath.exp(b, x)


@pytest.mark.parametrize("fn", [vecmath.sin, vecmath.cos])
def test_f32_only_functions_reject_f64(fn) -> None:  # type: ignore[no-untyped-def]
    b, x = _builder(ir.VectorType(ir.DoubleType(), 8))
    with pytest.raises(TypeError, match="f32"):
        fn(b, x)


def test_pow_exponent_type_must_match() -> None:
    mod = ir.Module()
    ty = ir.VectorType(F32, 8)
    fn = ir.Function(mod, ir.FunctionType(ty, [ty, ir.VectorType(F32, 4)]), name="f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with pytest.raises(TypeError):
        vecmath.pow(b, fn.args[0], fn.args[1])


def test_reductions_return_the_lane_type() -> None:
    b, x = _builder(ir.VectorType(F32, 16))
    for f in (vecmath.reduce_add, vecmath.reduce_max, vecmath.reduce_min):
        assert f(b, x).type == F32
    b, s = _builder(F32)
    assert vecmath.reduce_add(b, s) is s
