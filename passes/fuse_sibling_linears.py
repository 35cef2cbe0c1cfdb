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
is left alone) and before ``prepack-weights``.  Records how many linears it merged and how
many wide linears it made.
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
from ziggurat.dialects.torch.aten_ops import AtenSliceTensorOp
from ziggurat.ir.rewriting import involves_dynamic_shape, literal_value, new_literal
from ziggurat.ir.statistics import record
from ziggurat.ir.types import shape_of

NAME = "fuse-sibling-linears"


@dataclass(frozen=True)
class _Sibling:
    """A mergeable linear with its constant weight [N, K] and bias [N] (None: no bias)."""

    op: LinearOp
    weight: torch.Tensor
    bias: torch.Tensor | None


def _sibling(op: LinearOp) -> _Sibling | None:
    if op.post_ops.data or op.other is not None or op.weight_layout is not None:
        return None
    weight = literal_value(op.weight)
    if weight is None or weight.dim() != 2 or not weight.dtype.is_floating_point:
        return None
    bias = literal_value(op.bias)
    if op.bias is not None and bias is None:
        return None
    return _Sibling(op, weight, bias)


def _groups(block: Block) -> list[list[_Sibling]]:
    """Mergeable linears of ``block`` by input value (and weight dtype), in block order."""
    by_input: dict[tuple[SSAValue, torch.dtype], list[_Sibling]] = {}
    for op in block.ops:
        sibling = _sibling(op) if isinstance(op, LinearOp) and not involves_dynamic_shape(op) else None
        if sibling is not None:
            by_input.setdefault((sibling.op.input, sibling.weight.dtype), []).append(sibling)
    return [group for group in by_input.values() if len(group) > 1]


def _merge(group: list[_Sibling]) -> None:
    widths = [s.weight.shape[0] for s in group]
    first = group[0].op
    name = first.results[0].name_hint or "linear"
    w_lit = new_literal(torch.cat([s.weight for s in group], 0), f"{name}_siblings_weight")
    new_ops: list[Operation] = [w_lit]
    b_lit = None
    if any(s.bias is not None for s in group):
        dtype = group[0].weight.dtype
        b_lit = new_literal(torch.cat([s.bias if s.bias is not None else torch.zeros(n, dtype=dtype)
                                       for s, n in zip(group, widths)]), f"{name}_siblings_bias")
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
    for s, width in zip(group, widths):
        result = s.op.results[0]
        piece = AtenSliceTensorOp.from_arguments({"self": wide.results[0], "dim": len(shape) - 1, "start": start,
                                                  "end": start + width, "step": 1}, [result.type])
        piece.location = s.op.location
        piece.results[0].name_hint = result.name_hint
        Rewriter.insert_op(piece, InsertPoint.before(first))
        result.replace_all_uses_with(piece.results[0])
        start += width
    for s in group:
        Rewriter.erase_op(s.op)


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
