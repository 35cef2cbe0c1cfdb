"""Emit one ``torch`` dialect op for an aten call whose arguments are bound by schema name.

Shared by the TorchScript and ``torch.export`` importers: the op is a typed
``torch.aten.*`` op when the dialect defines the overload and every static
argument is a compile-time constant, and a generic ``torch.operator``
otherwise (unknown op, or a scalar argument computed at run time).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, LocationAttr, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.dialects.torch import OperatorOp, aten_op_class
from ziggurat.dialects.torch import static_values
from ziggurat.dialects.torch.schema import ArgKind, ArgSpec, OpSchema
from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer.values import Dynamic, TensorConstant
from ziggurat.ir.types import scalar_type_of, tensor_type_of

#: Turns a TensorConstant into a Dynamic (a torch.literal), owned by the importer.
Materialize = Callable[[TensorConstant], Dynamic]


def result_type(example: Any) -> Attribute:
    if isinstance(example, torch.Tensor):
        return tensor_type_of(example)
    return scalar_type_of(example)


def _tensor_ssa(value: object, materialize: Materialize) -> SSAValue | None:
    if isinstance(value, TensorConstant):
        value = materialize(value)
    if isinstance(value, Dynamic):
        return value.ssa
    return None


def _typed_operands(
    schema: OpSchema, args: Mapping[str, object], materialize: Materialize
) -> dict[str, Any] | None:
    """Arguments for a typed op (SSA values for tensors), or None if one is not static."""
    bound: dict[str, Any] = {}
    for spec in schema.args:
        value = args.get(spec.name)
        if spec.kind == ArgKind.TENSOR:
            ssa = _tensor_ssa(value, materialize)
            if value is not None and ssa is None:
                return None
            bound[spec.name] = ssa
        elif spec.kind == ArgKind.TENSOR_LIST:
            items = list(value) if isinstance(value, list | tuple) else None  # pyright: ignore
            if items is None:
                return None
            ssas = [None if v is None else _tensor_ssa(v, materialize) for v in items]  # pyright: ignore
            if any(s is None and v is not None for s, v in zip(ssas, items)):  # pyright: ignore
                return None
            bound[spec.name] = ssas
        else:
            if isinstance(value, Dynamic | TensorConstant) or (
                isinstance(value, list | tuple) and any(isinstance(v, Dynamic) for v in value)  # pyright: ignore
            ):
                return None
            try:
                static_values.encode(spec, value)
            except static_values.StaticArgumentError:
                return None
            bound[spec.name] = value
    return bound


def _scalar_constant(builder: Builder, value: object) -> SSAValue:
    ty = scalar_type_of(value)
    if isinstance(value, float):
        from xdsl.dialects.builtin import FloatAttr, f64

        op = arith.ConstantOp(FloatAttr(value, f64))
    else:
        from xdsl.dialects.builtin import IntegerAttr

        op = arith.ConstantOp(IntegerAttr(int(value), ty))  # pyright: ignore
    builder.insert(op)
    return op.result


def _generic_attr(spec: ArgSpec | None, value: object) -> Attribute | None:
    if spec is not None and spec.kind not in (ArgKind.OTHER,):
        try:
            return static_values.encode(spec, value)
        except static_values.StaticArgumentError:
            pass
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        return static_values._scalar_attr(value)  # pyright: ignore[reportPrivateUsage]
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, torch.Tensor):  # a tensor is an operand; never print it into an attribute
        raise ModelImportError("a tensor argument that is not a value of the graph", op="torch.operator")
    if isinstance(value, list | tuple):
        items = [_generic_attr(None, v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        from xdsl.dialects.builtin import NoneAttr

        return ArrayAttr([NoneAttr() if i is None else i for i in items])
    return StringAttr(str(value))


def build_generic(
    builder: Builder,
    op_name: str,
    schema: OpSchema | None,
    args: Sequence[tuple[str, object]],
    result_types: Sequence[Attribute],
    materialize: Materialize,
) -> OperatorOp:
    """``torch.operator``: SSA operands for run-time values, an ``args`` dict for the rest."""
    operands: list[SSAValue] = []
    names: list[StringAttr] = []
    statics: dict[str, Attribute] = {}
    specs = {a.name: a for a in schema.args} if schema else {}
    for name, value in args:
        spec = specs.get(name)
        ssa = _tensor_ssa(value, materialize)
        if ssa is not None:
            operands.append(ssa)
            names.append(StringAttr(name))
            continue
        if isinstance(value, list | tuple) and any(
            isinstance(v, Dynamic | TensorConstant) for v in value  # pyright: ignore
        ):
            for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType]
                item_ssa = _tensor_ssa(item, materialize)
                if item_ssa is None:
                    if item is None:
                        continue
                    item_ssa = _scalar_constant(builder, item)
                operands.append(item_ssa)
                names.append(StringAttr(f"{name}#{i}"))
            continue
        attr = _generic_attr(spec, value)
        if attr is not None:
            statics[name] = attr
    properties: dict[str, Attribute] = {
        "op_name": StringAttr(op_name),
        "args": DictionaryAttr(statics),
        "operand_names": ArrayAttr(names),
    }
    if schema is not None:
        properties["schema"] = StringAttr(schema.text)
    op = OperatorOp.build(operands=[operands], properties=properties, result_types=[list(result_types)])
    builder.insert(op)
    return op


#: Ops whose bf16/fp16 kernels multiply or divide by a wrapped number at float32 precision
#: (``x_bf16 * 0.1`` is ``round(x * 0.1f)``, not ``round(x * round_bf16(0.1))``); their
#: literal is float32, which promotes as the number did wherever a tensor operand has a dim.
#: Others (add, sub, pow, fmod, comparisons, where, masked_fill...) compute the same with
#: the number rounded to the tensors' dtype, and ``index_put`` needs that dtype.
OPMATH_NUMBER_OPS = frozenset({"mul", "multiply", "div", "divide", "true_divide", "floor_divide",
                               "mul_", "multiply_", "div_", "divide_", "true_divide_", "floor_divide_"})
_REDUCED_FLOATS = (torch.bfloat16, torch.float16)


def wrap_number(spec: ArgSpec, value: object, operands: Sequence[torch.Tensor] = (), op: str = "") -> object:
    """A Python number passed for a ``Tensor`` argument is a wrapped number: a 0-d literal.

    Torch promotes a wrapped number by category only (``int32 0-d + 3`` stays int32), a 0-d
    tensor by dtype (``int32 0-d + int64 0-d`` is int64). So the literal takes the dtype the
    op computes in with the other tensor ``operands``: the same as theirs when the number's
    category is not higher, the category's default dtype otherwise (``int32 * 2.5`` is
    float32); with that dtype it promotes exactly as the wrapped number did. For ``op`` (a
    base name) in ``OPMATH_NUMBER_OPS`` on bf16/fp16 tensors, float32."""
    if spec.kind != ArgKind.TENSOR or not isinstance(value, bool | int | float):
        return value
    if operands:
        from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

        _, dtype = elementwise_dtypes(*operands, value,
                                      type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
        if dtype in _REDUCED_FLOATS and op in OPMATH_NUMBER_OPS and any(t.dim() > 0 for t in operands):
            dtype = torch.float32
    else:
        dtype = (torch.bool if isinstance(value, bool) else torch.int64 if isinstance(value, int)
                 else torch.get_default_dtype())
    exact = torch.bool if isinstance(value, bool) else torch.int64 if isinstance(value, int) else torch.float64
    try:  # converted as eager converts it (an int wraps into int32, a double rounds to float32)
        literal = torch.tensor(value, dtype=exact).to(dtype)
    except RuntimeError as e:
        raise ModelImportError(f"the number {value!r} does not fit a tensor: {e}", op="constant") from None
    return TensorConstant(literal, "scalar")


def _tensor_examples(schema: OpSchema, args: Mapping[str, object]) -> list[torch.Tensor]:
    """The example values of the op's tensor operands (not the numbers given for tensors)."""
    found: list[torch.Tensor] = []
    for spec in schema.args:
        value = args.get(spec.name)
        if spec.kind == ArgKind.TENSOR and isinstance(value, Dynamic | TensorConstant):
            example = value.example if isinstance(value, Dynamic) else value.tensor
            if isinstance(example, torch.Tensor):
                found.append(example)
    return found


def build_aten_op(
    builder: Builder,
    schema: OpSchema,
    args: Mapping[str, object],
    result_types: Sequence[Attribute],
    location: LocationAttr,
    materialize: Materialize,
) -> Operation:
    """A typed op when possible, else ``torch.operator`` (see module docstring)."""
    operands = _tensor_examples(schema, args)
    args = {spec.name: wrap_number(spec, args.get(spec.name), operands, schema.base_name) for spec in schema.args}
    op_class = aten_op_class(schema.key)
    op: Operation | None = None
    if op_class is not None:
        bound = _typed_operands(schema, args, materialize)
        if bound is not None:
            op = op_class.from_arguments(bound, result_types)
            builder.insert(op)
    if op is None:
        op = build_generic(
            builder, schema.key, schema, [(a.name, args.get(a.name)) for a in schema.args],
            result_types, materialize,
        )
    op.location = location
    return op
