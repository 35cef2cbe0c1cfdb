"""bf16 GEMMs (``x @ W^T`` and ``a @ B`` with a constant bf16 weight) as ``loop.gemm`` calls of
the bf16 kernels (``backends/cpu/kernels/gemm_bf16.py``): AMX tiles or AVX512-BF16, chosen by
CPU feature (``kernels/amx.py``), products accumulated in float32, the epilogue (bias,
activation, residual) in float32 and the result rounded once to bf16.

The weight is packed at compile time into VNNI-2 panels (``kernels/pack_bf16.py``).  What the
kernels cannot take stays in torch, with the reason: an activation as the right operand (the
attention matmuls), a batched product, a host without AMX-BF16 or AVX512-BF16, an ISA other
than AVX-512.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.pack_bf16 import LAYOUT, pack_b_bf16
from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.constants import weight_tensor
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.gemm_operands import matrix_view
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.ops import cast
from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.tensors import BufferValue, TensorValue
from ziggurat.backends.cpu.lowering.views import reshape
from ziggurat.ir.types import dtype_of

BF16 = torch.bfloat16


def all_bf16(args: LoweringArgs) -> str | None:
    """None when every tensor operand and result of the op is bf16."""
    for v in (*args.op.operands, *args.op.results):
        if isinstance(v.type, TensorType) and dtype_of(v.type) != BF16:
            return f"a bf16 GEMM takes bf16 operands only, got {dtype_of(v.type)}"
    return None


def bf16_kernel(ctx: LoweringContext) -> str:
    """The host's bf16 GEMM kernel, or NotLowerable naming what is missing."""
    if ctx.options.isa != Isa.AVX512:
        raise NotLowerable(f"bf16 GEMMs need the avx512 ISA (compiling for {ctx.options.isa.value})")
    kernel = amx.host_bf16_kernel()
    if kernel is None:
        raise NotLowerable("this CPU has neither AMX-BF16 nor AVX512-BF16 for a bf16 GEMM")
    return kernel


def bf16_linear(ctx: LoweringContext, x: TensorValue, w: TensorValue, n: int, out_shape: Sequence[int],
                epilogue: Any) -> TensorValue:
    """``x @ W^T`` with ``W[N, K]`` a constant bf16 weight."""
    weight = _constant_bf16(w, "linear")
    return _gemm(ctx, x, weight.t(), n, out_shape, epilogue, w)


def bf16_matmul(ctx: LoweringContext, a: TensorValue, b: TensorValue, out_shape: Sequence[int],
                epilogue: Any) -> TensorValue:
    """``a @ B`` with ``B[K, N]`` a constant 2-D bf16 matrix (``a``'s batch dims fold into rows)."""
    weight = _constant_bf16(b, "matmul")
    if weight.dim() != 2:
        raise NotLowerable("a bf16 matmul takes a 2-D constant right operand only")
    return _gemm(ctx, a, weight, weight.shape[1], out_shape, epilogue, b)


def _constant_bf16(w: TensorValue, what: str) -> torch.Tensor:
    tensor = weight_tensor(w)
    if tensor is None:
        raise NotLowerable(f"a bf16 {what} needs a constant weight (its right operand is computed at run time)")
    if tensor.dtype != BF16 or tensor.dim() != 2:
        raise NotLowerable(f"a bf16 {what} needs a 2-D bf16 weight, got {tensor.dtype} {list(tensor.shape)}")
    return tensor


def _gemm(ctx: LoweringContext, x: TensorValue, b: torch.Tensor, n: int, out_shape: Sequence[int],
          epi: Any, w: TensorValue) -> TensorValue:
    kernel = bf16_kernel(ctx)
    k = x.shape[-1]
    m = x.numel // k if k else math.prod(x.shape[:-1])
    if min(m, n, k) < 1:
        raise NotLowerable("a bf16 GEMM with an empty dimension")
    if tuple(b.shape) != (k, n):
        raise NotLowerable(f"bf16 GEMM operands do not match: [{m}, {k}] @ {list(b.shape)}")
    a = reshape(ctx, x, (m, k)) if x.rank != 2 else x
    av = matrix_view(ctx, a, (), allow_transposed=False)
    hint = (w.buffer.name if w.buffer is not None else "weight") + f"_{LAYOUT}"
    packed = ctx.constant(pack_b_bf16(b), hint)
    spec: dict[str, Any] = {"bf16_kernel": kernel, "m": m, "n": n, "k": k, "lda": av.row_stride, "ldc": n}
    bias_operand: GemmOperand | None = None
    if epi.bias is not None:
        bias_operand = GemmOperand(_float32_bias(ctx, epi.bias, n))
    if epi.unary is not None:
        spec["unary"] = epi.unary
        params = {k_: v for k_, v in epi.unary_params.items() if v is not None}
        if params:
            spec["unary_params"] = params
    other_operand: GemmOperand | None = None
    if epi.binary is not None and epi.other is not None:
        other_operand, rs, cs = _other(ctx, epi.other, m, n, out_shape)
        spec.update(binary=epi.binary, alpha=float(epi.alpha), other_strides=(rs, cs),
                    other_bf16=other_operand.buffer.dtype == BF16)
        if epi.binary_first:
            spec["binary_first"] = True
    out = ctx.new_buffer(out_shape, BF16, "mm")
    ctx.nodes.append(GemmNode(ctx.unique_name(f"gemm_{ctx.current_origin or 'mm'}"), av.operand,
                              GemmOperand(packed), GemmOperand(out), bias_operand, other_operand, spec,
                              (ctx.current_origin,)))
    return BufferValue(out)


def _float32_bias(ctx: LoweringContext, bias: TensorValue, n: int) -> Any:
    tensor = weight_tensor(bias)
    if tensor is not None and tensor.numel() in (1, n):
        return ctx.constant(tensor.float().reshape(-1).expand(n).contiguous(), "bias_f32")
    if bias.numel != n:
        raise NotLowerable(f"a bf16 GEMM's bias of {list(bias.shape)} elements is not one per column ({n})")
    flat = reshape(ctx, bias, (n,)) if bias.shape != (n,) else bias
    f32 = ctx.lazy((n,), torch.float32, lambda idx: cast(flat.load(idx), torch.float32), [flat])  # type: ignore[no-untyped-call]
    return ctx.realize(f32, "bias_f32")


def _other(ctx: LoweringContext, other: TensorValue, m: int, n: int,
           out_shape: Sequence[int]) -> tuple[GemmOperand, int, int]:
    """The residual operand, read with a row stride and a column stride of 0 or 1."""
    from ziggurat.backends.cpu.lowering.linalg import _other_view  # pyright: ignore[reportPrivateUsage]

    if other.dtype not in (BF16, torch.float32):
        raise NotLowerable(f"a bf16 GEMM's residual must be bf16 or float32, got {other.dtype}")
    view = _other_view(ctx, other, (), m, n, out_shape)
    if view.col_stride in (0, 1):
        return GemmOperand(view.buffer, view.offset), view.row_stride, view.col_stride
    full = reshape(ctx, other, (m, n)) if other.numel == m * n else None
    if full is None:
        raise NotLowerable("a bf16 GEMM's residual with a column stride other than 0 or 1")
    return GemmOperand(ctx.realize(full, "other")), n, 1
