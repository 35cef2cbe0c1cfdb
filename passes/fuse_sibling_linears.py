"""``fuse-sibling-linears``: linears that read the same input become one wider linear.

``fused.linear`` ops without post-ops whose input is the same value and whose weights (and
biases) are constants -- attention's query/key/value projections written as three
``nn.Linear`` -- are replaced by one ``fused.linear`` over the weights concatenated along N
(a missing bias is zeros when a sibling has one); each former result becomes an
``aten::slice`` of the wide result along its last dim, with the former op's location and
name.  One 128x768.768x2304 GEMM reads the input once and splits better over threads than
three 128x768.768x768 ones; the slices are views, so their consumers read the wide result
in place (a ``loop.gemm`` takes them through ``lda``/``b_offset``).

Runs after ``fuse-post-ops`` (a linear that took an activation or a residual keeps it and
is left alone) and before ``prepack-weights``.  Records how many linears it merged into
how many.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.fused import LinearOp
from ziggurat.dialects.torch import LiteralOp
from ziggurat.ir.rewriting import build_aten, new_literal
from ziggurat.ir.statistics import record
from ziggurat.ir.types import shape_of

NAME = "fuse-sibling-linears"


def _literal(value: SSAValue | None) -> torch.Tensor | None:
    owner = value.owner if value is not None else None
    return owner.tensor() if isinstance(owner, LiteralOp) else None


def _mergeable(op: LinearOp) -> bool:
    if op.post_ops.data or op.other is not None or op.weight_layout is not None:
        return False
    weight = _literal(op.weight)
    if weight is None or weight.dim() != 2 or not weight.dtype.is_floating_point:
        return False
    return op.bias is None or _literal(op.bias) is not None


def _groups(block: Block) -> list[list[LinearOp]]:
    """Mergeable linears of ``block`` by input value (and weight dtype), in block order."""
    by_input: dict[tuple[SSAValue, torch.dtype], list[LinearOp]] = {}
    for op in block.ops:
        if isinstance(op, LinearOp) and _mergeable(op):
            weight = _literal(op.weight)
            assert weight is not None
            by_input.setdefault((op.input, weight.dtype), []).append(op)
    return [ops for ops in by_input.values() if len(ops) > 1]


def _merge(group: list[LinearOp]) -> None:
    weights = [_literal(op.weight) for op in group]
    biases = [_literal(op.bias) for op in group]
    assert all(w is not None for w in weights)
    widths = [w.shape[0] for w in weights]  # pyright: ignore[reportOptionalMemberAccess]
    first = group[0]
    name = first.results[0].name_hint or "linear"
    w_lit = new_literal(torch.cat(weights, 0), f"{name}_siblings_weight")  # pyright: ignore[reportArgumentType]
    new_ops: list[Operation] = [w_lit]
    b_lit = None
    if any(b is not None for b in biases):
        ref = weights[0]
        assert ref is not None
        b_lit = new_literal(torch.cat([b if b is not None else torch.zeros(n, dtype=ref.dtype)
                                       for b, n in zip(biases, widths)]), f"{name}_siblings_bias")
        new_ops.append(b_lit)
    out_type = first.results[0].type
    assert isinstance(out_type, TensorType)
    shape = list(shape_of(out_type))
    wide_type = TensorType(out_type.get_element_type(), [*shape[:-1], sum(widths)])
    wide = LinearOp.build(operands=[[first.input], [w_lit.result], [b_lit.result] if b_lit else [], []],
                          properties={"post_ops": first.post_ops}, result_types=[wide_type])
    wide.location = first.location
    wide.results[0].name_hint = f"{name}_siblings"
    new_ops.append(wide)
    Rewriter.insert_op(new_ops, InsertPoint.before(first))
    start = 0
    for op, width in zip(group, widths):
        piece = build_aten("aten::slice.Tensor", {"self": wide.results[0], "dim": len(shape) - 1, "start": start,
                                                   "end": start + width, "step": 1}, [op.results[0].type])
        piece.location = op.location
        piece.results[0].name_hint = op.results[0].name_hint
        Rewriter.insert_op(piece, InsertPoint.before(first))
        op.results[0].replace_all_uses_with(piece.results[0])
        start += width
    for op in group:
        Rewriter.erase_op(op)


@dataclass(frozen=True)
class FuseSiblingLinearsPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [block for inner in op.walk() for region in inner.regions for block in region.blocks]
        for block in blocks:
            for group in _groups(block):
                _merge(group)
                record(NAME, "linears merged", len(group))
                record(NAME, "wide linears")
        DeadCodeElimination().apply(ctx, op)
