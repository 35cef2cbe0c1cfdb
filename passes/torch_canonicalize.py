"""``torch-canonicalize``: remove no-ops, fold shape queries, normalize conv, then
xDSL's canonicalize, CSE and DCE.

* no-ops: dropout/feature_dropout/alpha_dropout in eval, contiguous, detach, clone,
  alias, ``to``/``type_as`` to the same type, identity reshapes/views/expands/permutes/
  transposes/slices/repeats, single-tensor cat;
* ``aten::size.int``/``dim``/``numel`` on static shapes -> constants;
* ``aten::_convolution``/``convolution`` that are plain 2-D convolutions, and
  ``aten::conv2d.padding`` ("valid", or "same" where it pads both sides alike) -> ``aten::conv2d``
  (so the fusion and lowering passes see one form).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

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
from ziggurat.dialects.torch.aten_ops import (
    Aten_Convolution_Op,
    Aten_ConvolutionDeprecatedOp,
    Aten_UnsafeView_Op,
    AtenAlias_Op,
    AtenAlphaDropout_Op,
    AtenAsStrided_Op,
    AtenBroadcastTo_Op,
    AtenCat_Op,
    AtenChunk_Op,
    AtenClone_Op,
    AtenContiguous_Op,
    AtenConv2d_Op,
    AtenConv2dPaddingOp,
    AtenConvolution_Op,
    AtenDetach_Op,
    AtenDiagonal_Op,
    AtenDim_Op,
    AtenDropout_Op,
    AtenExpand_Op,
    AtenExpandAs_Op,
    AtenFeatureDropout_Op,
    AtenFlattenUsingIntsOp,
    AtenNarrow_Op,
    AtenNarrowTensorOp,
    AtenNumel_Op,
    AtenNumpyT_Op,
    AtenNumpyTAOp,
    AtenPermute_Op,
    AtenRepeat_Op,
    AtenReshape_Op,
    AtenReshapeAs_Op,
    AtenSelectIntOp,
    AtenSizeIntOp,
    AtenSliceScatter_Op,
    AtenSliceTensorOp,
    AtenSplit_Op,
    AtenSplitSizesOp,
    AtenSplitTensorOp,
    AtenSplitWithSizes_Op,
    AtenSqueeze_Op,
    AtenSqueezeDimOp,
    AtenSqueezeDimsOp,
    AtenT_Op,
    AtenTile_Op,
    AtenToDeviceOp,
    AtenToDtypeOp,
    AtenToOtherOp,
    AtenToPrimDeviceOp,
    AtenToPrimDtypeOp,
    AtenToPrimOtherOp,
    AtenTransposeIntOp,
    AtenTypeAs_Op,
    AtenUnbindIntOp,
    AtenUnflattenIntOp,
    AtenUnfold_Op,
    AtenUnsqueeze_Op,
    AtenView_Op,
    AtenViewAs_Op,
    AtenViewDtypeOp,
)
from ziggurat.ir.rewriting import StaticShapesOnly
from ziggurat.ir.statistics import record

NAME = "torch-canonicalize"

To = AtenToDeviceOp | AtenToDtypeOp | AtenToOtherOp | AtenToPrimDeviceOp | AtenToPrimDtypeOp | AtenToPrimOtherOp
#: Ops whose result has its operand's values: no-ops where the result type is the operand's.
Copy = AtenContiguous_Op | AtenDetach_Op | AtenClone_Op | AtenAlias_Op
#: Casts, views and reshapes: no-ops where the result type is the operand's.
SameTypeNoOp = (To | AtenTypeAs_Op | AtenView_Op | AtenViewDtypeOp | AtenReshape_Op | AtenFlattenUsingIntsOp
                | Aten_UnsafeView_Op | AtenViewAs_Op | AtenReshapeAs_Op | AtenExpand_Op | AtenExpandAs_Op
                | AtenBroadcastTo_Op | AtenSqueeze_Op | AtenSqueezeDimOp | AtenSqueezeDimsOp | AtenUnflattenIntOp)
Dropout = AtenDropout_Op | AtenFeatureDropout_Op | AtenAlphaDropout_Op

#: Ops that read their operand's storage rather than its elements (``as_strided``): an op that
#: allocates fresh storage (``contiguous``, ``clone``, a copying ``to``) before them changes
#: what they read, so it is no no-op there.
StorageReader = AtenAsStrided_Op
#: Ops whose result shares its operand's storage (what a storage reader behind them sees).
View = (AtenView_Op | AtenViewDtypeOp | AtenReshape_Op | Aten_UnsafeView_Op | AtenViewAs_Op | AtenReshapeAs_Op
        | AtenFlattenUsingIntsOp | AtenUnflattenIntOp | AtenSqueeze_Op | AtenSqueezeDimOp | AtenSqueezeDimsOp
        | AtenUnsqueeze_Op | AtenExpand_Op | AtenExpandAs_Op | AtenBroadcastTo_Op | AtenPermute_Op
        | AtenTransposeIntOp | AtenT_Op | AtenNumpyT_Op | AtenNumpyTAOp | AtenSliceTensorOp | AtenSelectIntOp
        | AtenNarrow_Op | AtenNarrowTensorOp | AtenUnfold_Op | AtenDiagonal_Op | AtenAlias_Op | AtenDetach_Op
        | AtenSplit_Op | AtenSplitTensorOp | AtenSplitSizesOp | AtenChunk_Op | AtenUnbindIntOp
        | AtenSplitWithSizes_Op | AtenAsStrided_Op | To | AtenTypeAs_Op)
FreshStorage = AtenContiguous_Op | AtenClone_Op | To | AtenTypeAs_Op


def feeds_storage_reader(value: SSAValue) -> bool:
    """``value`` reaches an op that reads its storage, directly or through views.  Only typed
    ops are followed: a ``torch.operator`` (``as_strided_scatter``, ``movedim``) is neither."""
    seen: set[SSAValue] = set()
    work = [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user = use.operation
            if isinstance(user, StorageReader) and use.index == 0:
                return True
            if isinstance(user, View):
                work.extend(user.results)
    return False


def _same_type_source(op: AtenOp) -> TensorType[Any] | None:
    """The type of ``op``'s first operand when it is a tensor and ``op``'s one result has it."""
    source = op.operands[0]
    if len(op.results) != 1 or not isinstance(source.type, TensorType) or op.results[0].type != source.type:
        return None
    return source.type


def _remove(op: AtenOp, rewriter: PatternRewriter) -> None:
    """Replace ``op``'s result by its first operand (a same-type no-op)."""
    if isinstance(op, FreshStorage) and feeds_storage_reader(op.results[0]):
        return
    record(NAME, f"removed {op.op_schema.base_name}")
    rewriter.replace(op, [], [op.operands[0]])


