"""``decompose-torch-ops``: big fused torch ops -> their parts, so they reach the GEMM kernels.

* ``aten::_transformer_encoder_layer_fwd`` (what ``nn.TransformerEncoderLayer`` traces to in
  eval mode) -> layer norms, multi-head attention, residual adds, and the feed-forward net;
* ``aten::_native_multi_head_attention`` (``nn.MultiheadAttention``) -> q/k/v projections,
  per-head attention, output projection (when the attention weights are not used);
* ``aten::scaled_dot_product_attention`` -> ``matmul(q, k^T) * scale (+ mask) -> softmax
  (0 on rows masked entirely, as torch's ``_safe_softmax``) -> matmul(., v)`` (no dropout); the
  shapes eager's flash kernel does not take scale q and k before their product, as its math
  path does;
  masks are added as 0 / -inf (a NaN score they hide stays NaN), except the causal mask of
  the shapes eager's flash kernel takes, which replaces the hidden scores.

The semantics follow PyTorch's native implementations (``transformer.cpp``,
``attention.cpp``); ops with a mask type or dropout these rules do not cover are left alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.aten_ops import (
    Aten_NativeMultiHeadAttention_Op,
    Aten_ToCopy_Op,
    Aten_TransformerEncoderLayerFwd_Op,
    AtenAddTensorOp,
    AtenAllDimOp,
    AtenAmax_Op,
    AtenDivTensorOp,
    AtenEqScalarOp,
    AtenExp_Op,
    AtenGelu_Op,
    AtenLayerNorm_Op,
    AtenLinear_Op,
    AtenMaskedFillScalarOp,
    AtenMatmul_Op,
    AtenMulScalarOp,
    AtenRelu_Op,
    AtenReshape_Op,
    AtenScaledDotProductAttention_Op,
    AtenSliceTensorOp,
    AtenSoftmaxIntOp,
    AtenSplitTensorOp,
    AtenSubTensorOp,
    AtenSumDimIntListOp,
    AtenTransposeIntOp,
    AtenWhereScalarOp,
)
from ziggurat.ir.rewriting import StaticShapesOnly, build_aten_inferred, new_literal
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of, shape_of

NAME = "decompose-torch-ops"


@dataclass
class Emitter:
    """Collects the ops of a decomposition, located at the op they replace."""

    origin: Operation
    ops: list[Operation] = field(default_factory=list)

    def __call__(self, cls: type[AtenOp], /, **args: Any) -> SSAValue:
        """The result of a ``cls`` op with these arguments (by schema name)."""
        return self.results(cls, **args)[0]

    def results(self, cls: type[AtenOp], /, **args: Any) -> list[SSAValue]:
        op = build_aten_inferred(cls, args)
        op.location = self.origin.location
        self.ops.append(op)
        return list(op.results)

    def literal(self, tensor: torch.Tensor, name: str) -> SSAValue:
        lit = new_literal(tensor, name)
        self.ops.append(lit)
        return lit.result


def eager_flash_attention(q: Sequence[int], k: Sequence[int], v: Sequence[int]) -> bool:
    """Whether eager's CPU attention takes its flash kernel for these shapes (``sdp_utils_cpp``:
    4-D operands with equal batch and head counts, equal head dims, non-empty sequences; a unit
    stride in the last dim is assumed) rather than the math path.  They differ on a causal
    mask: the flash kernel never computes the scores it hides (a NaN or +inf key beyond the
    diagonal is ignored), the math path adds -inf to them (NaN + -inf is NaN)."""
    return (len(q) == len(k) == len(v) == 4 and q[0] == k[0] == v[0] and q[1] == k[1] == v[1]
            and q[-1] == k[-1] == v[-1] and q[2] > 0 and k[2] > 0)


def math_attention_factors(scale: float) -> tuple[float, float]:
    """The factors eager's math attention (the shapes its flash kernel does not take) multiplies
    q and k by before their product: the root of the scale each, negated on q for a negative
    scale (``_scaled_dot_product_attention_math``).  Its scores are ``(q*f) @ (k*f)^T``, not
    ``(q @ k^T) * scale``: they round otherwise, and a product that overflows to inf (and gives
    NaN) one way is finite the other (fuzz seed 82, program 281)."""
    root = math.sqrt(abs(scale))
    return (-root if scale < 0 else root), root


def attention(e: Emitter, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None,
              is_causal: bool, scale: float | None, *, float32_scores: bool = False) -> SSAValue:
    """softmax(q @ k^T * scale + mask) @ v on ``[..., L, D]`` operands.

    The masks are in the scores' dtype, as eager converts a boolean mask (``-inf`` and ``0`` in
    bf16 or fp16 for a bf16 or fp16 attention): a float32 mask would promote the scores, and
    the product with ``v`` would mix dtypes.

    ``float32_scores``: a bf16 or fp16 attention computes its scores and softmax in float32,
    as eager's ``scaled_dot_product_attention`` does (rounding the scores to 8 or 11 bits made
    the result 5-13x farther from float64 than eager's).  Eager's math path (the shapes its
    flash kernel does not take) widens q, k and v and rounds the output once; its flash kernel
    rounds the probabilities to the 16-bit type for ``P @ v`` (float32 sums, one rounding)."""
    d = shape_of(q.type)[-1]
    qdtype = dtype_of(q.type)
    widened = float32_scores and qdtype in (torch.bfloat16, torch.float16)
    flash = eager_flash_attention(shape_of(q.type), shape_of(k.type), shape_of(v.type))
    dtype = torch.float32 if widened else qdtype

    def to(x: SSAValue, target: torch.dtype) -> SSAValue:
        return _cast(e, x, target)

    if widened:
        q, k = to(q, dtype), to(k, dtype)
    scale = scale if scale is not None else 1.0 / math.sqrt(d)
    k_t = e(AtenTransposeIntOp, self=k, dim0=-2, dim1=-1)
    if flash:
        scores = e(AtenMulScalarOp, self=e(AtenMatmul_Op, self=q, other=k_t), other=scale)
    else:
        q_factor, k_factor = math_attention_factors(scale)
        scores = e(AtenMatmul_Op, self=e(AtenMulScalarOp, self=q, other=q_factor),
                   other=e(AtenMulScalarOp, self=k_t, other=k_factor))
    length, source = shape_of(scores.type)[-2:]
    if is_causal:
        hidden = torch.ones(length, source, dtype=torch.bool).triu(1)
        if flash:
            scores = e(AtenMaskedFillScalarOp, self=scores, mask=e.literal(hidden, "causal_mask"),
                       value=float("-inf"))
        else:
            causal = torch.zeros(length, source, dtype=dtype).masked_fill(hidden, float("-inf"))
            scores = e(AtenAddTensorOp, self=scores, other=e.literal(causal, "causal_mask"), alpha=1)
    if mask is not None:
        if shape_of(mask.type) and str(mask.type.get_element_type()) == "i1":  # pyright: ignore
            # torch adds a boolean mask as 0 / -inf, so a NaN or +inf score it hides stays NaN
            # (masked_fill would hide it as -inf)
            mask = e(AtenWhereScalarOp, condition=mask, self=0.0, other=float("-inf"))
            if dtype != torch.float32:
                mask = to(mask, dtype)
        elif widened and dtype_of(mask.type) != dtype:
            mask = to(mask, dtype)
        scores = e(AtenAddTensorOp, self=scores, other=mask, alpha=1)
    if widened and flash:
        return _flash_tail(e, scores, v, _fully_masked_rows(e, scores), qdtype)
    probs = e(AtenSoftmaxIntOp, self=scores, dim=-1)
    probs = e(AtenMaskedFillScalarOp, self=probs, mask=_fully_masked_rows(e, scores), value=0.0)
    if not widened:
        return e(AtenMatmul_Op, self=probs, other=v)
    return to(e(AtenMatmul_Op, self=probs, other=to(v, dtype)), qdtype)


def _fully_masked_rows(e: Emitter, scores: SSAValue) -> SSAValue:
    """torch's attention takes ``_safe_softmax``: a row whose scores are all -inf (a fully masked
    query) attends to nothing and gives 0, where softmax gives NaN."""
    return e(AtenAllDimOp, self=e(AtenEqScalarOp, self=scores, other=float("-inf")), dim=-1, keepdim=True)


def _flash_tail(e: Emitter, scores: SSAValue, v: SSAValue, masked_rows: SSAValue, qdtype: torch.dtype) -> SSAValue:
    """Eager's CPU flash kernel after its float32 scores, for a bf16 or fp16 ``v``: ``p = exp(s -
    max)`` (the largest is exactly 1), rounded to ``v``'s type for ``p @ v`` (float32 sums), then
    divided by the float32 sum of ``p`` and rounded once.  Normalized probabilities rounded
    instead were 1.5x farther from float64 than eager (bf16, 20 to 600 keys); this form gives
    eager's bits for 98-99.6 % of outputs, the others one ulp apart (its exp is not ours).  A fully
    masked row (max -inf) gives 0, as eager's."""
    f32 = torch.float32
    top = e(AtenAmax_Op, self=scores, dim=[-1], keepdim=True)
    top = e(AtenMaskedFillScalarOp, self=top, mask=masked_rows, value=0.0)
    p = e(AtenExp_Op, self=e(AtenSubTensorOp, self=scores, other=top, alpha=1))
    total = e(AtenSumDimIntListOp, self=p, dim=[-1], keepdim=True, dtype=None)
    out = e(AtenMatmul_Op, self=_cast(e, _cast(e, p, qdtype), f32), other=_cast(e, v, f32))
    out = e(AtenDivTensorOp, self=out, other=total)
    out = e(AtenMaskedFillScalarOp, self=out, mask=masked_rows, value=0.0)
    return _cast(e, out, qdtype)


