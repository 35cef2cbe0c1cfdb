"""``widen-half-floats``' patterns for bf16 and float16 element ops whose eager kernels round an
intermediate value to the 16-bit type: written out as float32 ops with that rounding.

- ``xlogy(x, y)``: eager's 16-bit kernel rounds ``log(y)`` before the product::

      y16 = to16(x32 * round16(log(y32)))  with 0 where x == 0 and y is not NaN

- ``logit(x)`` (no ``eps``): ``1 - x`` and the quotient are each rounded::

      y16 = to16(log(round16(x32 / round16(1 - x32))))

- ``div(x, y, rounding_mode="trunc")``: the quotient is rounded before it is truncated::

      y16 = to16(trunc(round16(x32 / y32)))

Measured on 65,536 random pairs of each type (a quarter of them random bit patterns, so NaNs,
infinities and denormals), in eager's vector loop, its scalar tail and on strided operands:
bit for bit (``tests/cpu_backend/test_half_float_intermediates.py``).  Float32's result rounded
once differs from eager's on 8,499 (``xlogy``), 1,787 (``logit``) and 408 (trunc division) bf16
values of them.  Not written out: ``remainder``, ``fmod`` and ``lerp`` by a tensor (eager's
scalar loop and its vector loop round differently: the result depends on an element's place)
and floor division."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.backends.cpu.half_float_rewrites import Float32Builder, half_operands
from ziggurat.dialects.torch.aten_ops import (
    AtenDivTensorModeOp,
    AtenDivTensorOp,
    AtenEqScalarOp,
    AtenIsnan_Op,
    AtenLog_Op,
    AtenLogicalAnd_Op,
    AtenLogicalNot_Op,
    AtenLogit_Op,
    AtenMaskedFillScalarOp,
    AtenMulTensorOp,
    AtenRsubScalarOp,
    AtenTrunc_Op,
    AtenXlogyTensorOp,
)


@dataclass
class WidenXlogy(RewritePattern):
    """``xlogy`` of two bf16 or float16 tensors, ``log(y)`` rounded before the product."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenXlogyTensorOp, rewriter: PatternRewriter) -> None:
        found = half_operands(op)
        if found is None:
            return
        b = Float32Builder(*found)
        x, y = b.widen(op.operands[0]), b.widen(op.operands[1])
        product = b.aten(AtenMulTensorOp, {"self": x, "other": b.round(b.aten(AtenLog_Op, {"self": y}))})
        zero_x = b.aten(AtenEqScalarOp, {"self": x, "other": 0.0})
        y_number = b.aten(AtenLogicalNot_Op, {"self": b.aten(AtenIsnan_Op, {"self": y})})
        zero = b.aten(AtenLogicalAnd_Op, {"self": zero_x, "other": y_number})
        result = b.aten(AtenMaskedFillScalarOp, {"self": product, "mask": zero, "value": 0.0})
        b.replace(op, b.narrow(result), rewriter, "xlogy written out")


@dataclass
class WidenLogit(RewritePattern):
    """``logit`` of a bf16 or float16 tensor without ``eps``: ``1 - x`` and ``x / (1 - x)``
    rounded, then the log."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenLogit_Op, rewriter: PatternRewriter) -> None:
        found = half_operands(op)
        if found is None or op.static_value("eps") is not None:
            return
        b = Float32Builder(*found)
        x = b.widen(op.operands[0])
        rest = b.round(b.aten(AtenRsubScalarOp, {"self": x, "other": 1.0}))
        odds = b.round(b.aten(AtenDivTensorOp, {"self": x, "other": rest}))
        b.replace(op, b.narrow(b.aten(AtenLog_Op, {"self": odds})), rewriter, "logit written out")


@dataclass
class WidenTruncDivision(RewritePattern):
    """``div(x, y, rounding_mode="trunc")`` of bf16 or float16 tensors: the quotient rounded,
    then truncated (exact in the 16-bit type)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenDivTensorModeOp, rewriter: PatternRewriter) -> None:
        found = half_operands(op)
        if found is None or op.static_value("rounding_mode") != "trunc":
            return
        b = Float32Builder(*found)
        quotient = b.round(b.aten(AtenDivTensorOp, {"self": b.widen(op.operands[0]), "other": b.widen(op.operands[1])}))
        b.replace(op, b.narrow(b.aten(AtenTrunc_Op, {"self": quotient})), rewriter, "trunc divisions written out")
