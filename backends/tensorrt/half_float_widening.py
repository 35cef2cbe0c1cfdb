"""A bf16 or float16 op whose converter builds several computing layers is converted again in
float32, between casts: eager computes such an op in float32 and rounds its result once.

TensorRT rounds each layer's result to its type.  A converter that composes an op from layers
(``mish`` = softplus, tanh, product; ``log1p`` = log of 1 + x; ``selu``, ``expm1``, ``erfc``,
``log2``...) rounded a 16-bit op between them: ``F.mish(x.bfloat16())`` differed from eager by a
bf16 ulp on a third of its values, and ``log1p`` of a small bf16 value lost it (1 + x rounds to
1) -- wrong answers (fuzz seed 200).  So a converted op whose new layers hold two or more
computing layers with a 16-bit float result, or one and a 16-bit float constant (a scalar
rounded to 16 bits, where eager keeps it in float32), is converted again: its 16-bit float
operands cast to float32, the converter run on those (and told the op's 16-bit results are
float32, ``ConversionContext.widening``), and its results cast back, in place of the first
layers.

A 16-bit op whose eager kernel is not float32's rounded once (float16 erf, mish: the ops off
``dialects/torch/eager_half_floats.py``'s lists, which the CPU backend's ``widen-half-floats``
also leaves in torch) cannot get eager's answer from layers at all: it stays in torch, with its
reason (``rounds_inside_in_eager``).

GEMMs, convolutions and int8 Q/DQ keep their 16-bit layers: computing them in reduced precision
is what ``precision=`` asks of the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from xdsl.dialects.builtin import BFloat16Type, Float16Type, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import cast
from ziggurat.backends.tensorrt.registry import ConverterResult
from ziggurat.dialects import trt
from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.eager_half_floats import ROUND_ONCE, rounds_inside_for
from ziggurat.dialects.torch.op_registry import op_key

#: layers that compute no new value (data movement, selections, conversions, sources)
_MOVES = (trt.CastOp, trt.ShuffleOp, trt.SliceOp, trt.ConcatenationOp, trt.GatherOp, trt.IdentityOp,
          trt.ConstantOp, trt.ShapeOp, trt.PaddingOp, trt.SelectOp)
#: the layers whose reduced precision is the precision policy's (GEMMs, int8 Q/DQ)
_POLICY = (trt.ConvolutionOp, trt.DeconvolutionOp, trt.MatrixMultiplyOp, trt.EinsumOp, trt.QuantizeOp,
           trt.DequantizeOp)


def is_half_float(ty: Attribute) -> bool:
    return isinstance(ty, TensorType) and isinstance(ty.element_type, BFloat16Type | Float16Type)


def _half_result(op: Operation) -> bool:
    return any(is_half_float(r.type) for r in op.results)


def rounds_between(layers: Sequence[Operation]) -> bool:
    """Whether a converter's ``layers`` round a 16-bit float op where eager does not."""
    if any(isinstance(op, _POLICY) for op in layers):
        return False
    computing = [op for op in layers if _half_result(op) and not isinstance(op, _MOVES)]
    constants = [op for op in layers if isinstance(op, trt.ConstantOp) and _half_result(op)]
    return len(computing) >= 2 or (len(computing) == 1 and bool(constants))


def rounds_inside_in_eager(op: Operation, layers: Sequence[Operation]) -> str | None:
    """Why ``op``'s ``layers`` cannot give eager's 16-bit answer, or None: they compute a bf16 or
    float16 result (not by a GEMM), and eager's 16-bit kernel for ``op`` is not float32's rounded
    once (``dialects/torch/eager_half_floats.py``: it rounds inside, or its scalar and vector
    loops differ), as the CPU backend's ``widen-half-floats`` leaves such an op in torch."""
    if not any(is_half_float(r.type) for r in op.results) or any(isinstance(l, _POLICY) for l in layers):
        return None
    if not any(not isinstance(l, _MOVES) for l in layers):
        return None
    key = op_key(op)
    if key in ROUND_ONCE and not (isinstance(op, AtenOp) and rounds_inside_for(op)):
        return None
    return (f"{key} of bf16/float16: eager's 16-bit kernel does not compute it in float32 and round once "
            "(it rounds inside), so TensorRT's layers would not give its answer")


def convert_widened(ctx: ConversionContext, op: Operation, first: Sequence[Operation],
                    convert: Callable[[ConversionContext, ConverterArgs], ConverterResult]) -> ConverterResult:
    """``convert`` of ``op`` with its 16-bit float operands cast to float32, its 16-bit float
    results cast back from float32, in place of the layers of its ``first`` conversion."""
    ctx.discard(first)
    args = ConverterArgs(op)
    saved: dict[SSAValue, SSAValue | None] = {}
    for v in op.operands:
        if v not in saved and is_half_float(v.type):
            wide = cast(ctx, ctx.tensor(v), torch.float32, suffix="widened")
            saved[v] = ctx.values.get(v)
            ctx.values[v] = wide
    ctx.widening = True
    try:
        produced = convert(ctx, args)
    finally:
        ctx.widening = False
        for v, old in saved.items():
            if old is None:
                del ctx.values[v]
            else:
                ctx.values[v] = old
    results = [produced] if isinstance(produced, SSAValue) else list(produced)
    out: list[SSAValue | None] = []
    for torch_result, value in zip(op.results, results, strict=False):
        if value is not None and is_half_float(torch_result.type) and value.type != torch_result.type:
            value = cast(ctx, value, ctx.dtype(torch_result), suffix="rounded")
        out.append(value)
    if isinstance(produced, SSAValue):
        assert out[0] is not None
        return out[0]
    return out