def _cast(e: Emitter, x: SSAValue, dtype: torch.dtype) -> SSAValue:
    return e(Aten_ToCopy_Op, self=x, dtype=dtype, non_blocking=False)


def multi_head_attention(e: Emitter, query: SSAValue, key: SSAValue, value: SSAValue, embed_dim: int,
                         heads: int, qkv_w: SSAValue, qkv_b: SSAValue, proj_w: SSAValue,
                         proj_b: SSAValue, mask: SSAValue | None) -> SSAValue:
    """PyTorch's native MHA on batch-first ``[B, L, E]`` inputs."""
    if query is key and key is value:
        qkv = e(AtenLinear_Op, input=query, weight=qkv_w, bias=qkv_b)
        q, k, v = e.results(AtenSplitTensorOp, self=qkv, split_size=embed_dim, dim=-1)
    else:
        def project(x: SSAValue, i: int) -> SSAValue:
            w = e(AtenSliceTensorOp, self=qkv_w, dim=0, start=i * embed_dim, end=(i + 1) * embed_dim, step=1)
            b = e(AtenSliceTensorOp, self=qkv_b, dim=0, start=i * embed_dim, end=(i + 1) * embed_dim, step=1)
            return e(AtenLinear_Op, input=x, weight=w, bias=b)

        q, k, v = project(query, 0), project(key, 1), project(value, 2)

    def heads_first(x: SSAValue) -> SSAValue:
        batch, length, _ = shape_of(x.type)
        x = e(AtenReshape_Op, self=x, shape=[batch, length, heads, embed_dim // heads])
        return e(AtenTransposeIntOp, self=x, dim0=1, dim1=2)

    out = attention(e, heads_first(q), heads_first(k), heads_first(v), mask, False, None)
    batch, _, length, _ = shape_of(out.type)
    out = e(AtenReshape_Op, self=e(AtenTransposeIntOp, self=out, dim0=1, dim1=2),
            shape=[batch, length, embed_dim])
    return e(AtenLinear_Op, input=out, weight=proj_w, bias=proj_b)


class DecomposeSDPA(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenScaledDotProductAttention_Op, rewriter: PatternRewriter) -> None:
        if op.dropout_p.value.data or op.enable_gqa_value:
            return
        e = Emitter(op)
        out = attention(e, op.query, op.key, op.value, op.attn_mask, op.is_causal_value, op.scale_value,
                        float32_scores=True)
        rewriter.replace(op, e.ops, [out])
        record(NAME, "scaled_dot_product_attention")


class DecomposeMHA(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Aten_NativeMultiHeadAttention_Op, rewriter: PatternRewriter) -> None:
        if op.results[1].uses or op.mask_type_value is not None or len(shape_of(op.query.type)) != 3:
            return
        e = Emitter(op)
        out = multi_head_attention(e, op.query, op.key, op.value, op.embed_dim.value.data, op.num_head.value.data,
                                   op.qkv_weight, op.qkv_bias, op.proj_weight, op.proj_bias, op.mask)
        rewriter.replace(op, e.ops, [out, None])
        record(NAME, "_native_multi_head_attention")


class DecomposeEncoderLayer(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Aten_TransformerEncoderLayerFwd_Op, rewriter: PatternRewriter) -> None:
        if op.mask is not None or len(shape_of(op.src.type)) != 3:
            return
        e = Emitter(op)
        dim, eps, norm_first = op.embed_dim.value.data, op.eps.value.data, op.norm_first_value

        def norm(x: SSAValue, weight: SSAValue, bias: SSAValue) -> SSAValue:
            return e(AtenLayerNorm_Op, input=x, normalized_shape=[dim], weight=weight, bias=bias, eps=eps,
                     cudnn_enable=True)

        src = op.src
        x = norm(src, op.norm_weight_1, op.norm_bias_1) if norm_first else src
        x = multi_head_attention(e, x, x, x, dim, op.num_heads.value.data, op.qkv_weight, op.qkv_bias,
                                 op.proj_weight, op.proj_bias, None)
        x = e(AtenAddTensorOp, self=x, other=src, alpha=1)
        if not norm_first:
            x = norm(x, op.norm_weight_1, op.norm_bias_1)
        residual = x
        if norm_first:
            x = norm(x, op.norm_weight_2, op.norm_bias_2)
        x = e(AtenLinear_Op, input=x, weight=op.ffn_weight_1, bias=op.ffn_bias_1)
        x = e(AtenGelu_Op, self=x, approximate="none") if op.use_gelu_value else e(AtenRelu_Op, self=x)
        x = e(AtenLinear_Op, input=x, weight=op.ffn_weight_2, bias=op.ffn_bias_2)
        x = e(AtenAddTensorOp, self=x, other=residual, alpha=1)
        if not norm_first:
            x = norm(x, op.norm_weight_2, op.norm_bias_2)
        rewriter.replace(op, e.ops, [x])
        record(NAME, "_transformer_encoder_layer_fwd")


@dataclass(frozen=True)
class DecomposeTorchOpsPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([DecomposeEncoderLayer(), DecomposeMHA(), DecomposeSDPA()])),
        ).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
