"""``widen-half-floats``' GEMM patterns: float16 GEMMs and convolutions, and bf16 ones without
a bf16 kernel, on the float32 kernels (``WidenGemm``, ``WidenGroupedConv``), and the bf16
products of widened operands (``Bf16Products``); see ``widen_half_floats.py``."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.backends.cpu.half_float_rewrites import NAME, value_dtype, widen_whole
from ziggurat.dialects.fused import Conv2dOp, MatmulOp
from ziggurat.dialects.torch.aten_ops import Aten_ToCopy_Op, AtenTransposeIntOp
from ziggurat.dialects.torch.op_registry import op_key
from ziggurat.ir.rewriting import build_aten_inferred, literal_value
from ziggurat.ir.statistics import record


@dataclass
class WidenGroupedConv(RewritePattern):
    """A grouped bf16 ``fused.conv2d`` on the float32 kernels: eager's bf16 convolution
    accumulates the exact bf16 products in float32 and rounds once, as this does (in another
    order: a bf16 ulp apart at most where a sum rounds across a boundary).  Literal weights and
    biases become float32 literals; the post-ops left fused (those that commute with rounding,
    ``split_half_float_epilogues.py``) run in float32 before the one rounding.  A depthwise one
    without a residual stays bf16: the lowering runs it on the float32 depthwise kernel reading
    and writing bf16, with the same arithmetic.  A one-group bf16 convolution has its own
    kernels (``lowering/conv_bf16.py``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        if op.weight_layout is not None or value_dtype(op.result) != torch.bfloat16:
            return
        in_shape, w_shape = op.input.type.get_shape(), op.weight.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        groups = int(op.groups.value.data)
        if len(in_shape) != 4 or len(w_shape) != 4 or groups == 1:
            return
        if any(v is not None and value_dtype(v) not in (torch.bfloat16, torch.float32)
               for v in (op.input, op.weight, op.bias, op.other)):
            return
        depthwise = groups == in_shape[1] and w_shape[1] == 1
        if depthwise and op.other is None and all(value_dtype(v) == torch.bfloat16 for v in (op.input, op.result)):
            # the depthwise kernel reads and writes bf16 (``conv_native.bf16_depthwise``): no casts
            # around it (MobileNetV2: 34 copies of its blocks' activations)
            record(NAME, "depthwise convolutions kept bf16")
            return
        widen_whole(op, torch.bfloat16, rewriter)
        record(NAME, "depthwise convolutions widened" if depthwise else "grouped convolutions widened")


#: GEMMs and convolutions widened whole when every tensor they take and give is float16.
WIDENED_GEMMS = frozenset({
    "fused.linear", "fused.matmul", "fused.conv2d", "aten::linear", "aten::matmul", "aten::mm", "aten::bmm",
    "aten::addmm", "aten::baddbmm", "aten::addbmm", "aten::convolution", "aten::conv1d", "aten::conv1d.padding",
    "aten::conv2d", "aten::conv2d.padding", "aten::conv3d", "aten::conv3d.padding", "aten::conv_transpose1d",
    "aten::conv_transpose2d.input", "aten::conv_transpose3d.input",
})
#: ... and when every tensor is bf16: those without a bf16 kernel (``lowering/gemm_bf16.py``,
#: ``conv_bf16.py`` take linears, matmuls and one-group 2-d convolutions).
BF16_GEMMS_WIDENED = WIDENED_GEMMS - {"fused.linear", "fused.matmul", "fused.conv2d", "aten::linear", "aten::matmul",
                                      "aten::mm"}


@dataclass
class WidenGemm(RewritePattern):
    """A float16 GEMM or convolution (``WIDENED_GEMMS``), or a bf16 one without a bf16 kernel
    (``BF16_GEMMS_WIDENED``: 1-d, 3-d, same-padded and transposed convolutions, bmm/addmm
    forms; every bf16 one without ``bf16_kernels``: a host or ISA without AMX-BF16 and
    AVX512-BF16), on the float32 kernels, its result rounded once, as eager's 16-bit GEMMs
    accumulate in float32 and round once; the post-ops left fused (those that commute with
    rounding, ``split_half_float_epilogues.py``) run in float32 before that rounding."""

    bf16_kernels: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        key = op_key(op)
        if key not in WIDENED_GEMMS or op.properties.get("weight_layout") is not None:
            return
        tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
        dtypes = {value_dtype(v) for v in tensors}
        if "conv" in key and _non_finite_weight(op):
            # eager's 16-bit convolution (oneDNN's AVX512-FP16/AMX kernels) skips the taps on the
            # padding, whose zero times an infinite weight the float32 one (native, or torch's
            # float32 kernel in the fallback) turns into NaN: kept, it runs as eager's op (fuzz
            # seed 95, program 7: a float16-overflowed weight, 0 in eager, NaN widened)
            record(NAME, "16-bit convolutions by non-finite constant weights kept")
            return
        if dtypes == {torch.float16}:
            widen_whole(op, torch.float16, rewriter)
            record(NAME, "float16 GEMMs and convolutions widened")
        elif dtypes == {torch.bfloat16} and (key in BF16_GEMMS_WIDENED or not self.bf16_kernels) \
                and not (isinstance(op, Conv2dOp) and int(op.groups.value.data) != 1):  # WidenGroupedConv's
            widen_whole(op, torch.bfloat16, rewriter)
            record(NAME, "bf16 GEMMs and convolutions without a bf16 kernel widened")


def _non_finite_weight(op: Operation) -> bool:
    """Whether a convolution's weight (its second operand) is a literal holding inf or NaN."""
    weight = literal_value(op.operands[1]) if len(op.operands) > 1 else None
    return weight is not None and weight.is_floating_point() and not bool(torch.isfinite(weight).all())


def _bf16_source(value: SSAValue) -> tuple[SSAValue, bool] | None:
    """The bf16 tensor a float32 GEMM operand is an exact cast of (``_to_copy``, possibly
    transposed in its last two dims after the cast: attention's ``K^T``), and whether it was
    transposed."""
    owner = value.owner
    transposed = False
    if isinstance(owner, AtenTransposeIntOp):
        rank = len(value.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        dims = {int(owner.static_value("dim0")) % rank, int(owner.static_value("dim1")) % rank}
        if rank < 2 or dims != {rank - 2, rank - 1}:
            return None
        transposed, owner = True, owner.operands[0].owner
    if not isinstance(owner, Aten_ToCopy_Op) or value_dtype(owner.results[0]) != torch.float32:
        return None
    source = owner.operands[0]
    if value_dtype(source) != torch.bfloat16:
        return None
    return source, transposed


@dataclass
class Bf16Products(RewritePattern):
    """``fused.matmul`` of two float32 operands that are exact casts of bf16 tensors (the
    attention decomposition's float32 scores and ``p @ v``): the bf16 operands themselves, the
    float32 result kept, its post-ops (a mask's residual add) as they were.  The products are exact in float32 either way and the sums float32,
    so the bf16 kernels (AMX, AVX512-BF16) compute it with a float32 output, where the float32
    kernels read operands twice as wide after a cast kernel each.  Without a bf16 kernel it
    runs in torch as ``a.float() @ b.float()`` (the interpreter's reading of the op)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> None:
        if value_dtype(op.result) != torch.float32 or op.bias is not None or op.weight_layout is not None:
            return
        found = [_bf16_source(v) for v in (op.a, op.b)]
        if found[0] is None or found[1] is None or found[0][1]:
            return
        (a, _), (b, transposed) = found[0], found[1]
        new_ops: list[Operation] = []
        if transposed:
            flip = build_aten_inferred(AtenTransposeIntOp, {"self": b, "dim0": -2, "dim1": -1})
            new_ops.append(flip)
            b = flip.results[0]
        operands = [a, b, *([op.other] if op.other is not None else [])]
        product = MatmulOp.create(operands=operands, result_types=[op.result.type], properties=dict(op.properties),
                                  attributes=dict(op.attributes))
        if not product.bf16_products_in_float32():
            return  # a residual of another dtype (an attention mask is float32 or bf16)
        product.results[0].name_hint = op.result.name_hint
        dead = [v.owner for v in (op.a, op.b)]
        rewriter.replace(op, [*new_ops, product], [product.results[0]])
        while dead:  # the casts (and K's float32 transpose) nothing else reads
            owner = dead.pop()
            if isinstance(owner, Aten_ToCopy_Op | AtenTransposeIntOp) and owner.parent is not None \
                    and not any(r.uses for r in owner.results):
                dead.extend(v.owner for v in owner.operands)
                rewriter.erase_op(owner)
        record(NAME, "bf16 products of widened operands")
