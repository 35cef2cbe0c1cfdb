"""``fuse-post-ops``: conv/linear/matmul followed by element-wise ops become one ``fused`` op.

1. Every ``aten::conv2d``, ``linear``, ``matmul``/``mm``/``bmm`` and ``addmm``/``baddbmm``
   (float tensors) becomes the matching ``fused`` op with no post-ops.
2. A scale by a constant (``* c``, ``/ c``) of a matmul joins its ``alpha``; a following
   binary op (``add``/``sub`` with any tensor that broadcasts to the output) joins as the
   binary post-op and a following unary op (relu, relu6, gelu (erf/tanh), silu, sigmoid,
   tanh, hardtanh, hardswish, hardsigmoid, leaky_relu, clamp) as the unary post-op, at most
   one of each, in the order they apply: conv -> add(residual) -> relu and
   conv -> silu -> add(residual) are each one op.
A post-op joins only when the fused op's result has no other user; with ``duplicate=true``
the producer is instead duplicated for the consumer.  Counts per pattern are recorded
(``--pass-statistics``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, TensorType, f64, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.fused import BinaryPostOpAttr, Conv2dOp, FusedOp, LinearOp, MatmulOp, UnaryPostOpAttr
from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.checked_scalars import overflowing_scalar
from ziggurat.dialects.torch.aten_ops import (
    AtenAddmm_Op,
    AtenAddmmDtypeOp,
    AtenAddTensorOp,
    AtenBaddbmm_Op,
    AtenBaddbmmDtypeOp,
    AtenBmm_Op,
    AtenBmmDtypeOp,
    AtenClamp_Op,
    AtenClamp__Op,
    AtenClampMax_Op,
    AtenClampMin_Op,
    AtenConv2d_Op,
    AtenDivScalarOp,
    AtenGelu_Op,
    AtenHardsigmoid_Op,
    AtenHardswish_Op,
    AtenHardswish__Op,
    AtenHardtanh_Op,
    AtenHardtanh__Op,
    AtenLeakyRelu_Op,
    AtenLeakyRelu__Op,
    AtenLinear_Op,
    AtenMatmul_Op,
    AtenMm_Op,
    AtenMmDtypeOp,
    AtenMulScalarOp,
    AtenRelu6_Op,
    AtenRelu_Op,
    AtenRelu__Op,
    AtenSigmoid_Op,
    AtenSigmoid__Op,
    AtenSilu_Op,
    AtenSilu__Op,
    AtenSubTensorOp,
    AtenTanh_Op,
    AtenTanh__Op,
)
from ziggurat.ir.rewriting import StaticShapesOnly, involves_dynamic_shape
from ziggurat.ir.symbolic_shapes import SizesOnDemand
from ziggurat.ir.statistics import record
from ziggurat.ir.types import is_float_element, shape_of

NAME = "fuse-post-ops"
_BASE_NAMES = {Conv2dOp: "conv", LinearOp: "linear", MatmulOp: "matmul"}


def _is_float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and is_float_element(value.type.get_element_type())


def _post_ops(*ops: Attribute) -> ArrayAttr[Attribute]:
    return ArrayAttr(list(ops))


def _ints(values: list[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)  # pyright: ignore[reportArgumentType]


def rebuild(op: FusedOp, post_ops: list[Attribute], other: SSAValue | None, result_type: Attribute) -> FusedOp:
    """A copy of ``op`` with new post-ops (and ``other`` operand) and result type."""
    defs = type(op).get_irdl_definition().operands
    operands: list[list[SSAValue]] = []
    for name, _ in defs:
        value = other if name == "other" else getattr(op, name)
        operands.append([] if value is None else [value])
    properties = {k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}
    properties["post_ops"] = ArrayAttr(post_ops)
    new = type(op).build(operands=operands, properties=properties, result_types=[result_type])
    new.location = op.location
    return new


def _replace_by_lifted(op: AtenOp, new: FusedOp, rewriter: PatternRewriter) -> None:
    new.location = op.location
    rewriter.replace(op, new)


def _matmul(x: SSAValue, y: SSAValue, bias: SSAValue | None, alpha: float, beta: float,
            out: Attribute) -> MatmulOp:
    return MatmulOp.build(
        operands=[[x], [y], [bias] if bias is not None else [], []],
        properties={"alpha": FloatAttr(alpha, f64), "beta": FloatAttr(beta, f64), "post_ops": _post_ops()},
        result_types=[out])


class LiftConv2d(RewritePattern):
    """``aten::conv2d`` (the int-padding overload, 4-D input) -> ``fused.conv2d``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenConv2d_Op, rewriter: PatternRewriter) -> None:
        if not _is_float(op.result) or len(op.input.type.get_shape()) != 4:  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
            return
        conv = Conv2dOp.build(
            operands=[[op.input], [op.weight], [op.bias] if op.bias is not None else [], []],
            properties={"stride": _ints(op.stride_value), "padding": _ints(op.padding_value),
                        "dilation": _ints(op.dilation_value),
                        "groups": IntegerAttr(op.groups.value.data, i64), "post_ops": _post_ops()},
            result_types=[op.result.type])
        _replace_by_lifted(op, conv, rewriter)


