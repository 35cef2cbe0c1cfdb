"""``fused`` dialect ops -> the base layer (convolution / matrix multiply) followed by their post-ops."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.activation import leaky
from ziggurat.backends.tensorrt.converters.common import FLOAT_DTYPES, activation, elementwise, reshape_to_result
from ziggurat.backends.tensorrt.converters.convolution import ConvParams, convolve
from ziggurat.backends.tensorrt.converters.linear import matmul
from ziggurat.backends.tensorrt.registry import op_converter
from ziggurat.dialects.fused import BinaryPostOpAttr, Conv2dOp, FusedOp, LinearOp, MatmulOp, UnaryPostOpAttr
from ziggurat.dialects.trt import ActivationType, ElementWiseOperation
from ziggurat.dialects.trt.base import ints
from ziggurat.ir.types import dtype_of

A = ActivationType
E = ElementWiseOperation


def _unpacked(args: ConverterArgs) -> str | None:
    op = args.op
    assert isinstance(op, FusedOp)
    if op.weight_layout is not None:
        return f"the weight is prepacked for the CPU backend ({op.weight_layout.data})"
    if op.requantize() is not None:
        return "a requantize post-op (the CPU backend's fuse-requantize) has no TensorRT conversion"
    result = op.results[0].type
    if dtype_of(result) not in FLOAT_DTYPES:
        return f"a fused op producing {dtype_of(result)}"
    if isinstance(op, Conv2dOp):
        from ziggurat.backends.tensorrt.converters.convolution import padded_weights_problem

        return padded_weights_problem(op.weight, list(ints(op.padding)))
    return None


def unary_post_op(ctx: ConversionContext, y: SSAValue, post: UnaryPostOpAttr) -> SSAValue:
    kind = post.kind.data
    suffix = f"post-op {kind}"
    simple = {"relu": A.kRELU, "sigmoid": A.kSIGMOID, "tanh": A.kTANH, "gelu_erf": A.kGELU_ERF,
              "gelu_tanh": A.kGELU_TANH}
    if kind in simple:
        return activation(ctx, y, simple[kind], suffix=suffix)
    if kind == "relu6":
        return activation(ctx, y, A.kCLIP, 0.0, 6.0, suffix=suffix)
    if kind == "hardsigmoid":
        return activation(ctx, y, A.kHARD_SIGMOID, 1.0 / 6.0, 0.5, suffix=suffix)
    if kind == "hardswish":
        gate = activation(ctx, y, A.kHARD_SIGMOID, 1.0 / 6.0, 0.5, suffix=f"{suffix} gate")
        return elementwise(ctx, y, gate, E.kPROD, suffix=suffix)
    if kind == "silu":
        gate = activation(ctx, y, A.kSIGMOID, suffix=f"{suffix} gate")
        return elementwise(ctx, y, gate, E.kPROD, suffix=suffix)
    if kind == "leaky_relu":
        return leaky(ctx, y, post.param("negative_slope"), suffix=suffix)
    low, high = (post.param("min_val"), post.param("max_val")) if kind == "hardtanh" else \
        (post.param("min"), post.param("max"))
    if math.isfinite(low) and math.isfinite(high) and low <= high:
        return activation(ctx, y, A.kCLIP, low, high, suffix=suffix)
    if low != -math.inf:
        y = elementwise(ctx, y, low, E.kMAX, suffix=f"{suffix} min")
    if high != math.inf:
        y = elementwise(ctx, y, high, E.kMIN, suffix=f"{suffix} max")
    return y


def post_ops(ctx: ConversionContext, op: FusedOp, y: SSAValue, other: SSAValue | None) -> SSAValue:
    """The op's post-ops, in order: unary -> activation layers, binary -> y +- alpha * other."""
    for post in op.post_ops.data:
        if isinstance(post, UnaryPostOpAttr):
            y = unary_post_op(ctx, y, post)
        else:
            assert isinstance(post, BinaryPostOpAttr) and other is not None
            alpha = post.alpha.value.data
            scaled: SSAValue = ctx.tensor(other)
            if alpha != 1.0:
                scaled = elementwise(ctx, scaled, alpha, E.kPROD, dtype=ctx.dtype(y), suffix="post-op alpha")
            kind = E.kSUM if post.kind.data == "add" else E.kSUB
            y = elementwise(ctx, y, scaled, kind, dtype=ctx.dtype(y), suffix=f"post-op {post.kind.data}")
    return y


@op_converter("fused.conv2d", validator=_unpacked)
def fused_conv2d(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    op = args.op
    assert isinstance(op, Conv2dOp)
    params = ConvParams(list(ints(op.stride)), list(ints(op.padding)), list(ints(op.dilation)), op.groups.value.data)
    y = convolve(ctx, op.input, op.weight, op.bias, params)
    return post_ops(ctx, op, y, op.other)


@op_converter("fused.linear", validator=_unpacked)
def fused_linear(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    op = args.op
    assert isinstance(op, LinearOp)
    y = matmul(ctx, op.input, op.weight, transpose_b=ctx.rank(op.weight) == 2, suffix="matmul")
    y = reshape_to_result(ctx, y)
    if op.bias is not None:
        y = elementwise(ctx, y, op.bias, E.kSUM, dtype=ctx.result_dtype(), suffix="bias")
    return post_ops(ctx, op, y, op.other)


@op_converter("fused.matmul", validator=_unpacked)
def fused_matmul(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    op = args.op
    assert isinstance(op, MatmulOp)
    dtype = ctx.result_dtype()
    y = reshape_to_result(ctx, matmul(ctx, op.a, op.b, suffix="matmul"))
    alpha, beta = op.alpha.value.data, op.beta.value.data
    if alpha != 1.0:
        y = elementwise(ctx, y, alpha, E.kPROD, dtype=dtype, suffix="alpha")
    if op.bias is not None and beta != 0.0:
        bias: SSAValue = ctx.tensor(op.bias)
        if beta != 1.0:
            bias = elementwise(ctx, bias, beta, E.kPROD, dtype=dtype, suffix="beta")
        y = elementwise(ctx, y, bias, E.kSUM, dtype=dtype, suffix="bias")
    return post_ops(ctx, op, y, op.other)
