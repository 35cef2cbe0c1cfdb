"""Materializing tensor constants as ``torch.literal`` ops, once each, at the top of a block.

A quantized constant has no literal form (its scale and zero point are not bytes of the
tensor): it becomes the literal of its integers and the op that quantizes them again,
``aten::_make_per_tensor_quantized_tensor`` (or ``_make_per_channel_quantized_tensor`` with
literals of the scales and zero points), which runs in torch.
"""

from __future__ import annotations

from typing import Any

import torch
from xdsl.builder import Builder
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint

from ziggurat.dialects.torch import LiteralOp
from ziggurat.dialects.torch.schema import parse_schema
from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer.values import Dynamic, TensorConstant
from ziggurat.ir.literals import literal_attr
from ziggurat.ir.locations import make_location
from ziggurat.ir.types import QUANTIZED_DTYPES, UnsupportedTypeError, tensor_type_of

#: The quantized dtypes a constant may have: those ``_make_per_*_quantized_tensor`` rebuild from
#: ``int_repr()`` (quint4x2/quint2x4 pack two or four values per byte).
_REBUILT_QUANTIZED = (torch.qint8, torch.quint8, torch.qint32)


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
            if const.tensor.dtype in QUANTIZED_DTYPES:
                const.materialized = self._quantized(const)
                return const.materialized
            try:
                attr = literal_attr(const.tensor, const.name, borrow=True)
            except UnsupportedTypeError as e:
                raise ModelImportError(str(e), op=f"constant %{const.name}") from None
            op = LiteralOp(attr)
            op.result.name_hint = ssa_name(const.name)
            anchor = next((o for o in self.block.ops if not isinstance(o, LiteralOp)), None)
            if anchor is None:
                self.block.add_op(op)
            else:
                self.block.insert_op_before(op, anchor)
            const.materialized = Dynamic(op.result, const.tensor)
        return const.materialized

    def _quantized(self, const: TensorConstant) -> Dynamic:
        """``const`` rebuilt from literals of its integers (and per-channel parameters)."""
        from ziggurat.ir.importer.op_builder import build_aten_op

        q = const.tensor.detach().to("cpu")
        scheme = q.qscheme()
        name = f"constant %{const.name}"
        if q.dtype not in _REBUILT_QUANTIZED:
            raise ModelImportError(f"a {str(q.dtype).removeprefix('torch.')} constant cannot be rebuilt from its "
                                   f"integers (supported: qint8, quint8, qint32)", op=name)
        ints = TensorConstant(q.int_repr(), f"{const.name}_int_repr")
        args: dict[str, Any]
        if scheme == torch.per_tensor_affine:
            key = "_make_per_tensor_quantized_tensor"
            args = {"self": ints, "scale": float(q.q_scale()), "zero_point": int(q.q_zero_point())}
        elif scheme == torch.per_channel_affine:
            key = "_make_per_channel_quantized_tensor"
            args = {"self": ints, "scale": TensorConstant(q.q_per_channel_scales(), f"{const.name}_scales"),
                    "zero_point": TensorConstant(q.q_per_channel_zero_points(), f"{const.name}_zero_points"),
                    "axis": int(q.q_per_channel_axis())}
        else:
            raise ModelImportError(f"a quantized constant of scheme {scheme} cannot be rebuilt from its integers "
                                   "(supported: per_tensor_affine, per_channel_affine)", op=name)
        overload = getattr(torch.ops.aten, key).default
        schema = parse_schema(str(overload._schema))  # pyright: ignore[reportPrivateUsage]
        for value in args.values():
            if isinstance(value, TensorConstant):
                self(value)  # the literals first, so the op goes after them
        anchor: Operation | None = next((o for o in self.block.ops if not isinstance(o, LiteralOp)), None)
        builder = Builder(InsertPoint.before(anchor) if anchor is not None else InsertPoint.at_end(self.block))
        op = build_aten_op(builder, schema, args, [tensor_type_of(q)], make_location(f"%{const.name}", None), self)
        op.results[0].name_hint = ssa_name(const.name)
        return Dynamic(op.results[0], const.tensor)
