"""``torch-canonicalize``: remove no-ops, fold shape queries, normalize conv, then
xDSL's canonicalize, CSE and DCE.

* no-ops: dropout/feature_dropout/alpha_dropout in eval, contiguous, detach, clone,
  alias, ``to``/``type_as`` to the same type, identity reshapes/views/expands/permutes/
  transposes/slices/repeats, single-tensor cat;
* ``aten::size.int``/``dim``/``numel`` on static shapes -> constants;
* ``aten::_convolution``/``convolution`` that are plain 2-D convolutions -> ``aten::conv2d``
  (so the fusion and lowering passes see one form).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.torch import AtenOp
from ziggurat.ir.rewriting import StaticShapesOnly, aten, build_aten
from ziggurat.ir.statistics import record

NAME = "torch-canonicalize"

_ALWAYS_NOOP = {"contiguous", "detach", "clone", "alias", "lift_fresh"}
_DROPOUTS = {"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"}
_SAME_TYPE_NOOP = {
    "to", "type_as", "view", "reshape", "flatten", "_unsafe_view", "view_as", "reshape_as",
    "expand", "expand_as", "broadcast_to", "squeeze", "unflatten", "_reshape_alias",
}


def _is_identity(op: AtenOp) -> bool:
    args = op.arguments()
    name = op.op_schema.base_name
    if name in _ALWAYS_NOOP:
        return True
    if name in _DROPOUTS:
        return args.get("train") is False or args.get("p") == 0.0
    if not op.results or op.results[0].type != op.operands[0].type:
        return False
    if name in _SAME_TYPE_NOOP:
        return True
    shape = list(op.operands[0].type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
    if name == "permute":
        dims = [d % len(shape) for d in args["dims"]]
        return [d for d in dims if shape[d] != 1] == sorted(d for d in dims if shape[d] != 1)
    if name == "transpose":
        return shape[args["dim0"] % len(shape)] == 1 or shape[args["dim1"] % len(shape)] == 1 or (
            args["dim0"] % len(shape) == args["dim1"] % len(shape))
    if name == "t":
        return len(shape) < 2 or 1 in shape
    if name == "slice":
        return args.get("step", 1) == 1
    if name in ("repeat", "tile"):
        return all(r == 1 for r in args.get("repeats", args.get("dims", [])))
    return False


#: Ops that read their operand's storage rather than its elements (``as_strided``): an op that
#: allocates fresh storage (``contiguous``, ``clone``, a copying ``to``) before them changes
#: what they read, so it is no no-op there.
_STORAGE_READERS = {"as_strided", "as_strided_copy", "as_strided_scatter", "_reshape_alias"}
#: Ops whose result shares its operand's storage (what a storage reader behind them sees).
_VIEWS = {"view", "reshape", "_unsafe_view", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
          "unsqueeze", "expand", "expand_as", "broadcast_to", "permute", "transpose", "t", "numpy_T", "movedim",
          "swapaxes", "swapdims", "slice", "select", "narrow", "unfold", "diagonal", "alias", "detach", "split",
          "chunk", "unbind", "split_with_sizes", "T", "mT", "as_strided", "_reshape_alias", "to", "type_as"}
_FRESH_STORAGE = {"contiguous", "clone", "to", "type_as"}


def feeds_storage_reader(value: SSAValue) -> bool:
    """``value`` reaches an op that reads its storage, directly or through views."""
    seen: set[SSAValue] = set()
    work = [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user = use.operation
            if not isinstance(user, AtenOp):
                continue
            name = user.op_schema.base_name
            if name in _STORAGE_READERS and use.index == 0:
                return True
            if name in _VIEWS:
                work.extend(user.results)
    return False


class RemoveNoOps(RewritePattern):
    """An op whose result is its input: replace the result by the input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if len(op.results) != 1 or not op.operands or not isinstance(op.operands[0].type, TensorType):
            return
        source = op.operands[0]
        if op.results[0].type != source.type or not _is_identity(op):
            return
        if op.op_schema.base_name in _FRESH_STORAGE and feeds_storage_reader(op.results[0]):
            return
        record(NAME, f"removed {op.op_schema.base_name}")
        rewriter.replace(op, [], [source])


