"""``fused.linear`` and ``fused.conv2d`` with an int8 weight (``KN32n4k``, ``prepack-weights``)
as ``loop.gemm`` calls of the int8 kernel (``backends/cpu/kernels/gemm_int8.py``; its AMX-INT8
products where the host has them and the OS grants the tiles, else AVX512-VNNI's: the spec's
``int8_kernel``, ``"amx"`` or ``"vnni"``): the
dequantized uint8 input is requantized exactly, the products summed in int32, the epilogue
(scales, bias, activation, residual, a following quantize -> dequantize pair: ``#fused.requantize``)
run in float32; ``#fused.quantize`` stores the output's uint8 integers, and a ``ui8`` input or
residual is read as bytes.  A host or ISA without AVX512-VNNI runs
the op in torch, on the float32 weight the operand holds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from xdsl.ir import Operation

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_int8 import int8_kernel_available
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.gemm_operands import float32_bias, matrix_view, residual_operand
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.tensors import BufferValue, TensorValue
from ziggurat.backends.cpu.lowering.views import permute, reshape, slice_dim
from ziggurat.dialects.fused import INPUT_QUANTIZATION_ATTR, OTHER_QUANTIZATION_ATTR, quantization_of

#: An input or residual: float32, or the uint8 integers a ``#fused.quantize`` stored
#: (``ziggurat.input_quantization``/``other_quantization`` dequantize them).
A_DTYPES = (torch.float32, torch.uint8)
#: A KxK convolution of at most this many input channels gathers its taps from the NCHW planes
#: (``Int8GemmSpec.a_nchw``).
PLANAR_CHANNELS = 4


def input_quantization(op: Operation) -> tuple[float, int]:
    quantization = quantization_of(op, INPUT_QUANTIZATION_ATTR)
    if quantization is None:
        raise NotLowerable(f"an int8 GEMM needs {INPUT_QUANTIZATION_ATTR} = [scale, zero_point] on its op")
    return quantization


def _require_kernel(ctx: LoweringContext) -> None:
    if not int8_kernel_available(ctx.options.isa):
        raise NotLowerable("an int8 GEMM needs the avx512 ISA on a host with AVX512-VNNI")


def int8_kernel(isa: Isa, k: int) -> str:
    """The int8 kernel's products for code of ``isa`` on this host for a GEMM of depth ``k``:
    ``"amx"`` where :func:`~ziggurat.backends.cpu.kernels.amx.host_int8_kernel` chooses it
    (AMX-INT8, the tile permission granted, ``ZIGGURAT_DISABLE_AMX`` unset) for the avx512 ISA
    and ``k`` is deep enough (:func:`~ziggurat.backends.cpu.kernels.amx.int8_kernel_for_depth`),
    else ``"vnni"``."""
    if isa != Isa.AVX512:
        return "vnni"
    return "amx" if amx.int8_kernel_for_depth(amx.host_int8_kernel(), k) == "amx" else "vnni"


def _residual_channels_last(ctx: LoweringContext, epi: Any, out_shape: Sequence[int]) -> None:
    """A convolution's residual (NCHW, the output's shape) as the GEMM's ``[N*H*W, C]`` rows."""
    residual = epi.other
    if epi.binary is None or residual is None:
        return
    if residual.dtype not in A_DTYPES or tuple(residual.shape) != tuple(out_shape):
        raise NotLowerable("an int8 convolution's residual must be float32 (or its uint8 integers) of the output's shape")
    n, c, h, w = out_shape
    epi.other = reshape(ctx, permute(ctx, residual, [0, 2, 3, 1]), (n * h * w, c))


def int8_linear(ctx: LoweringContext, op: Operation, x: TensorValue, w: TensorValue, n: int,
                out_shape: Sequence[int], epi: Any, bias: TensorValue | None = None,
                a_conv: tuple[int, ...] | None = None, k: int | None = None, m: int | None = None,
                a_nchw: bool = False) -> TensorValue:
    """``x @ W^T`` (``bias``, when given, instead of the epilogue's) into a buffer of ``out_shape``
    (``[..., n]``); with ``a_conv``, ``x`` is the NHWC input of the convolution whose implicit
    im2col (``m`` rows of ``k``) is A."""
    _require_kernel(ctx)
    if x.dtype not in A_DTYPES or w.buffer is None:
        raise NotLowerable("an int8 GEMM takes a float32 input (or its uint8 integers) and a constant packed weight")
    a_scale, zero_point = input_quantization(op)
    if a_conv is None:
        k = x.shape[-1]
        m = math.prod(x.shape[:-1])
    assert k is not None and m is not None
    if min(m, n, k) < 1:
        raise NotLowerable("an int8 GEMM with an empty dimension")
    spec: dict[str, Any] = {"int8_kernel": int8_kernel(ctx.options.isa, k), "m": m, "n": n, "k": k, "ldc": n,
                            "a_scale": a_scale, "a_zero_point": zero_point}
    if x.dtype == torch.uint8:
        spec["a_u8"] = True
    if a_conv is None:
        a = reshape(ctx, x, (m, k)) if x.rank != 2 else x
        av = matrix_view(ctx, a, (), allow_transposed=False)
        a_operand = av.operand
        spec["lda"] = av.row_stride
    else:
        assert x.buffer is not None
        a_operand = GemmOperand(x.buffer)
        spec["a_conv"] = a_conv
        if a_nchw:
            spec["a_nchw"] = True
    bias_operand = None
    bias = bias if bias is not None else epi.bias
    if bias is not None:
        bias_operand = GemmOperand(float32_bias(ctx, bias, n, "int8"))
        spec["bias"] = True
    if epi.unary is not None:
        spec["unary"] = epi.unary
        params = {k_: v for k_, v in epi.unary_params.items() if v is not None}
        if params:
            spec["unary_params"] = params
    other_operand = None
    if epi.binary is not None and epi.other is not None:
        if epi.other.dtype == torch.uint8:
            quantization = quantization_of(op, OTHER_QUANTIZATION_ATTR)
            if quantization is None:
                raise NotLowerable(f"an int8 GEMM's uint8 residual needs {OTHER_QUANTIZATION_ATTR}")
            spec["other_quantization"] = quantization
        elif epi.other.dtype != torch.float32:
            raise NotLowerable(f"an int8 GEMM's residual must be float32 (or its uint8 integers), got {epi.other.dtype}")
        other_operand, rs, cs, _ = residual_operand(ctx, epi.other, (), m, n, out_shape, "int8", A_DTYPES)
        spec.update(binary=epi.binary, alpha=float(epi.alpha), other_strides=(rs, cs))
        if epi.binary_first:
            spec["binary_first"] = True
    if epi.requantize is not None:
        spec["requantize"] = tuple(epi.requantize)
    if epi.store_u8:
        spec["store_u8"] = True
    out = ctx.new_buffer(out_shape, torch.uint8 if epi.store_u8 else torch.float32, "mm")
    ctx.nodes.append(GemmNode(ctx.unique_name(f"gemm_{ctx.current_origin or 'mm'}"), a_operand, GemmOperand(w.buffer),
                              GemmOperand(out), bias_operand, other_operand, spec, (ctx.current_origin,)))
    return BufferValue(out)


