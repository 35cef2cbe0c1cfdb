"""Rewrites shared by ``widen-half-floats``' patterns (``widen_half_floats.py``,
``widen_half_float_gemms.py``): the pass's name for its statistics, a value's dtype, and a
16-bit op rebuilt on float32 between casts."""

from __future__ import annotations

import torch
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.aten_ops import Aten_ToCopy_Op
from ziggurat.ir.rewriting import literal_value, new_literal
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
        up = new_literal(tensor.float(), (v.name_hint or "w") + "_f32") if tensor is not None else \
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
    rewriter.replace(op, [*new_ops, wide, *after], results)
