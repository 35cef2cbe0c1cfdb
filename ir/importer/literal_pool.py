"""Materializing tensor constants as ``torch.literal`` ops, once each, at the top of a block."""

from __future__ import annotations

from xdsl.ir import Block

from ziggurat.dialects.torch import LiteralOp
from ziggurat.ir.errors import ImportError_
from ziggurat.ir.importer.values import Dynamic, TensorConstant
from ziggurat.ir.literals import literal_attr
from ziggurat.ir.types import UnsupportedTypeError


def ssa_name(debug_name: str) -> str | None:
    """A readable SSA name from a TorchScript debug name / FX node name (None if numeric)."""
    name = debug_name.replace(".", "_")
    if not name or name[0].isdigit():
        return None
    return name if name.replace("_", "a").isalnum() else None


class LiteralPool:
    """Creates the literal of a constant on first use, grouped before the block's other ops."""

    def __init__(self, block: Block) -> None:
        self.block = block

    def __call__(self, const: TensorConstant) -> Dynamic:
        if const.materialized is None:
            try:
                attr = literal_attr(const.tensor, const.name)
            except UnsupportedTypeError as e:
                raise ImportError_(str(e), op=f"constant %{const.name}") from None
            op = LiteralOp(attr)
            op.result.name_hint = ssa_name(const.name)
            anchor = next((o for o in self.block.ops if not isinstance(o, LiteralOp)), None)
            if anchor is None:
                self.block.add_op(op)
            else:
                self.block.insert_op_before(op, anchor)
            const.materialized = Dynamic(op.result, const.tensor)
        return const.materialized