class LiftLinear(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenLinear_Op, rewriter: PatternRewriter) -> None:
        if not _is_float(op.result):
            return
        linear = LinearOp.build(
            operands=[[op.input], [op.weight], [op.bias] if op.bias is not None else [], []],
            properties={"post_ops": _post_ops()}, result_types=[op.result.type])
        _replace_by_lifted(op, linear, rewriter)


class LiftMatmul(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenMatmul_Op, rewriter: PatternRewriter) -> None:
        if _is_float(op.result):
            _replace_by_lifted(op, _matmul(op.self_, op.other, None, 1.0, 1.0, op.result.type), rewriter)


class LiftMm(RewritePattern):
    """``mm`` and ``bmm``; their ``.dtype`` overloads too (the result type is the op's)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenMm_Op | AtenMmDtypeOp | AtenBmm_Op | AtenBmmDtypeOp,
                          rewriter: PatternRewriter) -> None:
        if _is_float(op.result):
            _replace_by_lifted(op, _matmul(op.self_, op.mat2, None, 1.0, 1.0, op.result.type), rewriter)


def _added(self_: SSAValue, beta: float) -> tuple[SSAValue | None, float]:
    """The bias of a lifted ``addmm``/``baddbmm`` and its factor.  With ``beta == 0`` torch
    ignores ``self`` (its NaN and inf are not propagated, documented), while ``fused.matmul``
    computes ``beta * bias`` (``0 * inf`` is NaN): no bias then.  ``self`` only broadcasts
    to the product's shape, so dropping it changes no shape."""
    return (None, 1.0) if beta == 0.0 else (self_, beta)


#: ``addmm``/``baddbmm`` with ``alpha = 0`` stay as they are: torch skips the product on some
#: kernels and sizes (an inf/NaN in the matrices does not reach the result) and not on others,
#: so no fused op can promise eager's answer; the backends decide (the CPU one runs torch).
_ZERO_ALPHA = "alpha = 0"


class LiftAddmm(RewritePattern):
    """``addmm`` (and ``.dtype``): ``beta * self + alpha * mat1 @ mat2``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenAddmm_Op | AtenAddmmDtypeOp, rewriter: PatternRewriter) -> None:
        if _is_float(op.result) and float(op.alpha_value) != 0.0:  # alpha = 0: see _ZERO_ALPHA
            bias, beta = _added(op.self_, float(op.beta_value))
            new = _matmul(op.mat1, op.mat2, bias, float(op.alpha_value), beta, op.result.type)
            _replace_by_lifted(op, new, rewriter)


class LiftBaddbmm(RewritePattern):
    """``baddbmm`` (and ``.dtype``): ``beta * self + alpha * batch1 @ batch2``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenBaddbmm_Op | AtenBaddbmmDtypeOp, rewriter: PatternRewriter) -> None:
        if _is_float(op.result) and float(op.alpha_value) != 0.0:  # alpha = 0: see _ZERO_ALPHA
            bias, beta = _added(op.self_, float(op.beta_value))
            new = _matmul(op.batch1, op.batch2, bias, float(op.alpha_value), beta, op.result.type)
            _replace_by_lifted(op, new, rewriter)


LIFT_PATTERNS: tuple[RewritePattern, ...] = (LiftConv2d(), LiftLinear(), LiftMatmul(), LiftMm(), LiftAddmm(),
                                             LiftBaddbmm())