def int8_pointwise(ctx: LoweringContext, op: Operation, x: TensorValue, w: TensorValue, bias: TensorValue | None,
                   w_shape: Sequence[int], stride: Sequence[int], out_shape: Sequence[int], epi: Any) -> TensorValue:
    """A 1x1 convolution (no padding, one group: ``prepack-weights`` packs no other) with a
    ``KN32n4k`` weight: the int8 GEMM over the input's pixels as rows, channels-last as the
    float32 1x1 path (``conv.conv_gemm``): ``[N*H*W, C] @ W^T`` into an NHWC buffer, read
    through an NCHW view.  A strided one takes every s-th pixel first."""
    _require_kernel(ctx)
    if x.dtype not in A_DTYPES or w.buffer is None or x.rank != 4 or tuple(w_shape[2:]) != (1, 1):
        raise NotLowerable("an int8 convolution takes a float32 (or uint8) NCHW input and a constant packed 1x1 weight")
    for d, s in enumerate(stride):
        if s != 1:
            x = slice_dim(ctx, x, 2 + d, 0, s, int(out_shape[2 + d]))
    n, cin, h, wd = x.shape
    cout = int(w_shape[0])
    if tuple(out_shape) != (n, cout, h, wd):
        raise NotLowerable("an int8 1x1 convolution keeps the (strided) input's spatial size")
    m = n * h * wd
    rows = reshape(ctx, permute(ctx, x, [0, 2, 3, 1]), (m, cin))
    _residual_channels_last(ctx, epi, out_shape)
    out = int8_linear(ctx, op, rows, w, cout, (m, cout), epi, bias=bias)
    return permute(ctx, reshape(ctx, out, (n, h, wd, cout)), [0, 3, 1, 2])


def int8_conv(ctx: LoweringContext, op: Operation, x: TensorValue, w: TensorValue, bias: TensorValue | None,
              w_shape: Sequence[int], stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
              out_shape: Sequence[int], epi: Any) -> TensorValue:
    """A convolution of one group with a ``KN32n4k`` weight: a 1x1 one without padding on
    :func:`int8_pointwise`, any other on the int8 GEMM over the implicit im2col of the NHWC
    input (``Int8GemmSpec.a_conv``; of the NCHW one for at most ``PLANAR_CHANNELS`` channels),
    its output NHWC read through an NCHW view."""
    kh, kw = int(w_shape[2]), int(w_shape[3])
    if (kh, kw) == (1, 1) and not any(padding):
        return int8_pointwise(ctx, op, x, w, bias, w_shape, stride, out_shape, epi)
    _require_kernel(ctx)
    if x.dtype not in A_DTYPES or w.buffer is None or x.rank != 4:
        raise NotLowerable("an int8 convolution takes a float32 (or uint8) NCHW input and a constant packed weight")
    n, cin, h, wd = x.shape
    cout, oh, ow = int(w_shape[0]), int(out_shape[2]), int(out_shape[3])
    m = n * oh * ow
    planes = cin <= PLANAR_CHANNELS
    # a few channels (an RGB input) are gathered from their planes: a channels-last copy of them
    # would be a transposition vectorized over those few channels
    src = ctx.realize(x, "nchw") if planes else ctx.realize(permute(ctx, x, [0, 2, 3, 1]), "nhwc")
    _residual_channels_last(ctx, epi, out_shape)
    conv = (h, wd, cin, kh, kw, int(stride[0]), int(stride[1]), int(padding[0]), int(padding[1]),
            int(dilation[0]), int(dilation[1]), oh, ow)
    out = int8_linear(ctx, op, BufferValue(src), w, cout, (m, cout), epi, bias=bias, a_conv=conv,
                      k=cin * kh * kw, m=m, a_nchw=planes)
    return permute(ctx, reshape(ctx, out, (n, oh, ow, cout)), [0, 3, 1, 2])
