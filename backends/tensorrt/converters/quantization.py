"""PT2E's quantize -> dequantize pairs as TensorRT Q/DQ layers (explicit quantization).

``decompose-quantize`` turns each pair into the float32 ops it computes, ending in
``aten::mul.Scalar`` by the scale (``passes/decompose_quantize.py``: :func:`decomposed_pair`
reads them back).  This converter takes that last op and builds the pair again as layers
TensorRT runs in int8, equal to eager bit for bit::

    t = x * (1 / scale)                     # eager's float32 product, so the engine rounds what eager rounds
    t = select(t == t, clip(t, lo, hi), -zp)  # only where [lo, hi] is narrower than int8, or zp != 0
    y = dequantize(quantize(t, scale=1), scale)

with ``lo = quant_min - zp`` and ``hi = quant_max - zp``: between the two layers the value is
``q - zp``, an int8 when ``[lo, hi]`` (and ``-zp``, NaN's value) lie in ``[-128, 127]``.  The
clip and the NaN test are needed only for a narrower range or a zero point (TensorRT takes no
zero point for int8): a symmetric int8 pair (``XNNPACKQuantizer``'s, zp 0 in ``[-128, 127]``)
is the two layers alone, and uint8 with zero point 128 fits too.  A pair whose range does not
fit int8 (uint8 with another zero point: X86InductorQuantizer's activations) keeps its float32
layers, one per op, counted in the compile report.

Weights come as int8 constants and a per-channel dequantize (``ConversionContext``: a literal
with ``ziggurat.row_scales``), so a convolution or linear between a pair and int8 weights is
TensorRT's int8 pattern.
"""

from __future__ import annotations

import torch
from xdsl.ir import OpResult, SSAValue

from ziggurat.backends.tensorrt.conversion_context import STATISTICS, ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import activation, elementwise, select
from ziggurat.backends.tensorrt.converters.elementwise import mul
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import ActivationType, DequantizeOp, ElementWiseOperation, QuantizeOp
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of
from ziggurat.passes.decompose_quantize import DecomposedPair, decomposed_pair

A = ActivationType
E = ElementWiseOperation
INT8 = (-128, 127)


def int8_range(pair: DecomposedPair) -> tuple[int, int]:
    """``[quant_min - zp, quant_max - zp]``: the integers between the pair's two layers."""
    return pair.quant_min - pair.zero_point, pair.quant_max - pair.zero_point


def int8_problem(pair: DecomposedPair) -> str | None:
    """Why the pair is not TensorRT int8 Q/DQ, or None."""
    if dtype_of(pair.x.type) != torch.float32:
        return f"a pair quantizing {dtype_of(pair.x.type)} (TensorRT Q/DQ here take float32)"
    lo, hi = int8_range(pair)
    if not (INT8[0] <= lo and hi <= INT8[1] and INT8[0] <= -pair.zero_point <= INT8[1]):
        return (f"quantization to [{pair.quant_min}, {pair.quant_max}] with zero point {pair.zero_point} spans "
                f"[{lo}, {hi}] around it, outside TensorRT's int8 [-128, 127] (no zero point): "
                "the pair stays float32 layers")
    return None


def _pair_validator(args: ConverterArgs) -> str | None:
    if decomposed_pair(args.op.results[0]) is None:
        return "not the last op of a decomposed quantize -> dequantize pair"
    return None


def quantize_dequantize(ctx: ConversionContext, x: SSAValue, pair: DecomposedPair) -> SSAValue:
    """The pair's Q/DQ layers on the trt value ``x`` (see the module's docstring)."""
    lo, hi = int8_range(pair)
    t = elementwise(ctx, x, pair.multiplier, E.kPROD, dtype=torch.float32, suffix="x * (1 / scale)")
    if (lo, hi) != INT8 or pair.zero_point != 0:
        number = elementwise(ctx, t, t, E.kEQUAL, suffix="not NaN")
        clipped = t if (lo, hi) == INT8 else activation(ctx, t, A.kCLIP, float(lo), float(hi), suffix="clamp")
        t = select(ctx, number, clipped, float(-pair.zero_point), dtype=torch.float32, suffix="NaN -> zero point")
    one = ctx.constant(torch.tensor(1.0, dtype=torch.float32), "quantize scale")
    q = ctx.add(QuantizeOp(t, one, name=ctx.name("quantize"))).output
    scale = ctx.constant(torch.tensor(pair.scale, dtype=torch.float32), "dequantize scale")
    return ctx.add(DequantizeOp(q, scale, name=ctx.name("dequantize"))).output


@converter("aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", validator=_pair_validator, priority=1)
def quantize_dequantize_pair(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """The pair's Q/DQ layers; its last product alone (the pair stays float32 layers, one per op)
    where its integers do not fit TensorRT's int8 (:func:`int8_problem`) or some of its ops run
    outside this segment (``torch_executed_ops``)."""
    pair = decomposed_pair(args.op.results[0])
    assert pair is not None
    if int8_problem(pair) is not None:
        record(STATISTICS, "quantize-dequantize pairs kept float32 (their integers do not fit int8 without a zero point)")
        return mul(ctx, args)
    if not all(isinstance(ctx.values.get(op.results[0]), OpResult) for op in pair.ops[:-1]):
        return mul(ctx, args)
    record(STATISTICS, "quantize-dequantize pairs as int8 Q/DQ layers")
    return quantize_dequantize(ctx, ctx.tensor(pair.x), pair)
