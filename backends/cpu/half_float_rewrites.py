"""Rewrites shared by ``widen-half-floats``' patterns (``widen_half_floats.py``,
``widen_half_float_gemms.py``): the pass's name for its statistics, a value's dtype, and a
16-bit op rebuilt on float32 between casts."""

from __future__ import annotations

import torch
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from ziggurat.backends.cpu.loopgen.types import HALF_FLOATS
from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.aten_ops import Aten_ToCopy_Op
from ziggurat.dialects.torch.ops_base import LiteralOp
from ziggurat.ir.rewriting import build_aten_inferred, literal_value, new_literal
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of

NAME = "widen-half-floats"


def value_dtype(value: SSAValue) -> torch.dtype | None:
    """The torch dtype of a tensor value (None: not a tensor, or no torch dtype)."""
    ty = value.type
    if not isinstance(ty, TensorType):
        return None
    try:
        return dtype_of(ty)
    except TypeError:
        return None


def cast_to(value: SSAValue, dtype: torch.dtype, element: Attribute) -> AtenOp:
    """``_to_copy(value, dtype)``, its result of element type ``element``."""
    shape = value.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    return Aten_ToCopy_Op.from_arguments({"self": value, "dtype": dtype, "non_blocking": False},
                                         [TensorType(element, shape)])  # pyright: ignore[reportUnknownArgumentType]


def widen_whole(op: Operation, half: torch.dtype, rewriter: PatternRewriter) -> None:
    """``op`` on float32 operands (a literal one converted at compile time, exactly; others
    cast) with float32 results, each rounded back to ``half`` once."""
    new_ops: list[Operation] = []
    operands: list[SSAValue] = []
    for v in op.operands:
        if value_dtype(v) != half:
            operands.append(v)
            continue
        tensor = literal_value(v)
        up = new_literal(tensor.float(), (v.name_hint or "w") + "_f32", given=True) if tensor is not None else \
            cast_to(v, torch.float32, f32)
        new_ops.append(up)
        operands.append(up.results[0])
    wide_types = [TensorType(f32, r.type.get_shape()) if value_dtype(r) == half else r.type  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
                  for r in op.results]
    # the same operand count: a fused op's optional operands keep their segment sizes
    wide = type(op).create(operands=operands, result_types=wide_types, properties=dict(op.properties),
                           attributes=dict(op.attributes))
    after: list[Operation] = []
    results: list[SSAValue] = []
    for old, new in zip(op.results, wide.results, strict=True):
        new.name_hint = old.name_hint
        if value_dtype(old) == half:
            down = cast_to(new, half, old.type.get_element_type())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
            after.append(down)
            results.append(down.results[0])
        else:
            results.append(new)
    read = [(v, v.owner) for v in op.operands if isinstance(v.owner, LiteralOp)]
    rewriter.replace(op, [*new_ops, wide, *after], results)
    for v, literal in read:  # a 16-bit weight literal now read by nothing: its blob can go
        if not v.uses and literal.parent is not None:
            rewriter.erase_op(literal)


class Float32Builder:
    """Float32 ops on a 16-bit op's operand, collected in order, with eager's roundings."""

    def __init__(self, half: torch.dtype, element: Attribute) -> None:
        self.half = half
        self.element = element
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def aten(self, cls: type[AtenOp], args: dict[str, object]) -> SSAValue:
        return self.add(build_aten_inferred(cls, args))

    def widen(self, value: SSAValue) -> SSAValue:
        return self.add(cast_to(value, torch.float32, f32))

    def narrow(self, value: SSAValue) -> SSAValue:
        return self.add(cast_to(value, self.half, self.element))

    def round(self, value: SSAValue) -> SSAValue:
        """``value`` rounded to the 16-bit type, as float32: a 16-bit tensor's op result."""
        return self.widen(self.narrow(value))

    def replace(self, op: Operation, result: SSAValue, rewriter: PatternRewriter, statistic: str) -> None:
        """``op``'s one result replaced by ``result``, the last of the collected ops."""
        result.name_hint = op.results[0].name_hint
        rewriter.replace(op, self.ops, [result])
        record(NAME, statistic)


def half_operands(op: Operation) -> tuple[torch.dtype, Attribute] | None:
    """The 16-bit float type of all of ``op``'s tensor operands and its one result, with its
    element type; None if they differ, or a shape is dynamic or empty (eager's empty
    reductions and ops are not written out)."""
    half = value_dtype(op.results[0]) if len(op.results) == 1 else None
    if half not in HALF_FLOATS or any(value_dtype(v) != half for v in op.operands):
        return None
    for v in [*op.operands, op.results[0]]:
        if any(d <= 0 for d in v.type.get_shape()):  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
            return None
    return half, op.results[0].type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
