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
from ziggurat.ir.rewriting import StaticShapesOnly, aten
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


class LiftToFused(RewritePattern):
    """conv2d/linear/matmul-family aten ops -> fused ops without post-ops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        new = self._lift(op)
        if new is not None:
            new.location = op.location
            rewriter.replace(op, new)

    def _lift(self, op: AtenOp) -> Operation | None:
        if not op.results or not _is_float(op.results[0]):
            return None
        out = op.results[0].type
        empty = _post_ops()
        if aten(op, "conv2d") and op.op_schema.overload == "":
            a = op.arguments()
            if len(shape_of(a["input"].type)) != 4:
                return None
            return Conv2dOp.build(
                operands=[[a["input"]], [a["weight"]], [a["bias"]] if a["bias"] else [], []],
                properties={"stride": _ints(a["stride"]), "padding": _ints(a["padding"]),
                            "dilation": _ints(a["dilation"]), "groups": IntegerAttr(a["groups"], i64),
                            "post_ops": empty},
                result_types=[out])
        if aten(op, "linear"):
            a = op.arguments()
            return LinearOp.build(operands=[[a["input"]], [a["weight"]], [a["bias"]] if a["bias"] else [], []],
                                  properties={"post_ops": empty}, result_types=[out])
        if aten(op, "matmul", "mm", "bmm"):
            a = op.arguments()
            return self._matmul(a["self"], a["mat2"] if "mat2" in a.values else a["other"], None, 1.0, 1.0, out)
        if aten(op, "addmm", "baddbmm"):
            a = op.arguments()
            first, second = ("mat1", "mat2") if aten(op, "addmm") else ("batch1", "batch2")
            return self._matmul(a[first], a[second], a["self"], float(a["alpha"]), float(a["beta"]), out)
        return None

    def _matmul(self, x: SSAValue, y: SSAValue, bias: SSAValue | None, alpha: float, beta: float,
                out: Attribute) -> MatmulOp:
        return MatmulOp.build(
            operands=[[x], [y], [bias] if bias is not None else [], []],
            properties={"alpha": FloatAttr(alpha, f64), "beta": FloatAttr(beta, f64), "post_ops": _post_ops()},
            result_types=[out])


def _unary_of(op: AtenOp) -> UnaryPostOpAttr | None:
    name = op.op_schema.base_name.rstrip("_")
    args = op.arguments()
    simple = {"relu": "relu", "relu6": "relu6", "silu": "silu", "sigmoid": "sigmoid", "tanh": "tanh",
              "hardswish": "hardswish", "hardsigmoid": "hardsigmoid"}
    if name in simple and len(op.operands) == 1:
        return UnaryPostOpAttr(simple[name])
    if name == "gelu":
        return UnaryPostOpAttr("gelu_tanh" if args.get("approximate") == "tanh" else "gelu_erf")
    if name == "hardtanh":
        lo, hi = float(args["min_val"]), float(args["max_val"])
        return UnaryPostOpAttr("relu6") if (lo, hi) == (0.0, 6.0) else UnaryPostOpAttr("hardtanh", [lo, hi])
    if name == "leaky_relu":
        return UnaryPostOpAttr("leaky_relu", [float(args["negative_slope"])])
    if name in ("clamp", "clamp_min", "clamp_max") and op.op_schema.overload in ("", "default"):
        lo = args.get("min", -math.inf) if name != "clamp_max" else -math.inf
        hi = args.get("max", math.inf) if name != "clamp_min" else math.inf
        if name == "clamp_max":
            hi = args["max"]
        if name == "clamp_min":
            lo = args["min"]
        return UnaryPostOpAttr("clamp", [float(lo), float(hi)])
    return None


@dataclass
class FuseUnary(RewritePattern):
    duplicate: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if len(op.operands) != 1 or not isinstance(op.operands[0].owner, FusedOp):
            return
        producer = op.operands[0].owner
        if producer.unary() is not None or op.results[0].type != producer.results[0].type:
            return
        post = _unary_of(op)
        if post is None:
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


@dataclass
class FuseBinary(RewritePattern):
    duplicate: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if not aten(op, "add", "sub") or op.op_schema.overload != "Tensor":
            return
        args = op.arguments()
        lhs, rhs = args["self"], args["other"]
        kind = op.op_schema.base_name.rstrip("_")
        # add/sub(x, y, alpha) is x +/- alpha * y and the post-op computes producer +/- alpha * other:
        # the producer may be the second operand only of an add that does not scale (alpha 1)
        swapped = ((rhs, lhs),) if kind == "add" and float(args["alpha"]) == 1.0 else ()
        for producer_value, other in ((lhs, rhs), *swapped):
            producer = producer_value.owner
            # conv -> add, or conv -> unary -> add (the binary then applies after the unary)
            if not isinstance(producer, FusedOp) or producer.binary() is not None:
                continue
            if op.results[0].type != producer.results[0].type or not _broadcasts_to(other, producer_value):
                continue
            alpha = float(args["alpha"])
            if not math.isfinite(alpha):
                return  # the fused op's alpha must be finite (the GEMM epilogue's contract)
            shared = not producer_value.has_one_use()
            if shared and not self.duplicate:
                continue
            post = BinaryPostOpAttr(kind, alpha)
            fused = rebuild(producer, [*producer.post_ops.data, post], other, op.results[0].type)
            rewriter.replace(op, fused)
            if not shared:
                rewriter.erase(producer)
            if shared:
                record(NAME, "producers duplicated")
            return


class FuseScale(RewritePattern):
    """``matmul(a, b) * c`` (or ``/ c``) -> the matmul's ``alpha`` (attention's 1/sqrt(d))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if not aten(op, "mul", "div") or op.op_schema.overload != "Scalar":
            return
        producer = op.operands[0].owner
        if not isinstance(producer, MatmulOp) or producer.post_ops.data or not op.operands[0].has_one_use():
            return
        if op.results[0].type != producer.results[0].type:
            return
        c = float(op.arguments()["other"])
        if aten(op, "div") and not _reciprocal_is_normal(c):
            return  # eager divides by a denormal (or zero, inf, NaN) c; 1/c would overflow or round
        factor = c if aten(op, "mul") else 1.0 / c
        new = rebuild(producer, [], None, op.results[0].type)
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
        PatternRewriteWalker(StaticShapesOnly(GreedyRewritePatternApplier([LiftToFused()]))).rewrite_module(op)
        PatternRewriteWalker(
            StaticShapesOnly(GreedyRewritePatternApplier([FuseScale(), FuseBinary(self.duplicate),
                                                          FuseUnary(self.duplicate)])),
        ).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
        for fused in op.walk():
            if isinstance(fused, FusedOp):
                kinds = [p.kind.data for p in fused.post_ops.data]  # pyright: ignore
                record(NAME, "+".join([_BASE_NAMES[type(fused)], *kinds]))
