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
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.backends.cpu.half_float_rewrites import NAME, cast_to, value_dtype
from ziggurat.backends.cpu.loopgen.types import HALF_FLOATS
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
from ziggurat.ir.rewriting import build_aten_inferred
from ziggurat.ir.statistics import record


class _Builder:
    """Float32 ops on a 16-bit op's operand, collected in order, with eager's roundings."""

    def __init__(self, half: torch.dtype, element: Attribute) -> None:
        self.half = half
        self.element = element
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def aten(self, cls: type[AtenOp], args: dict[str, object]) -> SSAValue:
        return self.add(build_aten_inferred(cls, args))

    def widen(self, value: SSAValue) -> SSAValue:
        return self.add(cast_to(value, torch.float32, f32))

    def narrow(self, value: SSAValue) -> SSAValue:
        return self.add(cast_to(value, self.half, self.element))

    def round(self, value: SSAValue) -> SSAValue:
        """``value`` rounded to the 16-bit type, as float32: a 16-bit tensor's op result."""
        return self.widen(self.narrow(value))


def _half_of(op: AtenOp) -> tuple[torch.dtype, Attribute] | None:
    """The 16-bit type of ``op``'s operand and result (both the same), with its element type."""
    half = value_dtype(op.operands[0])
    if half not in HALF_FLOATS or value_dtype(op.results[0]) != half:
        return None
    shape = op.operands[0].type.get_shape()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    if any(d <= 0 for d in shape):  # pyright: ignore[reportUnknownVariableType]
        return None  # dynamic or empty: eager's empty reductions are not written out here
    return half, op.results[0].type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]


def _replace(op: AtenOp, b: _Builder, result: SSAValue, rewriter: PatternRewriter, statistic: str) -> None:
    result.name_hint = op.results[0].name_hint
    rewriter.replace(op, b.ops, [result])
    record(NAME, statistic)


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
        found = _half_of(op)
        if found is None:
            return
        b = _Builder(*found)
        rank = len(op.operands[0].type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        dim = int(op.static_value("dim"))  # pyright: ignore[reportArgumentType]
        x = b.widen(op.operands[0])
        if rank > 0 and dim % rank != rank - 1:
            wide = b.aten(AtenLogSoftmaxIntOp, {"self": x, "dim": dim})
            _replace(op, b, b.narrow(wide), rewriter, "log_softmax over another dim widened")
            return
        m = b.aten(AtenAmax_Op, {"self": x, "dim": [dim], "keepdim": True})
        d = b.aten(AtenSubTensorOp, {"self": x, "other": m})
        s = b.round(b.aten(AtenSumDimIntListOp, {"self": b.aten(AtenExp_Op, {"self": d}), "dim": [dim], "keepdim": True}))
        log_sum = b.round(b.aten(AtenLog_Op, {"self": s}))
        y = b.narrow(b.aten(AtenSubTensorOp, {"self": d, "other": log_sum}))
        _replace(op, b, y, rewriter, "log_softmax over the last dim written out")


@dataclass
class WidenLogsumexp(RewritePattern):
    """``logsumexp`` of a bf16 or float16 tensor as ATen's composite of 16-bit ops, each computed
    in float32 and rounded."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenLogsumexp_Op, rewriter: PatternRewriter) -> None:
        found = _half_of(op)
        dims = op.static_value("dim")
        if found is None or not isinstance(dims, list | tuple) or not dims:
            return
        keepdim = bool(op.static_value("keepdim"))
        b = _Builder(*found)
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
        _replace(op, b, y, rewriter, "logsumexp written out")

    @staticmethod
    def _finite_max(b: _Builder, x: SSAValue, dims: list[int], keepdim: bool) -> SSAValue:
        """``amax(x, dims)`` with an infinite max made 0."""
        m = b.aten(AtenAmax_Op, {"self": x, "dim": dims, "keepdim": keepdim})
        infinite = b.aten(AtenEqScalarOp, {"self": b.aten(AtenAbs_Op, {"self": m}), "other": float("inf")})
        return b.aten(AtenMaskedFillScalarOp, {"self": m, "mask": infinite, "value": 0.0})
