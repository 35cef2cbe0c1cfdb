"""A run-time size (SymInt/SymFloat) that torch.export passes for a ``Tensor`` argument moves
to the op's ``Scalar`` overload (``ir/importer/scalar_operands.py``); Python arithmetic on
sizes maps to aten's scalar ops, the ``Scalar`` forms where a float is involved."""

from __future__ import annotations

import operator
from typing import Any

import pytest
import torch
from xdsl.dialects.builtin import i64
from xdsl.utils.test_value import create_ssa_value

from ziggurat.dialects.torch.schema import parse_schema
from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer.scalar_operands import aten_of, place_runtime_scalars
from ziggurat.ir.importer.values import Dynamic

aten = torch.ops.aten


def _placed(target: Any, **args: Any) -> str:
    schema = parse_schema(str(target._schema))
    return place_runtime_scalars(target, schema, args).key


def _size() -> Dynamic:
    return Dynamic(create_ssa_value(i64), 5)


def _tensor() -> Dynamic:
    return Dynamic(create_ssa_value(i64), torch.zeros(2))


@pytest.mark.parametrize(("target", "scalar", "want"), [
    (aten.div.Tensor, "other", "aten::div.Scalar"),
    (aten.mul.Tensor, "other", "aten::mul.Scalar"),
    (aten.add.Tensor, "other", "aten::add.Scalar"),
    (aten.div.Tensor_mode, "other", "aten::div.Scalar_mode"),
    (aten.floor_divide.default, "other", "aten::floor_divide.Scalar"),
    (aten.pow.Tensor_Tensor, "exponent", "aten::pow.Tensor_Scalar"),
    (aten.pow.Tensor_Tensor, "self", "aten::pow.Scalar"),
    (aten.remainder.Tensor, "self", "aten::remainder.Scalar_Tensor"),
])
def test_a_size_for_a_tensor_argument_takes_the_scalar_overload(target: Any, scalar: str, want: str) -> None:
    names = [a.name for a in parse_schema(str(target._schema)).args if a.kind.is_tensor]
    args = {n: _size() if n == scalar else _tensor() for n in names}
    assert _placed(target, **args) == want


def test_tensors_keep_their_overload() -> None:
    assert _placed(aten.div.Tensor, self=_tensor(), other=_tensor()) == "aten::div.Tensor"


def test_an_op_without_a_scalar_overload_is_a_clear_error() -> None:
    with pytest.raises(ModelImportError, match=r"'other': a Tensor argument given a run-time size"):
        _placed(aten.maximum.default, self=_tensor(), other=_size())


def test_python_size_arithmetic_maps_to_scalar_ops() -> None:
    assert aten_of(operator.mul, [3, 4]) is aten.mul.int
    assert aten_of(operator.mul, [3, 0.5]) is aten.mul.default  # (Scalar a, Scalar b) -> Scalar
    assert aten_of(operator.truediv, [3, 4]) is aten.div.default  # -> float
    assert aten_of(torch.sym_float, [3]) is aten.Float.Scalar
    assert aten_of(aten.relu.default, []) is aten.relu.default
