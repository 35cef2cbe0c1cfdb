"""Gradients of element-wise activations and of softmax, as element functions (they appear
in traced training steps and in the e2e suite)."""

from __future__ import annotations

import math

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.ops import add, compare, logical_or, mul, sub, unary, where
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.reduce_util import reduce
from ziggurat.backends.cpu.lowering.registry import lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import norm_dim

F32 = torch.float32


def _float(args: LoweringArgs) -> str | None:
    return None if args.out_dtype == F32 else "float32 only"


def _grad(ctx: LoweringContext, args: LoweringArgs, other: str, fn) -> TensorValue:  # type: ignore[no-untyped-def]
    g, x = args.tensor("grad_output"), args.tensor(other)
    return pointwise(ctx, [g, x], args.out_shape, args.out_dtype, fn)


@lowering("aten::threshold_backward", validator=_float)
def threshold_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    thr = float(args.static("threshold"))
    return _grad(ctx, args, "self", lambda g, x: where(compare("le", x, thr, F32), 0.0, g, F32))


@lowering("aten::sigmoid_backward", validator=_float)
def sigmoid_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _grad(ctx, args, "output", lambda g, y: mul(g, mul(y, sub(1.0, y, F32), F32), F32))


@lowering("aten::tanh_backward", validator=_float)
def tanh_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _grad(ctx, args, "output", lambda g, y: mul(g, sub(1.0, mul(y, y, F32), F32), F32))


@lowering("aten::leaky_relu_backward", validator=_float)
def leaky_relu_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    slope = float(args.static("negative_slope"))
    return _grad(ctx, args, "self", lambda g, x: where(compare("gt", x, 0.0, F32), g, mul(g, slope, F32), F32))


@lowering("aten::hardtanh_backward", validator=_float)
def hardtanh_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    lo, hi = float(args.static("min_val")), float(args.static("max_val"))
    return _grad(ctx, args, "self", lambda g, x: where(
        logical_or(compare("le", x, lo, F32), compare("ge", x, hi, F32)), 0.0, g, F32))


@lowering("aten::gelu_backward", validator=_float)
def gelu_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    tanh = args.static("approximate", "none") == "tanh"

    def fn(g: Value, x: Value) -> Value:
        if tanh:
            k = math.sqrt(2.0 / math.pi)
            inner = mul(add(x, mul(mul(mul(x, x, F32), x, F32), 0.044715, F32), F32), k, F32)
            t = unary("tanh", inner)
            dinner = mul(add(1.0, mul(mul(x, x, F32), 3 * 0.044715, F32), F32), k, F32)
            d = add(mul(add(1.0, t, F32), 0.5, F32),
                    mul(mul(mul(x, 0.5, F32), sub(1.0, mul(t, t, F32), F32), F32), dinner, F32), F32)
        else:
            cdf = mul(add(1.0, unary("erf", mul(x, 1.0 / math.sqrt(2.0), F32)), F32), 0.5, F32)
            pdf = mul(unary("exp", mul(mul(x, x, F32), -0.5, F32)), 1.0 / math.sqrt(2 * math.pi), F32)
            d = add(cdf, mul(x, pdf, F32), F32)
        return mul(g, d, F32)

    return _grad(ctx, args, "self", fn)


@lowering("aten::softplus_backward", validator=_float)
def softplus_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    beta, thr = float(args.static("beta")), float(args.static("threshold"))

    def fn(g: Value, x: Value) -> Value:
        z = unary("sigmoid", mul(x, beta, F32))
        return where(compare("gt", mul(x, beta, F32), thr, F32), g, mul(g, z, F32), F32)

    return _grad(ctx, args, "self", fn)


@lowering("aten::elu_backward", validator=_float)
def elu_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    alpha, scale = float(args.static("alpha")), float(args.static("scale"))
    input_scale = float(args.static("input_scale"))
    is_result = bool(args.static("is_result"))

    def fn(g: Value, v: Value) -> Value:
        if is_result:
            neg = mul(g, mul(add(v, alpha * scale, F32), input_scale, F32), F32)
        else:
            neg = mul(g, mul(unary("exp", mul(v, input_scale, F32)), alpha * scale * input_scale, F32), F32)
        return where(compare("le", v, 0.0, F32), neg, mul(g, scale, F32), F32)

    return _grad(ctx, args, "self_or_result", fn)


@lowering("aten::_softmax_backward_data", "aten::_log_softmax_backward_data", validator=_float)
def softmax_backward(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    g, y = args.tensor("grad_output"), args.tensor("output")
    dim = norm_dim(int(args.static("dim")), y.rank)
    log = args.name.startswith("log")
    shape = y.shape
    if log:
        s = reduce(ctx, g, [dim], True, "sum", F32)
    else:
        gy = pointwise(ctx, [g, y], shape, F32, lambda a, b: mul(a, b, F32))
        s = reduce(ctx, gy, [dim], True, "sum", F32)

    def element(idx: Index) -> Value:
        from ziggurat.backends.cpu.lowering.index import IndexExpr

        k = [IndexExpr.of(0) if d == dim else IndexExpr.of(i) for d, i in enumerate(idx)]
        gv, yv, sv = g.load(idx), y.load(idx), s.load(k)
        if log:
            return sub(gv, mul(unary("exp", yv), sv, F32), F32)
        return mul(yv, sub(gv, sv, F32), F32)

    return ctx.lazy(shape, F32, element, [g, y])
