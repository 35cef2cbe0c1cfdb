"""The generated torch dialect: every op prints and parses back to the same text."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser

from ziggurat.dialects.torch import ATEN_OPS, AtenOp
from ziggurat.dialects.torch.schema import ArgKind, ArgSpec
from ziggurat.ir.context import make_context
from ziggurat.ir.pipeline import print_module

_SCALARS = {
    ArgKind.INT: 1, ArgKind.FLOAT: 0.5, ArgKind.BOOL: True, ArgKind.SCALAR: 2,
    ArgKind.INT_LIST: [1, 1], ArgKind.FLOAT_LIST: [0.5], ArgKind.BOOL_LIST: [True],
    ArgKind.STR: "none", ArgKind.SCALAR_TYPE: 6, ArgKind.LAYOUT: 0, ArgKind.DEVICE: "cpu",
    ArgKind.MEMORY_FORMAT: 0,
}


def _operand_type(op_cls: type[AtenOp], spec: ArgSpec) -> Attribute:
    ranks = op_cls.RANK_RULES.get(spec.name, (2,))
    rank = 2 if 2 in ranks else ranks[0]
    rule = op_cls.DTYPE_RULES.get(spec.name)
    element = {"integer": i64, "bool": i1, "integer_or_bool": i64}.get(rule or "", f32)
    return TensorType(element, [3] * rank)


def _instance(op_cls: type[AtenOp], block: Block) -> AtenOp:
    schema = op_cls.parsed_schema()
    args: dict[str, object] = {}
    for spec in schema.args:
        if spec.kind == ArgKind.TENSOR:
            args[spec.name] = block.insert_arg(_operand_type(op_cls, spec), len(block.args))
        elif spec.kind == ArgKind.TENSOR_LIST:
            first = block.insert_arg(_operand_type(op_cls, spec), len(block.args))
            args[spec.name] = [first, None] if spec.elem_optional else [first, first]
        elif spec.kind in _SCALARS and not spec.optional:
            args[spec.name] = _SCALARS[spec.kind]
    results: list[Attribute] = []
    for ret in schema.returns:
        if ret.kind == ArgKind.TENSOR_LIST:
            results += [TensorType(f32, [3]), TensorType(f32, [3])]
        elif ret.kind == ArgKind.TENSOR:
            results.append(TensorType(f32, [3, 3]))
        elif ret.kind == ArgKind.FLOAT:
            from xdsl.dialects.builtin import f64

            results.append(f64)
        else:
            results.append(i1 if ret.kind == ArgKind.BOOL else i64)
    return op_cls.from_arguments(args, results)


@pytest.mark.parametrize("op_cls", ATEN_OPS, ids=[c.name for c in ATEN_OPS])
def test_print_parse_roundtrip(op_cls: type[AtenOp]) -> None:
    block = Block()
    op = _instance(op_cls, block)
    block.add_op(op)
    block.add_op(func.ReturnOp())
    fn = func.FuncOp("f", ([a.type for a in block.args], []), Region(block))
    module = ModuleOp([fn])
    text = print_module(module)
    parsed = Parser(make_context(), text).parse_module()
    assert print_module(parsed) == text
    # arguments bind back by schema name with the same static values
    reparsed = next(o for o in parsed.walk() if isinstance(o, AtenOp))
    assert _statics(reparsed) == _statics(op)


def _statics(op: AtenOp) -> dict[str, object]:
    def is_value(v: object) -> bool:
        return isinstance(v, SSAValue) or (isinstance(v, list) and any(isinstance(x, SSAValue) for x in v))

    return {k: v for k, v in op.arguments().values.items() if not is_value(v)}


def test_dialect_covers_the_required_ops() -> None:
    keys = {c.parsed_schema().qualified_name for c in ATEN_OPS}
    required = [
        "conv2d", "linear", "matmul", "bmm", "addmm", "batch_norm", "layer_norm", "softmax",
        "gelu", "silu", "relu6", "hardswish", "max_pool2d", "adaptive_avg_pool2d", "embedding",
        "scaled_dot_product_attention", "view", "reshape", "permute", "transpose",
        "contiguous", "flatten", "cat", "slice", "select", "mean", "sum",
    ]
    missing = [name for name in required if f"aten::{name}" not in keys]
    assert not missing, missing
    assert len(ATEN_OPS) >= 500


def test_value_properties_decode_like_the_bound_arguments() -> None:
    """Each generated ``<name>_value`` property is its static argument as ``arguments()`` binds
    it (a bool ``true`` is an i1 ``-1`` in its property, an absent optional one is None)."""
    checked = 0
    for op_cls in ATEN_OPS:
        op = _instance(op_cls, Block())
        bound = op.arguments()
        for spec in op_cls.parsed_schema().static_args():
            if not hasattr(op_cls, f"{spec.name}_value"):
                continue
            assert getattr(op, f"{spec.name}_value") == bound[spec.name], (op_cls.name, spec.name)
            checked += 1
    assert checked > 400


def test_value_properties_by_example() -> None:
    from ziggurat.dialects.torch.aten_ops import AtenAddTensorOp, AtenClamp_Op

    x = Block(arg_types=[TensorType(f32, [3])]).args[0]
    add = AtenAddTensorOp.from_arguments({"self": x, "other": x, "alpha": True}, [x.type])
    assert isinstance(add, AtenAddTensorOp)
    assert add.alpha.value.data == -1 and add.alpha_value is True
    clamp = AtenClamp_Op.from_arguments({"self": x, "max": 0.5}, [x.type])
    assert isinstance(clamp, AtenClamp_Op)
    assert clamp.min is None and clamp.min_value is None and clamp.max_value == 0.5
