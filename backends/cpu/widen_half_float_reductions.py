"""``widen-half-floats``' patterns for the bf16 and float16 reductions whose eager kernels round
inside: ``log_softmax`` and ``logsumexp``, written out as float32 ops with eager's roundings.

``log_softmax`` over the last dim (ATen's ``serial_vec_log_softmax_lastdim_range``) keeps the
row's max and its sum of exponentials in 16-bit arrays: the float32 sum is rounded to the
16-bit type, its log computed in float32 and rounded again, and only then is
``(x - max) - log_sum`` computed in float32 and rounded once::

    m = amax(x32, dim); d = x32 - m
    s = round16(sum(exp(d), dim)); l = round16(log(s))
    y = to16(d - l)

Over another dim eager's kernel keeps both in float32: that is float32's ``log_softmax`` rounded
once.  ``logsumexp`` is a composite in ATen (``logsumexp_out_impl``), each of its ops on the
16-bit tensor and rounding its result::

    m = amax(x, dims, keepdim=True) with +-inf made 0
    y = round16(round16(log(round16(sum(round16(exp(round16(x - m))))))) + m)

Both are bit for bit eager's on the shapes and values of
``tests/cpu_backend/test_half_float_log_reductions.py`` (a float32 sum in another order could
move a rounded sum across a 16-bit boundary: one ulp, rarely, as ``group_norm``'s)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.backends.cpu.half_float_rewrites import Float32Builder, half_operands, value_dtype
from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.aten_ops import (
    Aten_LogSoftmax_Op,
    AtenAbs_Op,
    AtenAddTensorOp,
    AtenAmax_Op,
    AtenEqScalarOp,
    AtenExp_Op,
    AtenLog_Op,
    AtenLogSoftmaxIntOp,
    AtenLogsumexp_Op,
    AtenMaskedFillScalarOp,
    AtenSubTensorOp,
    AtenSumDimIntListOp,
)


@dataclass
class WidenLogSoftmax(RewritePattern):
    """``log_softmax`` (``_log_softmax`` without ``half_to_float``) of a bf16 or float16 tensor, in
    float32 with eager's roundings: of the row's sum and its log over the last dim, of the
    result only over another."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenLogSoftmaxIntOp | Aten_LogSoftmax_Op, rewriter: PatternRewriter) -> None:
        if isinstance(op, AtenLogSoftmaxIntOp) and op.static_value("dtype") not in (None, value_dtype(op.operands[0])):
            return  # a float32 dtype is a cast first (WidenDtypeArgument)
        if isinstance(op, Aten_LogSoftmax_Op) and op.static_value("half_to_float") is not False:
            return
        found = half_operands(op)
        if found is None:
            return
        b = Float32Builder(*found)
        rank = len(op.operands[0].type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        dim = int(op.static_value("dim"))  # pyright: ignore[reportArgumentType]
        x = b.widen(op.operands[0])
        if rank > 0 and dim % rank != rank - 1:
            wide = b.aten(AtenLogSoftmaxIntOp, {"self": x, "dim": dim})
            b.replace(op, b.narrow(wide), rewriter, "log_softmax over another dim widened")
            return
        m = b.aten(AtenAmax_Op, {"self": x, "dim": [dim], "keepdim": True})
        d = b.aten(AtenSubTensorOp, {"self": x, "other": m})
        s = b.round(b.aten(AtenSumDimIntListOp, {"self": b.aten(AtenExp_Op, {"self": d}), "dim": [dim], "keepdim": True}))
        log_sum = b.round(b.aten(AtenLog_Op, {"self": s}))
        y = b.narrow(b.aten(AtenSubTensorOp, {"self": d, "other": log_sum}))
        b.replace(op, y, rewriter, "log_softmax over the last dim written out")


@dataclass
class WidenLogsumexp(RewritePattern):
    """``logsumexp`` of a bf16 or float16 tensor as ATen's composite of 16-bit ops, each computed
    in float32 and rounded."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenLogsumexp_Op, rewriter: PatternRewriter) -> None:
        found = half_operands(op)
        dims = op.static_value("dim")
        if found is None or not isinstance(dims, list | tuple) or not dims:
            return
        keepdim = bool(op.static_value("keepdim"))
        b = Float32Builder(*found)
        x = b.widen(op.operands[0])
        # eager zeroes an infinite max in place (through the squeezed view when not keepdim)
        # before it subtracts it: an infinite row's sum is then infinite, not NaN
        shift = self._finite_max(b, x, list(dims), True)  # pyright: ignore[reportUnknownArgumentType]
        e = b.round(b.aten(AtenExp_Op, {"self": b.round(b.aten(AtenSubTensorOp, {"self": x, "other": shift}))}))
        s = b.round(b.aten(AtenSumDimIntListOp, {"self": e, "dim": list(dims), "keepdim": keepdim}))  # pyright: ignore[reportUnknownArgumentType]
        log_sum = b.round(b.aten(AtenLog_Op, {"self": s}))
        if not keepdim:
            shift = self._finite_max(b, x, list(dims), False)  # pyright: ignore[reportUnknownArgumentType]
        y = b.narrow(b.aten(AtenAddTensorOp, {"self": log_sum, "other": shift}))
        b.replace(op, y, rewriter, "logsumexp written out")

    @staticmethod
    def _finite_max(b: Float32Builder, x: SSAValue, dims: list[int], keepdim: bool) -> SSAValue:
        """``amax(x, dims)`` with an infinite max made 0."""
        m = b.aten(AtenAmax_Op, {"self": x, "dim": dims, "keepdim": keepdim})
        infinite = b.aten(AtenEqScalarOp, {"self": b.aten(AtenAbs_Op, {"self": m}), "other": float("inf")})
        return b.aten(AtenMaskedFillScalarOp, {"self": m, "mask": infinite, "value": 0.0})
