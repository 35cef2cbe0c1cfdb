"""``fold-batchnorm``: conv (with or without bias) -> batch_norm in eval mode becomes one conv
with rescaled weight and bias; likewise linear -> batch_norm1d (on ``[N, C]``).

Only when the batch norm is in inference mode, its statistics (and affine parameters, if
any) and the conv/linear weight and bias are constants, and the conv/linear result has no
other user.  With ``s = gamma / sqrt(var + eps)``: ``w' = w * s`` (per output channel),
``b' = (b - mean) * s + beta``, computed in float64 from the float32 weight where
``precision=`` casts it to bf16/float16 (a cast of a literal: one rounding, not two), and
rounded to the conv's weight type.  graph-opt runs this pass before constant-fold, which
rounds such casts, and again after it.

Only finite values fold: eager computes ``y * a + (beta - mean * a)`` on the conv's output
``y`` with ``a = gamma / sqrt(var + eps)``, so an infinite or NaN ``a`` or shift (an
infinite gamma, a negative variance, ...) gives NaN/inf where the folded conv would give
other ones (``0 * inf`` inside the sums), and so would a folded weight or bias that over-
or underflows float32.  Such batch norms stay (counted as "kept: non-finite").
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.torch.aten_ops import (
    Aten_NativeBatchNormLegitNoTraining_Op,
    Aten_ToCopy_Op,
    AtenBatchNorm_Op,
    AtenConv1d_Op,
    AtenConv1dPaddingOp,
    AtenConv2d_Op,
    AtenConv2dPaddingOp,
    AtenLinear_Op,
    AtenNativeBatchNorm_Op,
)
from ziggurat.ir.rewriting import StaticShapesOnly, literal_value, new_literal, single_use
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of

NAME = "fold-batchnorm"


def _finite_fold(weight: torch.Tensor, bias: torch.Tensor | None, gamma: torch.Tensor, beta: torch.Tensor,
                 mean: torch.Tensor, var: torch.Tensor, eps: float, new_weight: torch.Tensor,
                 new_bias: torch.Tensor) -> bool:
    """Whether the folded conv gives eager's values wherever they are not finite: every input
    and every folded value finite, and no folded weight flushed to zero (see the module doc)."""
    f32 = torch.float32
    alpha = gamma.to(f32) * (1 / torch.sqrt(var.to(f32) + eps))  # eager's per-channel terms
    shift = beta.to(f32) - mean.to(f32) * alpha
    tensors = [weight, alpha, shift, new_weight, new_bias] + ([bias] if bias is not None else [])
    if not all(bool(torch.isfinite(t).all()) for t in tensors):
        return False
    scale = alpha.reshape(-1, *([1] * (weight.dim() - 1)))
    flushed = (new_weight == 0) & (weight != 0) & (scale != 0)
    return not bool(flushed.any())


BatchNorm = AtenBatchNorm_Op | AtenNativeBatchNorm_Op | Aten_NativeBatchNormLegitNoTraining_Op
#: The ops a batch norm folds into (weight ``[C_out, ...]``, optional bias ``[C_out]``).
Producer = AtenConv1d_Op | AtenConv1dPaddingOp | AtenConv2d_Op | AtenConv2dPaddingOp | AtenLinear_Op


class FoldBatchNormIntoProducer(RewritePattern):
    """``batch_norm`` / ``native_batch_norm`` in inference mode."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenBatchNorm_Op | AtenNativeBatchNorm_Op, rewriter: PatternRewriter) -> None:
        if not op.training_value:
            _fold(op, rewriter)


class FoldNoTrainingBatchNormIntoProducer(RewritePattern):
    """``_native_batch_norm_legit_no_training`` whose saved mean and invstd are unused."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Aten_NativeBatchNormLegitNoTraining_Op, rewriter: PatternRewriter) -> None:
        if not any(r.uses for r in op.results[1:]):
            _fold(op, rewriter)


def _source_constant(value: SSAValue) -> torch.Tensor | None:
    """A constant weight or bias at its source precision: a literal, or a literal cast by
    ``_to_copy`` (``precision=``'s cast of a float32 weight to bf16/float16, before
    constant-fold rounds it).  Folding from the float32 source rounds the folded weight once,
    as eager autocast rounds its weight once; folding from the rounded weight rounded twice."""
    cast = value.owner
    if isinstance(cast, Aten_ToCopy_Op) and cast.dtype is not None:
        source = literal_value(cast.self_)
        if source is not None and source.is_floating_point():
            return source
    return literal_value(value)


def _fold(bn: BatchNorm, rewriter: PatternRewriter) -> None:
    """Fold the inference-mode batch norm ``bn`` into its producer, if both are constant enough."""
    if literal_value(bn.running_mean) is None or literal_value(bn.running_var) is None:
        return
    if any(v is not None and literal_value(v) is None for v in (bn.weight, bn.bias)):
        return
    producer = bn.input.owner
    if not isinstance(producer, Producer) or not single_use(producer.result):
        return
    is_linear = isinstance(producer, AtenLinear_Op)
    weight = _source_constant(producer.weight)
    bias = _source_constant(producer.bias) if producer.bias is not None else None
    if weight is None or (producer.bias is not None and bias is None):
        return
    dtype = dtype_of(producer.weight.type)  # the producer's: 16-bit where precision= casts a float32 weight
    out_type = producer.result.type
    assert isinstance(out_type, TensorType)
    if is_linear and len(out_type.get_shape()) != 2:
        return  # BatchNorm1d on [N, L, F] normalizes L, not the linear's features
    channels = weight.shape[0]
    mean = literal_value(bn.running_mean)
    var = literal_value(bn.running_var)
    assert mean is not None and var is not None
    gamma = literal_value(bn.weight) if bn.weight is not None else torch.ones(channels)
    beta = literal_value(bn.bias) if bn.bias is not None else torch.zeros(channels)
    assert gamma is not None and beta is not None
    if mean.numel() != channels:
        return
    eps = bn.eps.value.data
    w64, m64, v64 = weight.double(), mean.double(), var.double()
    scale = gamma.double() / torch.sqrt(v64 + eps)
    new_weight = (w64 * scale.reshape(-1, *([1] * (weight.dim() - 1)))).to(dtype)
    b64 = bias.double() if bias is not None else torch.zeros(channels, dtype=torch.float64)
    new_bias = ((b64 - m64) * scale + beta.double()).to(dtype)
    if not _finite_fold(weight, bias, gamma, beta, mean, var, eps, new_weight, new_bias):
        record(NAME, "kept: non-finite")
        return
    base = (producer.weight.name_hint or "weight").removesuffix("_weight")
    w_lit = new_literal(new_weight, f"{base}.weight_bn")
    b_lit = new_literal(new_bias, f"{base}.bias_bn")
    folded = type(producer).from_arguments(
        {**producer.arguments().values, "weight": w_lit.result, "bias": b_lit.result}, [out_type])
    folded.location = producer.location
    rewriter.insert([w_lit, b_lit], InsertPoint.before(producer))
    rewriter.replace(bn, folded, [folded.results[0]] + [None] * (len(bn.results) - 1))
    rewriter.erase(producer)
    record(NAME, f"{'linear' if is_linear else 'conv'} + batch_norm folded")


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([
                FoldBatchNormIntoProducer(), FoldNoTrainingBatchNormIntoProducer()]),
                symbolic=True)).rewrite_module(op)  # weights and ranks only: any batch size
        DeadCodeElimination().apply(ctx, op)
