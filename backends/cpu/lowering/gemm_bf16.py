"""bf16 GEMMs (``x @ W^T`` and ``a @ B`` with a constant bf16 weight) as ``loop.gemm`` calls of
the bf16 kernels (``backends/cpu/kernels/gemm_bf16.py``): AMX tiles or AVX512-BF16, chosen by
CPU feature (``kernels/amx.py``), products accumulated in float32, the epilogue (bias,
activation, residual) in float32 and the result rounded once to bf16.

A constant weight is packed at compile time into VNNI-2 panels (``kernels/pack_bf16.py``); a
computed right operand (attention's ``K^T`` and ``V``, batched over heads) is packed by the
kernel a panel at a time.  What the kernels cannot take stays in torch, with the reason: a
vector operand, a computed right operand deeper than ``MAX_RUNTIME_K``, a host without
AMX-BF16 or AVX512-BF16, an ISA other than AVX-512.  Convolutions on the same kernels are in
``conv_bf16.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.bf16_specials import specials_of
from ziggurat.backends.cpu.kernels.bf16_tables import has_table
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import MAX_RUNTIME_K
from ziggurat.backends.cpu.kernels.pack_bf16 import LAYOUT, pack_b_bf16
from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.constants import weight_tensor
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.gemm_operands import float32_bias, matrix_view, residual_operand
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.ops import cast
from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.tensors import BufferValue, TensorValue
from ziggurat.backends.cpu.lowering.views import reshape, slice_dim
from ziggurat.dialects.torch.op_registry import op_key
from ziggurat.ir.types import dtype_of

BF16 = torch.bfloat16


def all_bf16(args: LoweringArgs) -> str | None:
    """None when every tensor operand and result of the op is bf16."""
    for v in (*args.op.operands, *args.op.results):
        if isinstance(v.type, TensorType) and dtype_of(v.type) != BF16:
            return f"a bf16 GEMM takes bf16 operands only, got {dtype_of(v.type)}"
    return None


def bf16_row_stride(kernel: str, elements: int) -> int:
    """Elements between the starts of two bf16 rows of ``elements`` that ``kernel`` reads as A:
    for AMX, the stride its tile loads read best (:func:`~ziggurat.backends.cpu.kernels.amx.tile_row_stride`),
    else the row's own length."""
    return amx.tile_row_stride(2 * elements) // 2 if kernel == "amx" else elements


def bf16_kernel(ctx: LoweringContext) -> str:
    """The host's bf16 GEMM kernel, or NotLowerable naming what is missing."""
    if ctx.options.isa != Isa.AVX512:
        raise NotLowerable(f"bf16 GEMMs need the avx512 ISA (compiling for {ctx.options.isa.value})")
    kernel = amx.bf16_kernel_for(ctx.options.isa.value)
    if kernel is None:
        raise NotLowerable("this CPU has neither AMX-BF16 nor AVX512-BF16 for a bf16 GEMM")
    return kernel


def bf16_linear(ctx: LoweringContext, x: TensorValue, w: TensorValue, n: int, out_shape: Sequence[int],
                epilogue: Any) -> TensorValue:
    """``x @ W^T``: a constant bf16 ``W[N, K]`` is prepacked; a computed one is read as the
    transposed right operand of a run-time product."""
    weight = constant_bf16(w, "linear")
    if weight is None:
        from ziggurat.backends.cpu.lowering.views import permute

        if w.rank != 2 or x.rank < 2:
            raise NotLowerable("a bf16 linear of a vector or with a weight that is not 2-D")
        return bf16_matmul(ctx, x, permute(ctx, w, (1, 0)), out_shape, epilogue)
    if weight.dim() != 2:
        raise NotLowerable("a bf16 linear needs a 2-D weight")
    return prepacked_gemm(ctx, x, weight.t(), n, out_shape, epilogue, w, 1.0, None, 1.0)


