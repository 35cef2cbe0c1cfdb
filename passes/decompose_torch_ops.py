"""``decompose-torch-ops``: big fused torch ops -> their parts, so they reach the GEMM kernels.

* ``aten::_transformer_encoder_layer_fwd`` (what ``nn.TransformerEncoderLayer`` traces to in
  eval mode) -> layer norms, multi-head attention, residual adds, and the feed-forward net;
* ``aten::_native_multi_head_attention`` (``nn.MultiheadAttention``) -> q/k/v projections,
  per-head attention, output projection (when the attention weights are not used);
* ``aten::scaled_dot_product_attention`` -> ``matmul(q, k^T) * scale (+ mask) -> softmax
  (0 on rows masked entirely, as torch's ``_safe_softmax``) -> matmul(., v)`` (no dropout);
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
from ziggurat.ir.rewriting import StaticShapesOnly, aten, build_aten_inferred, new_literal
from ziggurat.ir.statistics import record
from ziggurat.ir.types import shape_of

NAME = "decompose-torch-ops"


@dataclass
class Emitter:
    """Collects the ops of a decomposition, located at the op they replace."""

    origin: Operation
    ops: list[Operation] = field(default_factory=list)

    def __call__(self, key: str, /, **args: Any) -> SSAValue:
        op = build_aten_inferred(key, args)
        op.location = self.origin.location
        self.ops.append(op)
        return op.results[0]

    def results(self, key: str, /, **args: Any) -> list[SSAValue]:
        op = build_aten_inferred(key, args)
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


def attention(e: Emitter, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None,
              is_causal: bool, scale: float | None) -> SSAValue:
    """softmax(q @ k^T * scale + mask) @ v on ``[..., L, D]`` operands."""
    d = shape_of(q.type)[-1]
    scores = e("aten::matmul", self=q, other=e("aten::transpose.int", self=k, dim0=-2, dim1=-1))
    scores = e("aten::mul.Scalar", self=scores, other=scale if scale is not None else 1.0 / math.sqrt(d))
    length, source = shape_of(scores.type)[-2:]
    if is_causal:
        hidden = torch.ones(length, source, dtype=torch.bool).triu(1)
        if eager_flash_attention(shape_of(q.type), shape_of(k.type), shape_of(v.type)):
            scores = e("aten::masked_fill.Scalar", self=scores, mask=e.literal(hidden, "causal_mask"),
                       value=float("-inf"))
        else:
            causal = torch.zeros(length, source).masked_fill(hidden, float("-inf"))
            scores = e("aten::add.Tensor", self=scores, other=e.literal(causal, "causal_mask"), alpha=1)
    if mask is not None:
        if shape_of(mask.type) and str(mask.type.get_element_type()) == "i1":  # pyright: ignore
            # torch adds a boolean mask as 0 / -inf, so a NaN or +inf score it hides stays NaN
            # (masked_fill would hide it as -inf)
            mask = e("aten::where.Scalar", condition=mask, self=0.0, other=float("-inf"))
        scores = e("aten::add.Tensor", self=scores, other=mask, alpha=1)
    probs = e("aten::softmax.int", self=scores, dim=-1)
    # torch's attention takes ``_safe_softmax``: a row whose scores are all -inf (a fully masked
    # query) attends to nothing and gives 0, where softmax gives NaN
    masked_rows = e("aten::all.dim", self=e("aten::eq.Scalar", self=scores, other=float("-inf")), dim=-1,
                    keepdim=True)
    probs = e("aten::masked_fill.Scalar", self=probs, mask=masked_rows, value=0.0)
    return e("aten::matmul", self=probs, other=v)


def multi_head_attention(e: Emitter, query: SSAValue, key: SSAValue, value: SSAValue, embed_dim: int,
                         heads: int, qkv_w: SSAValue, qkv_b: SSAValue, proj_w: SSAValue,
                         proj_b: SSAValue, mask: SSAValue | None) -> SSAValue:
    """PyTorch's native MHA on batch-first ``[B, L, E]`` inputs."""
    if query is key and key is value:
        qkv = e("aten::linear", input=query, weight=qkv_w, bias=qkv_b)
        q, k, v = e.results("aten::split.Tensor", self=qkv, split_size=embed_dim, dim=-1)
    else:
        def project(x: SSAValue, i: int) -> SSAValue:
            w = e("aten::slice.Tensor", self=qkv_w, dim=0, start=i * embed_dim, end=(i + 1) * embed_dim, step=1)
            b = e("aten::slice.Tensor", self=qkv_b, dim=0, start=i * embed_dim, end=(i + 1) * embed_dim, step=1)
            return e("aten::linear", input=x, weight=w, bias=b)

        q, k, v = project(query, 0), project(key, 1), project(value, 2)

    def heads_first(x: SSAValue) -> SSAValue:
        batch, length, _ = shape_of(x.type)
        x = e("aten::reshape", self=x, shape=[batch, length, heads, embed_dim // heads])
        return e("aten::transpose.int", self=x, dim0=1, dim1=2)

    out = attention(e, heads_first(q), heads_first(k), heads_first(v), mask, False, None)
    batch, _, length, _ = shape_of(out.type)
    out = e("aten::reshape", self=e("aten::transpose.int", self=out, dim0=1, dim1=2),
            shape=[batch, length, embed_dim])
    return e("aten::linear", input=out, weight=proj_w, bias=proj_b)


class DecomposeSDPA(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if not aten(op, "scaled_dot_product_attention"):
            return
        a = op.arguments()
        if a["dropout_p"] or a.get("enable_gqa"):
            return
        e = Emitter(op)
        out = attention(e, a["query"], a["key"], a["value"], a["attn_mask"], bool(a["is_causal"]), a["scale"])
        rewriter.replace(op, e.ops, [out])
        record(NAME, "scaled_dot_product_attention")


class DecomposeMHA(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if not aten(op, "_native_multi_head_attention") or op.results[1].uses:
            return
        a = op.arguments()
        if a["mask_type"] is not None or len(shape_of(a["query"].type)) != 3:
            return
        e = Emitter(op)
        out = multi_head_attention(e, a["query"], a["key"], a["value"], a["embed_dim"], a["num_head"],
                                   a["qkv_weight"], a["qkv_bias"], a["proj_weight"], a["proj_bias"], a["mask"])
        rewriter.replace(op, e.ops, [out, None])
        record(NAME, "_native_multi_head_attention")


class DecomposeEncoderLayer(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if not aten(op, "_transformer_encoder_layer_fwd"):
            return
        a = op.arguments()
        if a["mask"] is not None or len(shape_of(a["src"].type)) != 3:
            return
        e = Emitter(op)
        dim, eps = a["embed_dim"], a["eps"]

        def norm(x: SSAValue, i: int) -> SSAValue:
            return e("aten::layer_norm", input=x, normalized_shape=[dim], weight=a[f"norm_weight_{i}"],
                     bias=a[f"norm_bias_{i}"], eps=eps, cudnn_enable=True)

        src = a["src"]
        x = norm(src, 1) if a["norm_first"] else src
        x = multi_head_attention(e, x, x, x, dim, a["num_heads"], a["qkv_weight"], a["qkv_bias"],
                                 a["proj_weight"], a["proj_bias"], None)
        x = e("aten::add.Tensor", self=x, other=src, alpha=1)
        if not a["norm_first"]:
            x = norm(x, 1)
        residual = x
        if a["norm_first"]:
            x = norm(x, 2)
        x = e("aten::linear", input=x, weight=a["ffn_weight_1"], bias=a["ffn_bias_1"])
        x = e("aten::gelu", self=x, approximate="none") if a["use_gelu"] else e("aten::relu", self=x)
        x = e("aten::linear", input=x, weight=a["ffn_weight_2"], bias=a["ffn_bias_2"])
        x = e("aten::add.Tensor", self=x, other=residual, alpha=1)
        if not a["norm_first"]:
            x = norm(x, 2)
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
