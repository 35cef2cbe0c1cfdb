"""``constant-fold``: evaluate, at compile time with torch, every op whose operands are all
constants (transposed weights, reshaped biases, dtype casts of weights, ...).

Each folded op becomes ``torch.literal``(s). The pass records how many ops it folded and
how many bytes of constants it produced (``ziggurat-opt --pass-statistics``).
Ops with side effects or randomness (not ``Pure``) are never folded, nor ops marked
``ziggurat.sized`` (a range build's lowering: a result whose shape follows the symbols stays
an op, so the lowerings at sampled sizes differ in sizes, not in literals), nor ops whose result
is larger than ``max_bytes`` (folding a ``zeros`` of 1 GB would bloat the module), nor ops
with a complex, float8 or quantized result (only torch reads those; a quantized tensor has no
literal form).  An op reading such constants into a native result (``view_as_real`` of a
complex buffer) folds as any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import Pure
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.torch import LiteralOp, TorchOp
from ziggurat.dialects.torch.ops_base import OperatorOp
from ziggurat.ir.interpreter.torch_functions import call_torch
from ziggurat.ir.rewriting import StaticShapesOnly, replace_with_literal
from ziggurat.ir.shape_symbols import SIZED_ATTR
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of, shape_of, torch_only_reason
from ziggurat.passes.decompose_quantize import ROW_SCALES_ATTR, row_scales_attr
from ziggurat.passes.torch_canonicalize import feeds_storage_reader

NAME = "constant-fold"


def _result_bytes(op: TorchOp) -> int:
    total = 0
    for result in op.results:
        if not isinstance(result.type, TensorType):
            return -1
        n = 1
        for d in shape_of(result.type):
            n *= d
        total += n * dtype_of(result.type).itemsize
    return total


#: Namespaces of ``torch.operator`` ops that are pure functions of their operands (PT2E's
#: quantize/dequantize: a weight's dequantization folds into a float32 literal).
PURE_NAMESPACES = ("quantized_decomposed::",)


def _pure(op: TorchOp) -> bool:
    if isinstance(op, OperatorOp):
        return op.op_name.data.startswith(PURE_NAMESPACES) and op.schema_text is not None
    return op.has_trait(Pure)


@dataclass
class FoldConstantOp(RewritePattern):
    """Any pure torch op of constants, typed or ``torch.operator``: the generic path by design,
    as torch evaluates every op the same way (``call_torch``)."""

    max_bytes: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TorchOp, rewriter: PatternRewriter) -> None:
        if not _pure(op) or not op.results or SIZED_ATTR in op.attributes:
            return
        if not all(isinstance(v.owner, LiteralOp) for v in op.operands):
            return
        if any(torch_only_reason(r.type) is not None for r in op.results):
            # a complex/float8/quantized result would become a literal: a quantized tensor has
            # none (its scale is not bytes), and the others gain nothing, as only torch reads them
            return
        size = _result_bytes(op)
        if size < 0 or size > self.max_bytes:
            return
        if any(feeds_storage_reader(r) for r in op.results):
            # a folded view is a fresh row-major literal: an as_strided behind it would read that
            # instead of the storage it shares with its base (the literal it views)
            return
        operands = tuple(v.owner.tensor() for v in op.operands)  # pyright: ignore
        values = call_torch(op, operands)
        name = (op.results[0].name_hint or op.op_schema.base_name) + "_folded"
        scales = row_scales_attr(op, operands) if isinstance(op, OperatorOp) else None
        literals = replace_with_literal(rewriter, op, list(values), name)
        if scales is not None:  # an int8 weight's dequantization: the CPU backend takes it back
            literals[0].attributes[ROW_SCALES_ATTR] = scales
        record(NAME, "folded ops")
        record(NAME, "bytes of constants produced", size)


@dataclass(frozen=True)
class ConstantFoldPass(ModulePass):
    name = NAME

    max_bytes: int = 1 << 30

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([FoldConstantOp(self.max_bytes)])),
        ).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
