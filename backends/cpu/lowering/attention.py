"""``scaled_dot_product_attention``: a batched GEMM for the scores (scale and mask fused into
the softmax kernel, one kernel per row), then a batched GEMM with the values.  As torch's,
the masks are added to the scores (0 / -inf; the causal mask of the shapes eager's flash
kernel takes replaces them instead; the other shapes scale q and k before their product, as
eager's math path does) and the softmax is ``_safe_softmax`` (a fully masked row
gives 0)."""

from __future__ import annotations

import math

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.linalg import matmul
from ziggurat.backends.cpu.lowering.normalization import safe_softmax
from ziggurat.backends.cpu.lowering.ops import add, cast, compare, const, index, mul, where
from ziggurat.backends.cpu.lowering.pointwise import broadcast_index, pointwise
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import transpose
from ziggurat.passes.decompose_torch_ops import eager_flash_attention, math_attention_factors

F32 = torch.float32


@lowering("aten::scaled_dot_product_attention")
def sdpa(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    q, k, v = args.tensor("query"), args.tensor("key"), args.tensor("value")
    if any(t.dtype != F32 for t in (q, k, v)):
        raise NotLowerable("attention computes float32 only")
    if float(args.static("dropout_p", 0.0)) != 0.0:
        raise NotLowerable("attention dropout is random")
    if bool(args.static("enable_gqa", False)):
        raise NotLowerable("grouped-query attention")
    mask = args.optional_tensor("attn_mask")
    causal = bool(args.static("is_causal", False))
    e = q.shape[-1]
    scale = args.static("scale")
    scale = 1.0 / math.sqrt(e) if scale is None else float(scale)
    s_shape = (*q.shape[:-1], k.shape[-2])
    flash = eager_flash_attention(q.shape, k.shape, v.shape)
    k_t = transpose(ctx, k, -2, -1)
    if not flash:  # eager's math path scales q and k before their product
        q_factor, k_factor = math_attention_factors(scale)
        q = pointwise(ctx, [q], q.shape, F32, lambda x: mul(x, q_factor, F32))
        k_t = pointwise(ctx, [k_t], k_t.shape, F32, lambda x: mul(x, k_factor, F32))
    scores = matmul(ctx, q, k_t, s_shape)

    def masked(idx: Index) -> Value:
        s = mul(scores.load(idx), scale, F32) if flash else scores.load(idx)
        if causal:
            keep = compare("le", index(IndexExpr.of(idx[-1])), index(IndexExpr.of(idx[-2])))
            hide = const(-math.inf, F32)
            s = where(keep, s, hide, F32) if flash else add(s, where(keep, const(0.0, F32), hide, F32), F32)
        if mask is not None:
            m = mask.load(broadcast_index(idx, mask.shape, s_shape))
            if mask.dtype == torch.bool:
                # added as 0 / -inf as torch does: a NaN or +inf score it hides stays NaN
                m = where(m, const(0.0, F32), const(-math.inf, F32), F32)
            s = add(s, cast(m, F32), F32)
        return s

    logits = ctx.lazy(s_shape, F32, masked, [scores])
    probs = safe_softmax(ctx, logits, -1, F32)
    return matmul(ctx, probs, v, args.out_shape)