class SingleTensorCat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if aten(op, "cat") and len(op.operands) == 1 and op.operands[0].type == op.results[0].type:
            record(NAME, "removed cat")
            rewriter.replace(op, [], [op.operands[0]])


class FoldShapeQueries(RewritePattern):
    """``aten::size.int``/``dim``/``numel`` of a static shape -> ``arith.constant``."""

    QUERIES: ClassVar[set[str]] = {"aten::size.int", "aten::dim", "aten::numel"}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        key = op.op_schema.key
        if key not in self.QUERIES or not isinstance(op.operands[0].type, TensorType):
            return
        shape = list(op.operands[0].type.get_shape())
        args = op.arguments()
        if key == "aten::size.int":
            value = shape[args["dim"] % len(shape)]
        elif key == "aten::dim":
            value = len(shape)
        else:
            value = prod(shape)
        record(NAME, "folded shape query")
        rewriter.replace(op, arith.ConstantOp(IntegerAttr(value, i64)))


class ConvolutionToConv2d(RewritePattern):
    """``aten::_convolution`` / ``aten::convolution`` of a plain 2-D conv -> ``aten::conv2d``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if not aten(op, "_convolution", "convolution"):
            return
        args = op.arguments()
        weight_type = args["weight"].type
        if args["transposed"] or not isinstance(weight_type, TensorType) or len(weight_type.get_shape()) != 4:
            return
        conv = build_aten("aten::conv2d", {
            "input": args["input"], "weight": args["weight"], "bias": args["bias"],
            "stride": args["stride"], "padding": args["padding"], "dilation": args["dilation"],
            "groups": args["groups"],
        }, [op.results[0].type])
        conv.location = op.location
        record(NAME, f"{op.op_schema.base_name} -> conv2d")
        rewriter.replace(op, conv)


def _slice_range(args: Any, size: int) -> tuple[int, int, int]:
    """A slice's ``(start, end, step)`` on a dim of ``size``, as torch clamps them."""
    start, end, step = args.get("start", 0), args.get("end", size), args.get("step", 1)
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    return max(0, min(start, size)), max(0, min(end, size)), step


class SliceOfSliceScatter(RewritePattern):
    """``slice(slice_scatter(base, src, d, a, b, s), d, a, b, s)`` -> ``src``; a unit-step slice
    of a range the scatter did not write -> the same slice of ``base`` (what the TorchScript
    frontend's functionalization leaves: each piece of a ``chunk`` read back from the rebuilt
    base; the rebuilt bases then die)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if op.op_schema.key != "aten::slice.Tensor":
            return
        scatter = op.operands[0].owner
        if not isinstance(scatter, AtenOp) or scatter.op_schema.key != "aten::slice_scatter":
            return
        base_type = scatter.operands[0].type
        if not isinstance(base_type, TensorType):
            return
        read, written = op.arguments(), scatter.arguments()
        rank = len(base_type.get_shape())
        if read["dim"] % rank != written["dim"] % rank:
            return
        size = base_type.get_shape()[read["dim"] % rank]
        r, w = _slice_range(read, size), _slice_range(written, size)
        if r == w and op.results[0].type == written["src"].type:
            record(NAME, "slice of its own slice_scatter")
            rewriter.replace(op, [], [written["src"]])
        elif r[2] == w[2] == 1 and (r[1] <= w[0] or w[1] <= r[0]):
            record(NAME, "slice beside a slice_scatter")
            rewriter.replace(op, build_aten("aten::slice.Tensor", {
                "self": scatter.operands[0], "dim": read["dim"], "start": read["start"], "end": read["end"],
                "step": read["step"]}, [op.results[0].type]))


@dataclass(frozen=True)
class TorchCanonicalizePass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier(
                [RemoveNoOps(), SingleTensorCat(), FoldShapeQueries(), ConvolutionToConv2d(),
                 SliceOfSliceScatter()]
            )),
            apply_recursively=True,
        ).rewrite_module(op)
        CanonicalizePass().apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)
        DeadCodeElimination().apply(ctx, op)
