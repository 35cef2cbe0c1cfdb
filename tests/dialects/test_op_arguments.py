"""The one argument binder (``dialects/torch/arguments.py``): arguments by schema name, typed
accessors, absent arguments, errors naming the op, schema and source line, and the two
things a backend plugs in (how an operand resolves, which exception it raises)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, TensorType, f32, i64
from xdsl.ir import Block, SSAValue

from ziggurat.dialects.torch import AtenOp, aten_op_class
from ziggurat.dialects.torch.arguments import ArgumentError, ArgumentErrorClass, OpArguments


def _op(key: str, args: dict[str, Any], result: TensorType) -> AtenOp:
    op_cls = aten_op_class(key)
    assert op_cls is not None
    op = op_cls.from_arguments(args, [result])
    op.location = FileLineColLoc(StringAttr("model.py"), IntAttr(12), IntAttr(0))
    return op


@pytest.fixture
def conv() -> tuple[AtenOp, SSAValue, SSAValue]:
    block = Block(arg_types=[TensorType(f32, [1, 3, 8, 8]), TensorType(f32, [4, 3, 3, 3])])
    x, w = block.args
    op = _op("aten::conv2d", {"input": x, "weight": w, "bias": None, "stride": [2, 2], "padding": [1, 1],
                              "dilation": [1, 1], "groups": 1}, TensorType(f32, [1, 4, 4, 4]))
    return op, x, w


def test_arguments_by_name(conv: tuple[AtenOp, SSAValue, SSAValue]) -> None:
    op, x, w = conv
    args = OpArguments[SSAValue](op)
    assert args.key == "aten::conv2d" and args.schema.key == "aten::conv2d"
    assert args.tensor("input") is x and args.tensor("weight") is w and args.optional_tensor("bias") is None
    assert args.get_ints("stride") == [2, 2] and args.get_int("groups") == 1 and args.static("groups") == 1
    assert args.shape("input") == (1, 3, 8, 8) and args.rank("weight") == 4 and args.out_shape == (1, 4, 4, 4)
    assert args.has("bias") and args.is_none("bias") and not args.is_none("input")


def test_an_absent_argument_reads_as_none_or_its_default(conv: tuple[AtenOp, SSAValue, SSAValue]) -> None:
    args = OpArguments[SSAValue](conv[0])
    assert not args.has("alpha") and args.is_none("alpha")
    assert args.get("alpha") is None and args.get("alpha", 5) == 5 and args.static("alpha", 2) == 2
    assert args.optional_tensor("alpha") is None and args.get_optional_int("alpha") is None
    assert args.get_float("alpha", 1.5) == 1.5 and args.get_ints("alpha", []) == []
    for read in (args.tensor, args.tensors, args.tensor_or_scalar, args.get_int, args.get_ints):
        with pytest.raises(ArgumentError, match="has no argument 'alpha'"):
            read("alpha")


def test_errors_name_the_op_its_schema_and_source_line(conv: tuple[AtenOp, SSAValue, SSAValue]) -> None:
    args = OpArguments[SSAValue](conv[0])
    with pytest.raises(ArgumentError, match="argument 'groups' must be a tensor value, got int 1") as info:
        args.tensor("groups")
    assert info.value.op == "aten::conv2d" and info.value.location == "model.py:12"
    assert info.value.schema is not None and info.value.schema.startswith("aten::conv2d(Tensor input")
    with pytest.raises(ArgumentError, match="'input' must be known at compile time, got a value of type tensor"):
        args.get_int("input")
    with pytest.raises(ArgumentError, match="'input' must be known at compile time"):
        args.static("input")
    with pytest.raises(ArgumentError, match="must be a static int, got list"):
        args.get_int("stride")
    with pytest.raises(ArgumentError, match="argument 'bias' is None"):
        args.get_ints("bias")


class _Refused(Exception):
    def __init__(self, message: str, *, op: str | None = None, schema: str | None = None,
                 location: str | None = None) -> None:
        super().__init__(message)
        self.op = op


class _Resolved(OpArguments[str]):
    """A backend whose tensors are strings, and that knows one operand is the number 2.0."""

    error_class: ClassVar[ArgumentErrorClass] = _Refused

    def __init__(self, op: AtenOp, env: dict[SSAValue, str | float]) -> None:
        super().__init__(op)
        self.env = env

    def resolve_operand(self, value: SSAValue) -> str | float:
        if value not in self.env:
            raise self.error("no value")
        return self.env[value]


def test_a_backend_plugs_in_operand_resolution_and_its_error() -> None:
    block = Block(arg_types=[TensorType(f32, [3]), TensorType(f32, []), TensorType(i64, [3])])
    x, y, z = block.args
    add = _op("aten::add.Tensor", {"self": x, "other": y, "alpha": 1}, TensorType(f32, [3]))
    args = _Resolved(add, {x: "x-buffer", y: 2.0})
    assert args.tensor("self") == "x-buffer" and args.get("self") == "x-buffer"
    assert args.tensor_or_scalar("other") == 2.0 and args.static("other") == 2.0 and args.get_float("other") == 2.0
    with pytest.raises(_Refused, match="'other' must be a tensor value") as info:
        args.tensor("other")  # an operand known to be a number is no tensor
    assert info.value.op == "aten::add.Tensor"
    with pytest.raises(_Refused, match="'self' must be known at compile time"):
        args.static("self")
    cat = _op("aten::cat", {"tensors": [x, z], "dim": 0}, TensorType(f32, [6]))
    with pytest.raises(_Refused, match="no value"):
        _Resolved(cat, {x: "x-buffer"}).tensors("tensors")
    assert _Resolved(cat, {x: "x-buffer", z: "z-buffer"}).tensors("tensors") == ["x-buffer", "z-buffer"]
