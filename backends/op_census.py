"""Counting the ops of a module by kind (for compile reports)."""

from __future__ import annotations

from collections import Counter

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ziggurat.dialects.torch import LiteralOp, OperatorOp


def op_kind(op: object) -> str:
    if isinstance(op, OperatorOp):
        return op.op_name.data
    return getattr(op, "name", type(op).__name__)


def count_ops(module: ModuleOp) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for op in module.walk():
        if isinstance(op, ModuleOp | func.FuncOp | func.ReturnOp | LiteralOp):
            continue
        counts[op_kind(op)] += 1
    return dict(counts)