#: The activations that are a unary post-op of the same name (in-place overloads too).
ACTIVATIONS: dict[type[AtenOp], str] = {
    AtenRelu_Op: "relu", AtenRelu__Op: "relu", AtenRelu6_Op: "relu6", AtenSilu_Op: "silu", AtenSilu__Op: "silu",
    AtenSigmoid_Op: "sigmoid", AtenSigmoid__Op: "sigmoid", AtenTanh_Op: "tanh", AtenTanh__Op: "tanh",
    AtenHardswish_Op: "hardswish", AtenHardswish__Op: "hardswish", AtenHardsigmoid_Op: "hardsigmoid",
}
Activation = (AtenRelu_Op | AtenRelu__Op | AtenRelu6_Op | AtenSilu_Op | AtenSilu__Op | AtenSigmoid_Op
              | AtenSigmoid__Op | AtenTanh_Op | AtenTanh__Op | AtenHardswish_Op | AtenHardswish__Op
              | AtenHardsigmoid_Op)


@dataclass
class FuseUnary(RewritePattern):
    """A unary op whose operand is a fused op without a unary post-op -> that post-op."""

    duplicate: bool

    def fuse(self, op: AtenOp, source: SSAValue, post: UnaryPostOpAttr, rewriter: PatternRewriter) -> None:
        producer = source.owner
        if not isinstance(producer, FusedOp) or overflowing_scalar(op) is not None:
            return  # (a number eager raises on stays with its op, which runs in torch)
        if producer.unary() is not None or op.results[0].type != producer.results[0].type:
            return
        shared = not producer.results[0].has_one_use()
        if shared and not self.duplicate:
            return
        other = getattr(producer, "other", None)
        fused = rebuild(producer, [*producer.post_ops.data, post], other, op.results[0].type)
        rewriter.replace(op, fused)
        if not shared:
            rewriter.erase(producer)
        if shared:
            record(NAME, "producers duplicated")


class FuseActivation(FuseUnary):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Activation, rewriter: PatternRewriter) -> None:
        self.fuse(op, op.self_, UnaryPostOpAttr(ACTIVATIONS[type(op)]), rewriter)


class FuseGelu(FuseUnary):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenGelu_Op, rewriter: PatternRewriter) -> None:
        self.fuse(op, op.self_, UnaryPostOpAttr("gelu_tanh" if op.approximate.data == "tanh" else "gelu_erf"),
                  rewriter)


class FuseHardtanh(FuseUnary):
    """``hardtanh(x, 0, 6)`` is ``relu6``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenHardtanh_Op | AtenHardtanh__Op, rewriter: PatternRewriter) -> None:
        lo, hi = float(op.min_val_value), float(op.max_val_value)
        post = UnaryPostOpAttr("relu6") if (lo, hi) == (0.0, 6.0) else UnaryPostOpAttr("hardtanh", [lo, hi])
        self.fuse(op, op.self_, post, rewriter)


class FuseLeakyRelu(FuseUnary):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenLeakyRelu_Op | AtenLeakyRelu__Op, rewriter: PatternRewriter) -> None:
        self.fuse(op, op.self_, UnaryPostOpAttr("leaky_relu", [float(op.negative_slope_value)]), rewriter)


class FuseClamp(FuseUnary):
    """``clamp`` with Scalar bounds (an absent one is unbounded), ``clamp_min``, ``clamp_max``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenClamp_Op | AtenClamp__Op | AtenClampMin_Op | AtenClampMax_Op,
                          rewriter: PatternRewriter) -> None:
        lo: int | float | bool = -math.inf
        hi: int | float | bool = math.inf
        if isinstance(op, AtenClampMin_Op):
            lo = op.min_value
        elif isinstance(op, AtenClampMax_Op):
            hi = op.max_value
        else:
            lo = -math.inf if op.min_value is None else op.min_value
            hi = math.inf if op.max_value is None else op.max_value
        self.fuse(op, op.self_, UnaryPostOpAttr("clamp", [float(lo), float(hi)]), rewriter)


#: The binary post-op of each binary op.
BINARIES: dict[type[AtenOp], str] = {AtenAddTensorOp: "add", AtenSubTensorOp: "sub"}