def bf16_matmul(ctx: LoweringContext, a: TensorValue, b: TensorValue, out_shape: Sequence[int], epilogue: Any,
                scale: float = 1.0, addend: TensorValue | None = None, beta: float = 1.0,
                out_dtype: torch.dtype = BF16) -> TensorValue:
    """``scale * (a @ b) + beta * addend`` then the epilogue: a constant 2-D ``b`` is prepacked
    (``a``'s batch dims fold into rows); a computed one is packed by the kernel as it runs.
    ``out_dtype`` float32: the float32 result is stored as it is (not rounded to bf16)."""
    weight = constant_bf16(b, "matmul")
    if weight is not None and weight.dim() == 2:
        return prepacked_gemm(ctx, a, weight, weight.shape[1], out_shape, epilogue, b, scale, addend, beta, out_dtype)
    if a.rank < 2 or b.rank < 2:
        raise NotLowerable("a bf16 matmul of a vector")
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch = tuple(torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    if min(m, n, k, math.prod(batch)) < 1:
        raise NotLowerable("a bf16 GEMM with an empty dimension")
    if k > MAX_RUNTIME_K:
        raise NotLowerable(f"a bf16 matmul of a computed right operand with K={k} > {MAX_RUNTIME_K}")
    kernel = bf16_kernel(ctx)
    av = matrix_view(ctx, a, batch, allow_transposed=False)
    bv = matrix_view(ctx, b, batch, allow_transposed=True)
    nbatch = math.prod(batch)
    spec: dict[str, Any] = {"bf16_kernel": kernel, "m": m, "n": n, "k": k, "lda": av.row_stride, "ldc": n,
                            "b_packed": False, "b_transposed": bv.transposed, "ldb": bv.ld}
    if nbatch > 1:
        spec.update(batch=nbatch, batch_stride_a=av.batch_stride, batch_stride_b=bv.batch_stride,
                    batch_stride_c=m * n)
    return bf16_gemm_node(ctx, kernel, spec, av.operand, bv.operand, batch, m, n, out_shape, epilogue, scale, addend, beta,
                          out_dtype=out_dtype)


def constant_bf16(w: TensorValue, what: str) -> torch.Tensor | None:
    tensor = weight_tensor(w)
    if tensor is None:
        return None
    if tensor.dtype != BF16:
        raise NotLowerable(f"a bf16 {what} needs a bf16 weight, got {tensor.dtype}")
    return tensor


def prepacked_gemm(ctx: LoweringContext, x: TensorValue, b: torch.Tensor, n: int, out_shape: Sequence[int],
               epi: Any, w: TensorValue, scale: float, addend: TensorValue | None, beta: float,
               out_dtype: torch.dtype = BF16) -> TensorValue:
    k = x.shape[-1]
    m = x.numel // k if k else math.prod(x.shape[:-1])
    if min(m, n, k) < 1:
        raise NotLowerable("a bf16 GEMM with an empty dimension")
    if tuple(b.shape) != (k, n):
        raise NotLowerable(f"bf16 GEMM operands do not match: [{m}, {k}] @ {list(b.shape)}")
    kernel = bf16_kernel(ctx)
    a = reshape(ctx, x, (m, k)) if x.rank != 2 else x
    # A realized here (a kernel's output) is stored in rows the AMX tile loads read best
    av = matrix_view(ctx, a, (), allow_transposed=False, padded_row=bf16_row_stride(kernel, k))
    hint = (w.buffer.name if w.buffer is not None else "weight") + f"_{LAYOUT}"
    packed = ctx.constant(pack_b_bf16(b), hint)
    spec: dict[str, Any] = {"bf16_kernel": kernel, "m": m, "n": n, "k": k, "lda": av.row_stride, "ldc": n,
                            "b_specials": specials_of(b)}
    return bf16_gemm_node(ctx, kernel, spec, av.operand, GemmOperand(packed), (), m, n, out_shape, epi, scale, addend, beta,
                          out_dtype=out_dtype)


def bf16_gemm_node(ctx: LoweringContext, kernel: str, spec: dict[str, Any], a: GemmOperand, b: GemmOperand,
          batch: Sequence[int], m: int, n: int, out_shape: Sequence[int], epi: Any, scale: float,
          addend: TensorValue | None, beta: float,
          other_view: tuple[GemmOperand, int, int, int] | None = None, out_dtype: torch.dtype = BF16) -> TensorValue:
    """``other_view``: the residual already laid out as ``(operand, row, column, batch strides)``
    (a convolution's, in its padded-width layout), instead of ``epi.other`` read by :func:`residual_operand`."""
    if scale != 1.0:
        spec["scale"] = float(scale)
    bias_operand: GemmOperand | None = None
    if epi.bias is not None:
        bias_operand = GemmOperand(float32_bias(ctx, epi.bias, n, "bf16"))
    if epi.unary is not None:
        spec["unary"] = epi.unary
        params = {k_: v for k_, v in epi.unary_params.items() if v is not None}
        if params:
            spec["unary_params"] = params
    other, kind, alpha, first = epi.other, epi.binary, float(epi.alpha), bool(epi.binary_first)
    if addend is not None:  # baddbmm's beta * input, before the post-ops
        if kind is not None and other is not None:
            raise NotLowerable("a bf16 matmul with both a bias matrix and a residual")
        other, kind, alpha, first = addend, "add", float(beta), epi.unary is not None
    other_operand: GemmOperand | None = None
    if kind is not None and (other is not None or other_view is not None):
        if other_view is not None:
            other_operand, rs, cs, bstride = other_view
        else:
            assert other is not None
            other_operand, rs, cs, bstride = residual_operand(ctx, other, batch, m, n, out_shape, "bf16", (BF16, torch.float32))
        spec.update(binary=kind, alpha=alpha, other_strides=(rs, cs), other_bf16=other_operand.buffer.dtype == BF16)
        if bstride and math.prod(batch) > 1:
            spec["other_batch_stride"] = bstride
        if first:
            spec["binary_first"] = True
    if out_dtype != BF16:
        spec["out_bf16"] = False
    elif addend is None:  # eager rounds each bf16 op's result (an addend is part of the product: addmm)
        spec["rounded_steps"] = True
        if kernel == "amx" and has_table(spec.get("unary")):
            spec["unary_table"] = True  # eager's own answers, looked up (kernels/bf16_tables.py: where)
    wide = _tile_row_width(ctx, kernel, spec, n, out_shape, out_dtype)
    out = ctx.new_buffer((*out_shape[:-1], wide) if wide else out_shape, out_dtype, "mm")
    if wide:
        spec["ldc"] = wide
    ctx.nodes.append(GemmNode(ctx.unique_name(f"gemm_{ctx.current_origin or 'mm'}"), a, b, GemmOperand(out),
                              bias_operand, other_operand, spec, (ctx.current_origin,)))
    if wide:
        return slice_dim(ctx, BufferValue(out), -1, 0, 1, n)
    return BufferValue(out)


def widened_result(ctx: LoweringContext, args: LoweringArgs, x: TensorValue) -> TensorValue | None:
    """A float32 cast of a bf16 GEMM's result that nothing else reads (GPT-2's logits): the GEMM
    stores its bf16-rounded result as float32 itself (``round_out``), the same values, and
    the cast is that buffer: a pass over the result fewer, and no bf16 copy of it.  None where
    the cast is not that (it is then an element-wise kernel)."""
    if args.out_dtype != torch.float32 or x.dtype != BF16 or not isinstance(x, BufferValue) or not ctx.nodes \
            or tuple(x.shape) != tuple(args.out_shape):
        return None
    from ziggurat.backends.cpu.lowering.driver import BF16_GEMMS

    operand = args.op.operands[0]
    node = ctx.nodes[-1]
    # the GEMM's own result, read by this cast alone: a view lowered to the same value (a full
    # narrow, a one-piece split) would hide the GEMM's other readers, which read its buffer
    if not isinstance(operand.owner, Operation) or op_key(operand.owner) not in BF16_GEMMS:
        return None
    if len(list(operand.uses)) != 1 or not isinstance(node, GemmNode) or node.c.buffer is not x.buffer \
            or node.c.offset != 0 or "bf16_kernel" not in node.spec or node.spec.get("out_bf16", True) is not True:
        return None
    out = ctx.new_buffer(x.shape, torch.float32, "mm")
    node.c = GemmOperand(out)
    node.spec["out_bf16"] = False
    node.spec["round_out"] = True
    return BufferValue(out)


def _tile_row_width(ctx: LoweringContext, kernel: str, spec: dict[str, Any], n: int, out_shape: Sequence[int],
                    out_dtype: torch.dtype) -> int | None:
    """The wider row (elements) to store a GEMM's ``[..., n]`` bf16 result in, where it is only
    the input of AMX linears, which then read it at the stride their tile loads read best
    (:func:`bf16_row_stride`); None: its own width."""
    if kernel != "amx" or out_dtype != BF16 or "batch" in spec or spec.get("ldc") != n:
        return None
    if not out_shape or out_shape[-1] != n:
        return None
    stride = bf16_row_stride(kernel, n)
    op = ctx.current_op
    if stride == n or op is None or len(op.results) != 1:
        return None
    uses = list(op.results[0].uses)
    if not uses or any(use.operation.name != "fused.linear" or use.index != 0 for use in uses):
        return None
    return stride