class RemoveCopies(RewritePattern):
    """``contiguous``, ``detach``, ``clone``, ``alias`` to the same type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Copy, rewriter: PatternRewriter) -> None:
        if _same_type_source(op) is not None:
            _remove(op, rewriter)


class RemoveInferenceDropout(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Dropout, rewriter: PatternRewriter) -> None:
        if _same_type_source(op) is not None and (not op.train_value or op.p.value.data == 0.0):
            _remove(op, rewriter)


class RemoveSameTypeNoOps(RewritePattern):
    """Casts, views and reshapes to the type they already have."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SameTypeNoOp, rewriter: PatternRewriter) -> None:
        if _same_type_source(op) is not None:
            _remove(op, rewriter)


class RemoveIdentityPermute(RewritePattern):
    """A permute that keeps the order of the dims of size > 1."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenPermute_Op, rewriter: PatternRewriter) -> None:
        source = _same_type_source(op)
        if source is None:
            return
        shape = list(source.get_shape())
        dims = [d % len(shape) for d in op.dims_value]
        if [d for d in dims if shape[d] != 1] == sorted(d for d in dims if shape[d] != 1):
            _remove(op, rewriter)


class RemoveIdentityTranspose(RewritePattern):
    """A transpose of a dim of size 1, or of a dim with itself."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenTransposeIntOp, rewriter: PatternRewriter) -> None:
        source = _same_type_source(op)
        if source is None:
            return
        shape = list(source.get_shape())
        dim0, dim1 = op.dim0.value.data % len(shape), op.dim1.value.data % len(shape)
        if shape[dim0] == 1 or shape[dim1] == 1 or dim0 == dim1:
            _remove(op, rewriter)


class RemoveIdentityT(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenT_Op, rewriter: PatternRewriter) -> None:
        source = _same_type_source(op)
        if source is not None and (len(source.get_shape()) < 2 or 1 in source.get_shape()):
            _remove(op, rewriter)


class RemoveIdentitySlice(RewritePattern):
    """A unit-step slice to the same type (the whole dim)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenSliceTensorOp, rewriter: PatternRewriter) -> None:
        if _same_type_source(op) is not None and op.step.value.data == 1:
            _remove(op, rewriter)


class RemoveIdentityRepeat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenRepeat_Op | AtenTile_Op, rewriter: PatternRewriter) -> None:
        repeats = op.repeats_value if isinstance(op, AtenRepeat_Op) else op.dims_value
        if _same_type_source(op) is not None and all(r == 1 for r in repeats):
            _remove(op, rewriter)


#: An op whose result is its input: its result is replaced by the input.
REMOVE_NO_OPS: tuple[RewritePattern, ...] = (
    RemoveCopies(), RemoveInferenceDropout(), RemoveSameTypeNoOps(), RemoveIdentityPermute(),
    RemoveIdentityTranspose(), RemoveIdentityT(), RemoveIdentitySlice(), RemoveIdentityRepeat(),
)


class SingleTensorCat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenCat_Op, rewriter: PatternRewriter) -> None:
        if len(op.tensors) == 1 and op.tensors[0].type == op.result.type:
            record(NAME, "removed cat")
            rewriter.replace(op, [], [op.tensors[0]])


class FoldShapeQueries(RewritePattern):
    """``aten::size.int``/``dim``/``numel`` of a static shape -> ``arith.constant``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenSizeIntOp | AtenDim_Op | AtenNumel_Op, rewriter: PatternRewriter) -> None:
        source_type = op.self_.type
        if not isinstance(source_type, TensorType):
            return
        shape = list(source_type.get_shape())
        if isinstance(op, AtenSizeIntOp):
            value = shape[op.dim.value.data % len(shape)]
        elif isinstance(op, AtenDim_Op):
            value = len(shape)
        else:
            value = prod(shape)
        record(NAME, "folded shape query")
        rewriter.replace(op, arith.ConstantOp(IntegerAttr(value, i64)))


