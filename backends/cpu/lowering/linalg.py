"""GEMM-shaped ops as ``loop.gemm`` library calls (``backends/cpu/kernels/gemm.py``).

linear / matmul / mm / bmm / addmm / baddbmm / mv / dot and the ``fused.linear`` /
``fused.matmul`` ops of the graph level (with their post-ops as the GEMM epilogue).
Constant weights are prepacked into the kernel's ``KN{nr}n`` panels at compile time
(``convert-torch-to-loop{prepack=true}``), or used as the backend's ``prepack-weights`` pass
packed them; activations are passed as strided views when the kernel can read them
(transposes, slices, broadcast batches), else realized.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ziggurat.backends.cpu.kernels.tiles import choose_nr
from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.constants import weight_tensor
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.gemm_operands import MatrixView, expand_batch, matrix_view, residual_view
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.ops import add, mul
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import BufferValue, TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Buffer, Value
from ziggurat.backends.cpu.lowering.views import permute, reshape
from ziggurat.dialects.fused import MatmulOp
from ziggurat.dialects.fused.pack import pack_gemm_b, pack_linear_weight


def all_float32(args: LoweringArgs) -> str | None:
    for v in (*args.op.operands, *args.op.results):
        from xdsl.dialects.builtin import TensorType

        from ziggurat.ir.types import dtype_of

        if isinstance(v.type, TensorType) and dtype_of(v.type) != torch.float32:
            return f"the GEMM kernels take float32 only, got {dtype_of(v.type)}"
    return None


def float32_or_bf16(args: LoweringArgs) -> str | None:
    """The f32 GEMM kernels' operands, or the bf16 kernels' (``lowering/gemm_bf16.py``)."""
    reason = all_float32(args)
    if reason is None:
        return None
    from ziggurat.backends.cpu.lowering.gemm_bf16 import all_bf16

    op = args.op
    if all_bf16(args) is None or (isinstance(op, MatmulOp) and op.bf16_products_in_float32()):
        return None  # bf16 throughout, or bf16 products out in float32
    return reason + " (or bf16 throughout)"


@dataclass(frozen=True)
class PackedB:
    """A constant right operand already in ``KN{nr}n`` panels: ``[batch?, panels, K, nr]``."""

    buffer: Buffer
    nr: int
    offset: int = 0


@dataclass
class Epilogue:
    bias: TensorValue | None = None
    unary: str | None = None
    unary_params: dict[str, float | None] = field(default_factory=dict[str, float | None])
    binary: str | None = None
    alpha: float = 1.0
    other: TensorValue | None = None
    binary_first: bool = False
    #: ``#fused.requantize`` (scale, zero_point, quant_min, quant_max): only the int8 and the
    #: native depthwise kernels take it (``lowering/fused_ops.py`` sends any other op with it to torch)
    requantize: tuple[float, int, int, int] | None = None
    #: ``#fused.quantize``: the int8 or depthwise kernel stores the quantized integers (uint8)
    store_u8: bool = False
    #: ``(scale, zero_point)`` of a ``ui8`` input (its quantized integers)
    input_quantization: tuple[float, int] | None = None

    def apply(self, y: Value, other: Value | None) -> Value:
        """The post-ops (activation, residual) on one element, when they are not in a GEMM epilogue."""
        from ziggurat.backends.cpu.lowering.ops import const, unary

        def unary_post(v: Value) -> Value:
            if self.unary is None:
                return v
            params = {k: p for k, p in self.unary_params.items() if p is not None}
            if self.unary == "clamp":
                if params.get("min") is not None:
                    v = Binary("max", v, const(params["min"], torch.float32))
                if params.get("max") is not None:
                    v = Binary("min", v, const(params["max"], torch.float32))
                return v
            return unary(self.unary, v, None, **params)

        def binary_post(v: Value) -> Value:
            if self.binary is None or other is None:
                return v
            o = mul(other, self.alpha, torch.float32) if self.alpha != 1 else other
            return Binary("add" if self.binary == "add" else "sub", v, o)

        if self.binary_first:
            return unary_post(binary_post(y))
        return binary_post(unary_post(y))


def gemm(ctx: LoweringContext, a: TensorValue, b: TensorValue | PackedB, batch: Sequence[int], m: int, n: int,
         k: int, out_shape: Sequence[int], epilogue: Epilogue | None = None) -> TensorValue:
    """``out = epilogue(A @ B)`` with ``A: [*batch, m, k]`` and ``B: [*batch, k, n]`` (both broadcast
    over ``batch``); ``out`` is a contiguous buffer of ``out_shape`` (``prod == batch*m*n``)."""
    epi = epilogue or Epilogue()
    nbatch = math.prod(batch) if batch else 1
    if min(m, n, k, nbatch) < 1:
        return _empty_product(ctx, out_shape, n, epi)
    av = matrix_view(ctx, a, batch, allow_transposed=False)
    spec: dict[str, Any] = {"m": m, "n": n, "k": k, "lda": av.row_stride, "ldc": n}
    if nbatch > 1:
        spec["batch"] = nbatch
        spec["batch_stride_a"] = av.batch_stride
        spec["batch_stride_c"] = m * n
    if isinstance(b, PackedB):
        b_operand = GemmOperand(b.buffer, b.offset)
        spec["b_packed"] = True
        spec["nr"] = b.nr
        if nbatch > 1:
            spec["batch_stride_b"] = 0
    else:
        bv = matrix_view(ctx, b, batch, allow_transposed=True)
        b_operand = bv.operand
        spec["b_packed"] = False
        spec["b_transposed"] = bv.transposed
        spec["ldb"] = bv.ld
        if nbatch > 1:
            spec["batch_stride_b"] = bv.batch_stride
    out = ctx.new_buffer(out_shape, torch.float32, "mm")
    bias_operand: GemmOperand | None = None
    if epi.bias is not None:
        bias_operand = GemmOperand(ctx.realize(_as_vector(ctx, epi.bias, n), "bias"))
    other_operand: GemmOperand | None = None
    if epi.unary is not None:
        spec["unary"] = epi.unary
        params = {k_: v for k_, v in epi.unary_params.items() if v is not None}
        if params:
            spec["unary_params"] = params
    if epi.binary is not None and epi.other is not None:
        ov = residual_view(ctx, epi.other, batch, m, n, out_shape)
        other_operand = ov.operand
        spec["binary"] = epi.binary
        spec["alpha"] = float(epi.alpha)
        spec["other_strides"] = (ov.row_stride, ov.col_stride)
        if nbatch > 1 and ov.batch_stride:
            spec["other_batch_stride"] = ov.batch_stride
        if epi.binary_first:
            spec["binary_first"] = True
    ctx.nodes.append(GemmNode(ctx.unique_name(f"gemm_{ctx.current_origin or 'mm'}"), av.operand, b_operand,
                              GemmOperand(out), bias_operand, other_operand, spec, (ctx.current_origin,)))
    return BufferValue(out)


def _empty_product(ctx: LoweringContext, out_shape: Sequence[int], n: int, epi: Epilogue) -> TensorValue:
    """A product with an empty dimension: zeros (K = 0) plus the epilogue, or an empty tensor."""
    from ziggurat.backends.cpu.lowering.ops import cast, const
    from ziggurat.backends.cpu.lowering.pointwise import broadcast_index

    f32 = torch.float32
    shape = tuple(out_shape)

    def element(idx):  # type: ignore[no-untyped-def]
        v = const(0.0, f32)
        if epi.bias is not None:
            v = cast(epi.bias.load(broadcast_index(idx, epi.bias.shape, shape)), f32)
        o = epi.other
        ov = cast(o.load(broadcast_index(idx, o.shape, shape)), f32) if o is not None else None
        return epi.apply(v, ov)

    del n
    return ctx.lazy(shape, f32, element, [])


def _as_vector(ctx: LoweringContext, bias: TensorValue, n: int) -> TensorValue:
    if bias.shape == (n,):
        return bias
    if bias.numel == n:
        return reshape(ctx, bias, (n,))
    return expand_to_vector(ctx, bias, n)


def expand_to_vector(ctx: LoweringContext, bias: TensorValue, n: int) -> TensorValue:
    from ziggurat.backends.cpu.lowering.views import expand

    flat = reshape(ctx, bias, (bias.numel,)) if bias.rank != 1 else bias
    return expand(ctx, flat, (n,))


def packed_weight(ctx: LoweringContext, w: TensorValue, transpose: bool) -> PackedB | None:
    """Constant ``W`` ([N, K] for linear when ``transpose``, else [K, N]) prepacked at compile time."""
    if not ctx.options.prepack:
        return None
    tensor = weight_tensor(w)
    if tensor is None or tensor.dim() != 2 or tensor.dtype != torch.float32:
        return None
    nr = choose_nr(ctx.options.isa)
    packed = pack_linear_weight(tensor, nr) if transpose else pack_gemm_b(tensor, nr)
    return PackedB(ctx.constant(packed, (w.buffer.name if w.buffer else "weight") + f"_KN{nr}n"), nr)


def linear(ctx: LoweringContext, x: TensorValue, w: TensorValue | PackedB, n: int, out_shape: Sequence[int],
           epilogue: Epilogue) -> TensorValue:
    """``x @ W^T``: ``w`` is ``W[N, K]`` (or already packed as B = W^T)."""
    if x.dtype == torch.bfloat16:
        from ziggurat.backends.cpu.lowering.gemm_bf16 import bf16_linear

        if isinstance(w, PackedB):
            raise NotLowerable("a bf16 linear with a weight packed for the float32 kernels")
        return bf16_linear(ctx, x, w, n, out_shape, epilogue)
    k = x.shape[-1]
    m = x.numel // k if k else math.prod(x.shape[:-1])
    if m == 0 or k == 0:
        return gemm(ctx, x, x, (), m, n, k, out_shape, epilogue)
    a = reshape(ctx, x, (m, k))
    if isinstance(w, PackedB):
        b: TensorValue | PackedB = w
    else:
        b = packed_weight(ctx, w, transpose=True) or permute(ctx, w, (1, 0))
    return gemm(ctx, a, b, (), m, n, k, out_shape, epilogue)


@lowering("aten::linear", validator=float32_or_bf16)
def linear_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, w = args.tensor("input"), args.tensor("weight")
    if w.rank != 2:
        raise NotLowerable("linear weight must be 2-D")
    return linear(ctx, x, w, w.shape[0], args.out_shape, Epilogue(bias=args.optional_tensor("bias")))


def matmul(ctx: LoweringContext, a: TensorValue, b: TensorValue | PackedB, out_shape: Sequence[int],
           epilogue: Epilogue | None = None, b_shape: Sequence[int] | None = None) -> TensorValue:
    """torch.matmul semantics (1-D operands promoted, batch dims broadcast)."""
    if a.dtype == torch.bfloat16:
        from ziggurat.backends.cpu.lowering.gemm_bf16 import bf16_matmul

        if isinstance(b, PackedB) or a.rank < 2:
            raise NotLowerable("a bf16 matmul takes a matrix (or batch of matrices) and an unpacked constant")
        return bf16_matmul(ctx, a, b, out_shape, epilogue or Epilogue())
    bshape = tuple(b_shape) if b_shape is not None else b.shape  # type: ignore[union-attr]
    a2 = reshape(ctx, a, (1, a.shape[0])) if a.rank == 1 else a
    if isinstance(b, PackedB):
        b2: TensorValue | PackedB = b
        bshape2 = bshape
    else:
        b2 = reshape(ctx, b, (b.shape[0], 1)) if b.rank == 1 else b
        bshape2 = b2.shape
    m, k = a2.shape[-2:]
    n = bshape2[-1]
    batch = tuple(torch.broadcast_shapes(a2.shape[:-2], tuple(bshape2[:-2])))
    if isinstance(b2, PackedB) and len(bshape2) > 2:
        raise NotLowerable("a packed right operand must be 2-D")
    if not batch and a2.rank == 2:
        pass
    elif isinstance(b2, PackedB) or (not isinstance(b2, PackedB) and b2.rank == 2):
        # [.., m, k] @ [k, n]: fold the batch into the rows when A's view allows it
        rows = math.prod(batch) * m
        a_full = expand_batch(ctx, a2, batch)
        a2 = reshape(ctx, a_full, (rows, k))
        m, batch = rows, ()
    out_buf = gemm(ctx, a2, b2, batch, m, n, k, out_shape, epilogue)
    return out_buf


@lowering("aten::matmul", "aten::mm", "aten::bmm", "aten::mv", "aten::dot", "aten::vdot", "aten::inner",
          validator=float32_or_bf16)
def matmul_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    a = args.tensor("self")
    b = args.tensor("other") if args.has("other") else (args.tensor("mat2") if args.has("mat2") else
                                                         args.tensor("vec") if args.has("vec") else args.tensor("tensor"))
    if args.name == "inner":
        if b.rank > 1:
            b = permute(ctx, b, list(range(b.rank - 2)) + [b.rank - 1, b.rank - 2]) if b.rank == 2 else b
            if b.rank > 2:
                raise NotLowerable("inner of tensors above rank 2")
    if a.rank == 0 or b.rank == 0:
        raise NotLowerable("matmul of a 0-d tensor")
    return matmul(ctx, a, b, args.out_shape)


@lowering("aten::addmm", "aten::baddbmm", "aten::addmv", "aten::addbmm", validator=all_float32)
def addmm_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    inp = args.tensor("self")
    a = args.tensor("mat1") if args.has("mat1") else (args.tensor("batch1") if args.has("batch1") else args.tensor("mat"))
    b = args.tensor("mat2") if args.has("mat2") else (args.tensor("batch2") if args.has("batch2") else args.tensor("vec"))
    beta = float(args.static("beta", 1))
    alpha = float(args.static("alpha", 1))
    if alpha == 0:
        # torch skips the product (an inf or NaN in the matrices does not reach the result) on
        # some of these ops and sizes and not on others: torch's answer is the only one
        raise NotLowerable(f"{args.name} with alpha = 0: whether an inf/NaN of the matrices reaches the result "
                           "depends on torch's kernel")
    out_shape = args.out_shape
    if args.name == "addbmm":
        prod = _sum_batches(ctx, a, b)
    else:
        prod = matmul(ctx, a, b, out_shape)
    return pointwise(ctx, [inp, prod], out_shape, torch.float32,
                     lambda i, p: add(mul(i, beta, torch.float32) if beta != 1 else i,
                                      mul(p, alpha, torch.float32) if alpha != 1 else p, torch.float32)
                     if beta != 0 else (mul(p, alpha, torch.float32) if alpha != 1 else p))


def _sum_batches(ctx: LoweringContext, a: TensorValue, b: TensorValue) -> TensorValue:
    """``sum_b A[b] @ B[b]`` = ``[M, B*K] @ [B*K, N]``."""
    nb, m, k = a.shape
    n = b.shape[-1]
    a2 = reshape(ctx, permute(ctx, a, (1, 0, 2)), (m, nb * k))
    b2 = reshape(ctx, b, (nb * k, n))
    return gemm(ctx, a2, b2, (), m, n, nb * k, (m, n))


__all__ = ["Epilogue", "PackedB", "all_float32", "gemm", "linear", "matmul", "packed_weight"]
