"""The ``fused`` dialect (graph-level GEMM/conv ops with post-ops) on the GEMM library.

Post-ops become the GEMM epilogue: ``#fused.unary`` -> ``GemmSpec.unary``, ``#fused.binary``
-> ``GemmSpec.binary`` with ``other`` read through its (broadcast) strides, in the
post-op order (``binary_first``).  ``#fused.requantize`` is the int8 kernel's last epilogue
step (``Int8GemmSpec.requantize``); no other kernel takes it (``fuse-requantize`` puts it on
int8 GEMMs only), so an op with it and another weight runs in torch.  Prepacked weights
(``weight_layout = "KN{nr}n"``) are passed as packed B operands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Operation

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.conv_native import native_depthwise
from ziggurat.backends.cpu.lowering.linalg import Epilogue, PackedB, float32_or_bf16, linear, matmul
from ziggurat.backends.cpu.lowering.ops import add, cast, mul
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import BufferValue, TensorValue
from ziggurat.dialects.fused.layouts import INT8_LAYOUTS, INT8_LINEAR
from ziggurat.dialects.fused import (
    BinaryPostOpAttr,
    Conv2dOp,
    FusedOp,
    LinearOp,
    MatmulOp,
    QuantizePostOpAttr,
    INPUT_QUANTIZATION_ATTR,
    RequantizePostOpAttr,
    UnaryPostOpAttr,
    quantization_of,
)
from ziggurat.dialects.loop.syntax import int_values
from ziggurat.ir.types import ui8


def epilogue_of(op: FusedOp, args: LoweringArgs) -> Epilogue:
    epi = Epilogue()
    seen_binary = False
    for post in op.post_ops.data:
        if isinstance(post, UnaryPostOpAttr):
            epi.unary = post.kind.data
            from ziggurat.dialects.fused import UNARY_KINDS

            names = UNARY_KINDS[post.kind.data]
            # an infinite clamp bound is no bound; other parameters keep their value (an
            # infinite leaky_relu slope or hardtanh bound is not the kind's default)
            epi.unary_params = {n: (None if math.isinf(v) and post.kind.data == "clamp" else v)
                                for n, v in zip(names, post.values, strict=True)}
            epi.binary_first = seen_binary
        elif isinstance(post, BinaryPostOpAttr):
            seen_binary = True
            epi.binary = post.kind.data
            epi.alpha = float(post.alpha.value.data)
            epi.other = args.value_of(op.other)  # pyright: ignore[reportAttributeAccessIssue]
        elif isinstance(post, RequantizePostOpAttr | QuantizePostOpAttr):
            epi.requantize = post.values
            epi.store_u8 = isinstance(post, QuantizePostOpAttr)
        else:
            raise NotLowerable(f"unknown post-op {post}")
    if epi.unary is None:
        epi.binary_first = False
    return epi


def packed_operand(op: FusedOp, weight: TensorValue) -> PackedB | None:
    layout = op.weight_layout
    if layout is None:
        return None
    name = layout.data
    if not name.startswith("KN") or not name.endswith("n"):
        raise NotLowerable(f"weight layout '{name}' is not a GEMM panel layout")
    buf = weight.buffer
    if buf is None:
        raise NotLowerable("a packed weight must be a constant")
    return PackedB(buf, int(name[2:-1]))


def _logical_shape(op: Operation) -> tuple[int, ...]:
    shape = op.weight_shape  # pyright: ignore[reportAttributeAccessIssue]
    return tuple(int(v) for v in shape.get_values()) if shape is not None else ()


def _validate(args: LoweringArgs) -> str | None:
    layout = args.op.properties.get("weight_layout")
    if isinstance(layout, StringAttr) and layout.data in INT8_LAYOUTS:
        return None  # the int8 kernels' operands (lowering/gemm_int8.py checks them)
    op = args.op
    quantized = isinstance(op, FusedOp) and (op.requantize() is not None or any(
        isinstance(v.type, TensorType) and v.type.get_element_type() == ui8 for v in op.operands))
    if quantized and native_depthwise(op):
        return None  # the native depthwise kernel's (lowering/conv_native.py checks the rest)
    if quantized:
        return "a #fused.requantize/quantize post-op or a ui8 operand runs on the int8 or depthwise kernels only"
    return float32_or_bf16(args)


@lowering("fused.linear", validator=_validate)
def fused_linear(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    op = args.op
    assert isinstance(op, LinearOp)
    x = args.value_of(op.input)
    w = args.value_of(op.weight)
    epi = epilogue_of(op, args)
    epi.bias = args.value_of(op.bias)
    if op.weight_layout is not None and op.weight_layout.data == INT8_LINEAR:
        from ziggurat.backends.cpu.lowering.gemm_int8 import int8_linear

        return int8_linear(ctx, op, x, w, _logical_shape(op)[0], args.out_shape, epi)
    packed = packed_operand(op, w)
    n = _logical_shape(op)[0] if packed is not None else w.shape[0]
    return linear(ctx, x, packed or w, n, args.out_shape, epi)


@lowering("fused.matmul", validator=_validate)
def fused_matmul(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    op = args.op
    assert isinstance(op, MatmulOp)
    a = args.value_of(op.a)
    b = args.value_of(op.b)
    bias = args.value_of(op.bias)
    alpha, beta = float(op.alpha.value.data), float(op.beta.value.data)
    epi = epilogue_of(op, args)
    packed = packed_operand(op, b)
    b_shape = _logical_shape(op) if packed is not None else None
    simple = alpha == 1.0 and (bias is None or beta == 1.0)
    n = (b_shape or b.shape)[-1]
    if simple and bias is not None and bias.numel == n and (bias.rank == 1 or all(d == 1 for d in bias.shape[:-1])):
        epi.bias = bias
        bias = None
    if a.dtype == torch.bfloat16 and args.out_dtype == torch.float32:  # bf16 products, float32 out
        from ziggurat.backends.cpu.lowering.gemm_bf16 import bf16_matmul

        if packed is not None:
            raise NotLowerable("a bf16 fused.matmul with a weight packed for the float32 kernels")
        return bf16_matmul(ctx, a, b, args.out_shape, epi, scale=alpha, addend=bias, beta=beta, out_dtype=torch.float32)
    if simple and bias is None:
        return matmul(ctx, a, packed or b, args.out_shape, epi, b_shape)
    if args.out_dtype == torch.bfloat16:
        from ziggurat.backends.cpu.lowering.gemm_bf16 import bf16_matmul

        if packed is not None:
            raise NotLowerable("a bf16 fused.matmul with a weight packed for the float32 kernels")
        return bf16_matmul(ctx, a, b, args.out_shape, epi, scale=alpha, addend=bias, beta=beta)
    from ziggurat.backends.cpu.lowering.pointwise import broadcast_index

    prod = matmul(ctx, a, packed or b, args.out_shape, None, b_shape)
    other = epi.other
    shape = args.out_shape
    dt = args.out_dtype

    def element(idx):  # type: ignore[no-untyped-def]
        v = prod.load(idx)
        if alpha != 1:
            v = mul(v, alpha, dt)
        if bias is not None:
            bv = cast(bias.load(broadcast_index(idx, bias.shape, shape)), dt)
            v = add(v, mul(bv, beta, dt) if beta != 1 else bv, dt)
        ov = cast(other.load(broadcast_index(idx, other.shape, shape)), dt) if other is not None else None
        return epi.apply(v, ov)

    return ctx.lazy(shape, dt, element, [prod])


@lowering("fused.conv2d", validator=_validate)
def fused_conv2d(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    from ziggurat.backends.cpu.lowering.conv import convolution

    op = args.op
    assert isinstance(op, Conv2dOp)
    x = args.value_of(op.input)
    w = args.value_of(op.weight)
    bias = args.value_of(op.bias)
    epi = epilogue_of(op, args)
    ints = int_values(op.stride)
    padding = int_values(op.padding)
    dilation = int_values(op.dilation)
    groups = int(op.groups.value.data)
    if op.weight_layout is not None and op.weight_layout.data == INT8_LINEAR:
        from ziggurat.backends.cpu.lowering.gemm_int8 import int8_conv

        return int8_conv(ctx, op, x, w, bias, _logical_shape(op), int_values(op.stride), int_values(op.padding),
                         int_values(op.dilation), args.out_shape, epi)
    if x.dtype == torch.uint8 or epi.requantize is not None:
        from ziggurat.backends.cpu.lowering.conv_native import ConvGeometry, quantized_depthwise

        epi.input_quantization = quantization_of(op, INPUT_QUANTIZATION_ATTR) if x.dtype == torch.uint8 else None
        geometry = ConvGeometry(x, w.shape, ints, padding, dilation, groups, args.out_shape)
        return quantized_depthwise(ctx, x, w, bias, geometry, epi)
    if args.out_dtype == torch.bfloat16 and any(padding):
        from ziggurat.backends.cpu.lowering.conv import padded_taps_problem

        # the bf16 kernels bypass ``convolution``, which checks this: the op runs as eager's
        # (fuzz seed 144, program 33: eager NaN, the bf16 depthwise kernel the bias)
        problem = padded_taps_problem(w)
        if problem is not None:
            raise NotLowerable(problem)
    if args.out_dtype == torch.bfloat16 and groups > 1:
        return _bf16_grouped_conv(ctx, x, w, bias, ints, padding, dilation, groups, args.out_shape, epi)
    if args.out_dtype == torch.bfloat16:
        from ziggurat.backends.cpu.lowering.conv_bf16 import bf16_convolution

        return bf16_convolution(ctx, x, w, bias, ints, padding, dilation, groups, args.out_shape, epi)
    packed = None
    w_shape = None
    if op.weight_layout is not None:
        p = packed_operand(op, w)
        assert p is not None
        packed = (w, p.nr)
        w_shape = _logical_shape(op)
    return convolution(ctx, x, w, bias, ints, padding, dilation, groups, args.out_shape, epi, packed, w_shape)


def _bf16_grouped_conv(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None,
                       stride: list[int], padding: list[int], dilation: list[int], groups: int,
                       out_shape: Sequence[int], epi: Epilogue) -> TensorValue:
    """A bf16 grouped convolution (``widen-half-floats`` keeps depthwise ones bf16): on the
    depthwise kernel reading and writing bf16 (``conv_native.bf16_depthwise``), else the float32
    convolution of the widened operands, rounded once.  Eager's bf16 convolution sums the exact
    products in float32 and rounds once; the fused post-ops commute with that rounding."""
    from ziggurat.backends.cpu.kernels.unary import commutes_with_rounding
    from ziggurat.backends.cpu.lowering.constants import weight_tensor
    from ziggurat.backends.cpu.lowering.conv import convolution
    from ziggurat.backends.cpu.lowering.conv_native import ConvGeometry, as_float32, bf16_depthwise

    if epi.binary is not None or (epi.unary is not None
                                  and not commutes_with_rounding(epi.unary, epi.unary_params.values(), "bf16")):
        # eager rounds the convolution before them (split-half-float-epilogues gives them back)
        raise NotLowerable("a bf16 grouped convolution's fused post-ops that do not commute with its "
                           "rounding run in torch")
    out = bf16_depthwise(ctx, x, w, bias, ConvGeometry(x, w.shape, stride, padding, dilation, groups, out_shape), epi)
    if out is not None:
        return out
    tensor = weight_tensor(w)
    if tensor is None:
        raise NotLowerable("a bf16 grouped convolution with a computed weight runs in torch")
    w32 = BufferValue(ctx.constant(tensor.float(), (w.buffer.name if w.buffer else "weight") + "_f32"))
    y = convolution(ctx, as_float32(ctx, x), w32, as_float32(ctx, bias) if bias is not None else None, stride, padding,
                    dilation, groups, out_shape, epi, None, None)
    return ctx.lazy(y.shape, torch.bfloat16, lambda idx: cast(y.load(idx), torch.bfloat16), [y])