class ConvolutionToConv2d(RewritePattern):
    """``aten::_convolution`` / ``aten::convolution`` of a plain 2-D conv -> ``aten::conv2d``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Aten_Convolution_Op | Aten_ConvolutionDeprecatedOp | AtenConvolution_Op,
                          rewriter: PatternRewriter) -> None:
        weight_type = op.weight.type
        if op.transposed_value or not isinstance(weight_type, TensorType) or len(weight_type.get_shape()) != 4:
            return
        _replace_with_conv2d(op, op.padding_value, f"{op.op_schema.base_name} -> conv2d", rewriter)


class StringPaddingToConv2d(RewritePattern):
    """``aten::conv2d.padding`` -> ``aten::conv2d`` with the padding as integers: ``"valid"`` is
    none; ``"same"`` pads ``dilation * (kernel - 1)`` in all, half on each side (torch pads the odd
    one on the right with a separate ``F.pad``: such a convolution is left as it is)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenConv2dPaddingOp, rewriter: PatternRewriter) -> None:
        weight_type = op.weight.type
        if not isinstance(weight_type, TensorType) or len(weight_type.get_shape()) != 4:
            return
        mode = op.padding.data
        if mode == "valid":
            padding = [0, 0]
        elif mode == "same":  # stride 1: the verifier refuses a strided "same", as torch does
            totals = [d * (k - 1) for d, k in zip(op.dilation_value, weight_type.get_shape()[2:])]
            if any(t % 2 for t in totals):
                return
            padding = [t // 2 for t in totals]
        else:
            return
        _replace_with_conv2d(op, padding, f"conv2d padding={mode!r} -> conv2d", rewriter)


def _replace_with_conv2d(op: Aten_Convolution_Op | Aten_ConvolutionDeprecatedOp | AtenConvolution_Op
                         | AtenConv2dPaddingOp, padding: list[int], what: str, rewriter: PatternRewriter) -> None:
    """``op`` replaced by the ``aten::conv2d`` of its operands, stride, dilation and groups with
    ``padding``, at its location."""
    conv = AtenConv2d_Op.from_arguments({
        "input": op.input, "weight": op.weight, "bias": op.bias, "stride": op.stride_value,
        "padding": padding, "dilation": op.dilation_value, "groups": op.groups.value.data,
    }, [op.result.type])
    conv.location = op.location
    record(NAME, what)
    rewriter.replace(op, conv)


def _slice_range(op: AtenSliceTensorOp | AtenSliceScatter_Op, size: int) -> tuple[int, int, int]:
    """A slice's ``(start, end, step)`` on a dim of ``size``, as torch clamps them."""
    start = 0 if op.start_value is None else op.start_value
    end = size if op.end_value is None else op.end_value
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    return max(0, min(start, size)), max(0, min(end, size)), op.step.value.data


class SliceOfSliceScatter(RewritePattern):
    """``slice(slice_scatter(base, src, d, a, b, s), d, a, b, s)`` -> ``src``; a unit-step slice
    of a range the scatter did not write -> the same slice of ``base`` (what the TorchScript
    frontend's functionalization leaves: each piece of a ``chunk`` read back from the rebuilt
    base; the rebuilt bases then die)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenSliceTensorOp, rewriter: PatternRewriter) -> None:
        scatter = op.self_.owner
        if not isinstance(scatter, AtenSliceScatter_Op):
            return
        base_type = scatter.self_.type
        if not isinstance(base_type, TensorType):
            return
        rank = len(base_type.get_shape())
        if op.dim.value.data % rank != scatter.dim.value.data % rank:
            return
        size = base_type.get_shape()[op.dim.value.data % rank]
        r, w = _slice_range(op, size), _slice_range(scatter, size)
        if r == w and op.result.type == scatter.src.type:
            record(NAME, "slice of its own slice_scatter")
            rewriter.replace(op, [], [scatter.src])
        elif r[2] == w[2] == 1 and (r[1] <= w[0] or w[1] <= r[0]):
            record(NAME, "slice beside a slice_scatter")
            rewriter.replace(op, AtenSliceTensorOp.from_arguments({
                "self": scatter.self_, "dim": op.dim.value.data, "start": op.start_value, "end": op.end_value,
                "step": op.step.value.data}, [op.result.type]))


@dataclass(frozen=True)
class TorchCanonicalizePass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier(
                [*REMOVE_NO_OPS, SingleTensorCat(), FoldShapeQueries(), ConvolutionToConv2d(), StringPaddingToConv2d(),
                 SliceOfSliceScatter()]
            )),
            apply_recursively=True,
        ).rewrite_module(op)
        CanonicalizePass().apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)
        DeadCodeElimination().apply(ctx, op)
