"""``fold-batchnorm``: conv (with or without bias) -> batch_norm in eval mode becomes one conv
with rescaled weight and bias; likewise linear -> batch_norm1d (on ``[N, C]``).

Only when the batch norm is in inference mode, its statistics (and affine parameters, if
any) and the conv/linear weight and bias are constants, and the conv/linear result has no
other user.  With ``s = gamma / sqrt(var + eps)``: ``w' = w * s`` (per output channel),
``b' = (b - mean) * s + beta``.

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

from ziggurat.dialects.torch import AtenOp
from ziggurat.ir.rewriting import StaticShapesOnly, aten, build_aten, literal_value, new_literal, single_use
from ziggurat.ir.statistics import record

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


def _inference_bn(op: AtenOp) -> dict[str, object] | None:
    """The batch norm's arguments if it is in inference mode with constant statistics."""
    if aten(op, "batch_norm", "native_batch_norm"):
        args = op.arguments()
        if args["training"]:
            return None
    elif aten(op, "_native_batch_norm_legit_no_training"):
        args = op.arguments()
        if any(r.uses for r in op.results[1:]):
            return None
    else:
        return None
    values = {k: args.get(k) for k in ("input", "weight", "bias", "running_mean", "running_var", "eps")}
    for key in ("running_mean", "running_var"):
        if literal_value(values[key]) is None:  # pyright: ignore[reportArgumentType]
            return None
    for key in ("weight", "bias"):
        if values[key] is not None and literal_value(values[key]) is None:  # pyright: ignore
            return None
    return values


class FoldBatchNormIntoProducer(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        bn = _inference_bn(op)
        if bn is None:
            return
        producer = bn["input"].owner  # pyright: ignore[reportAttributeAccessIssue]
        if not isinstance(producer, AtenOp) or not single_use(producer.results[0]):
            return
        is_conv = aten(producer, "conv2d", "conv1d")
        is_linear = aten(producer, "linear")
        if not (is_conv or is_linear):
            return
        args = producer.arguments()
        weight = literal_value(args["weight"])
        bias_value = args.get("bias")
        bias = literal_value(bias_value) if bias_value is not None else None
        if weight is None or (bias_value is not None and bias is None):
            return
        out_type = producer.results[0].type
        assert isinstance(out_type, TensorType)
        if is_linear and len(out_type.get_shape()) != 2:
            return  # BatchNorm1d on [N, L, F] normalizes L, not the linear's features
        channels = weight.shape[0]
        mean = literal_value(bn["running_mean"])  # pyright: ignore[reportArgumentType]
        var = literal_value(bn["running_var"])  # pyright: ignore[reportArgumentType]
        assert mean is not None and var is not None
        gamma = literal_value(bn["weight"]) if bn["weight"] is not None else torch.ones(channels)  # pyright: ignore
        beta = literal_value(bn["bias"]) if bn["bias"] is not None else torch.zeros(channels)  # pyright: ignore
        assert gamma is not None and beta is not None
        if mean.numel() != channels:
            return
        w64, m64, v64 = weight.double(), mean.double(), var.double()
        scale = gamma.double() / torch.sqrt(v64 + float(bn["eps"]))  # pyright: ignore[reportArgumentType]
        new_weight = (w64 * scale.reshape(-1, *([1] * (weight.dim() - 1)))).to(weight.dtype)
        b64 = bias.double() if bias is not None else torch.zeros(channels, dtype=torch.float64)
        new_bias = ((b64 - m64) * scale + beta.double()).to(weight.dtype)
        if not _finite_fold(weight, bias, gamma, beta, mean, var, float(bn["eps"]),  # pyright: ignore[reportArgumentType]
                            new_weight, new_bias):
            record(NAME, "kept: non-finite")
            return
        base = (args["weight"].name_hint or "weight").removesuffix("_weight")  # pyright: ignore
        w_lit = new_literal(new_weight, f"{base}.weight_bn")
        b_lit = new_literal(new_bias, f"{base}.bias_bn")
        new_args = dict(args.values)
        new_args["weight"], new_args["bias"] = w_lit.result, b_lit.result
        folded = build_aten(producer.op_schema.key, new_args, [out_type])
        folded.location = producer.location
        rewriter.insert([w_lit, b_lit], InsertPoint.before(producer))
        rewriter.replace(op, folded, [folded.results[0]] + [None] * (len(op.results) - 1))
        rewriter.erase(producer)
        record(NAME, f"{'conv' if is_conv else 'linear'} + batch_norm folded")


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([FoldBatchNormIntoProducer()]))).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