@dataclass
class FuseBinary(RewritePattern):
    duplicate: bool
    #: the size expressions of a dynamic-shape level (None: static shapes only)
    symbolic: SizesOnDemand | None = None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenAddTensorOp | AtenSubTensorOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = op.self_, op.other
        if overflowing_scalar(op) is not None:
            return
        kind = BINARIES[type(op)]
        alpha = float(op.alpha_value)
        # add/sub(x, y, alpha) is x +/- alpha * y and the post-op computes producer +/- alpha * other:
        # the producer may be the second operand only of an add that does not scale (alpha 1)
        swapped = ((rhs, lhs),) if kind == "add" and alpha == 1.0 else ()
        for producer_value, other in ((lhs, rhs), *swapped):
            producer = producer_value.owner
            # conv -> add, or conv -> unary -> add (the binary then applies after the unary)
            if not isinstance(producer, FusedOp) or producer.binary() is not None:
                continue
            if op.result.type != producer.results[0].type or not self._broadcasts(op, other, producer_value):
                continue
            if not math.isfinite(alpha):
                return  # the fused op's alpha must be finite (the GEMM epilogue's contract)
            shared = not producer_value.has_one_use()
            if shared and not self.duplicate:
                continue
            post = BinaryPostOpAttr(kind, alpha)
            fused = rebuild(producer, [*producer.post_ops.data, post], other, op.result.type)
            rewriter.replace(op, fused)
            if not shared:
                rewriter.erase(producer)
            if shared:
                record(NAME, "producers duplicated")
            return


    def _broadcasts(self, op: Operation, other: SSAValue, producer_value: SSAValue) -> bool:
        if not involves_dynamic_shape(op):
            return _broadcasts_to(other, producer_value)
        # ? sizes: the same expressions, read from the symbolic analysis (two ? may differ)
        result = op.results[0]
        return (self.symbolic is not None and self.symbolic.sizes(result) == self.symbolic.sizes(producer_value)
                and self.symbolic.broadcasts_to(other, producer_value))


class FuseScale(RewritePattern):
    """``matmul(a, b) * c`` (or ``/ c``) -> the matmul's ``alpha`` (attention's 1/sqrt(d))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenMulScalarOp | AtenDivScalarOp, rewriter: PatternRewriter) -> None:
        producer = op.self_.owner
        if not isinstance(producer, MatmulOp) or producer.post_ops.data or not op.self_.has_one_use():
            return
        if op.result.type != producer.results[0].type:
            return
        c = float(op.other_value)
        if isinstance(op, AtenDivScalarOp) and not _reciprocal_is_normal(c):
            return  # eager divides by a denormal (or zero, inf, NaN) c; 1/c would overflow or round
        factor = c if isinstance(op, AtenMulScalarOp) else 1.0 / c
        new = rebuild(producer, [], None, op.result.type)
        new.properties["alpha"] = FloatAttr(producer.alpha.value.data * factor, f64)
        new.properties["beta"] = FloatAttr(producer.beta.value.data * factor, f64)
        rewriter.replace(op, new)
        rewriter.erase(producer)
        record(NAME, "matmul scaled (alpha)")


def _reciprocal_is_normal(c: float) -> bool:
    """Whether ``c`` and ``1 / c`` are both normal float32 numbers: then ``x * (1 / c)`` is
    ``x / c`` up to one rounding, as for attention's ``1 / sqrt(d)``."""
    tiny, big = torch.finfo(torch.float32).tiny, torch.finfo(torch.float32).max
    return math.isfinite(c) and tiny <= abs(c) <= big and tiny <= 1.0 / abs(c) <= big


def _broadcasts_to(other: SSAValue, target: SSAValue) -> bool:
    if not isinstance(other.type, TensorType) or other.type.get_element_type() != target.type.get_element_type():  # pyright: ignore
        return False
    try:
        return tuple(torch.broadcast_shapes(shape_of(other.type), shape_of(target.type))) == shape_of(target.type)
    except RuntimeError:
        return False


@dataclass(frozen=True)
class FusePostOpsPass(ModulePass):
    name = NAME

    duplicate: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # none of these compares sizes but FuseBinary, which reads a dynamic-shape level's
        # expressions: they apply on declared symbols (data-dependent ? sizes stay unfused)
        PatternRewriteWalker(StaticShapesOnly(GreedyRewritePatternApplier(list(LIFT_PATTERNS)),
                                              symbolic=True)).rewrite_module(op)
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([
                FuseScale(), FuseBinary(self.duplicate, SizesOnDemand(op)), FuseActivation(self.duplicate),
                FuseGelu(self.duplicate), FuseHardtanh(self.duplicate), FuseLeakyRelu(self.duplicate),
                FuseClamp(self.duplicate)]), symbolic=True),
        ).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
        for fused in op.walk():
            if isinstance(fused, FusedOp):
                kinds = [p.kind.data for p in fused.post_ops.data]  # pyright: ignore
                record(NAME, "+".join([_BASE_NAMES[type(fused)], *kinds]))
