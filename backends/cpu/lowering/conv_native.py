"""Convolutions on the native channels-last kernels (``kernels/conv_igemm.py``, ``depthwise.py``).

Both read the input as an NHWC view of a buffer (any pixel/row/batch strides, unit channel
stride: the channels-last output of an earlier convolution is read in place; an NCHW
tensor is first copied channels-last) and write a channels-last ``[N, OH, OW, O]`` buffer,
returned as its NCHW view.  Bias, activation and residual run in the kernel's epilogue.

* Regular and grouped convolutions: implicit GEMM, one call per group, over the prepacked
  ``KN{nr}n`` panels (``prepack-weights``; other constant weights are packed here).  An input
  with few channels per group (a network's RGB stem) is copied channels-last *with* its
  zero padding, so that a whole kernel row is one contiguous run of K.
* Depthwise convolutions (one input channel per group, multiplier 1): the weight is stored
  tap-major with channels padded to the vector width.

A 1-d convolution is the 2-d one with a single row.  Everything else (3-d, the scalar ISA,
weights that are not constants) stays on the im2col path of ``conv.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import math

import torch
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation

from ziggurat.backends.cpu.isa import Isa, vector_width
from ziggurat.backends.cpu.kernels.conv_igemm import igemm_supported, panel_width
from ziggurat.backends.cpu.kernels.conv_spec import ConvSpecError, conv_spec_from_dict
from ziggurat.backends.cpu.kernels.depthwise import depthwise_supported, pack_depthwise_weight
from ziggurat.backends.cpu.lowering.constants import weight_tensor
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.gemm_operands import float32_bias
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.ops import cast, load_or
from ziggurat.backends.cpu.lowering.tensors import BufferValue, Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Buffer, LoweringBug, Value
from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.views import permute, reshape
from ziggurat.dialects.fused import is_depthwise_conv
from ziggurat.dialects.fused.pack import pack_conv_weight_gemm

if TYPE_CHECKING:
    from ziggurat.backends.cpu.lowering.linalg import Epilogue

F32 = torch.float32
U8 = torch.uint8
BF16 = torch.bfloat16
#: Channels per group below which the input is copied padded and K runs over whole kernel rows.
ROW_SEGMENT_CHANNELS = 16


class ConvGeometry:
    def __init__(self, x: TensorValue, w_shape: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                 dilation: Sequence[int], groups: int, out_shape: Sequence[int]) -> None:
        self.k = len(w_shape) - 2
        self.n, self.c = x.shape[0], x.shape[1]
        self.o = w_shape[0]
        self.cg = w_shape[1]
        self.ks = list(w_shape[2:])
        self.stride, self.padding, self.dilation = list(stride), list(padding), list(dilation)
        self.groups = groups
        self.og = self.o // groups
        self.in_sp = list(x.shape[2:])
        self.out_sp = list(out_shape[2:])
        self.p = math.prod(self.out_sp)
        self.kk = math.prod(self.ks) * self.cg


class NhwcView:
    """``buffer`` read as ``[N, H, W, C]`` from ``offset`` with strides ``(batch, row, pixel, 1)``."""

    def __init__(self, buffer: Buffer, offset: int, batch: int, row: int, pixel: int) -> None:
        self.buffer, self.offset, self.batch, self.row, self.pixel = buffer, offset, batch, row, pixel


def _as_2d(g: ConvGeometry) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """(in_sp, out_sp, ks, stride, padding, dilation) with a leading unit row for 1-d."""
    if g.k == 2:
        return g.in_sp, g.out_sp, g.ks, g.stride, g.padding, g.dilation
    return [1, *g.in_sp], [1, *g.out_sp], [1, *g.ks], [1, *g.stride], [0, *g.padding], [1, *g.dilation]


def native_applicable(ctx: LoweringContext, g: ConvGeometry) -> bool:
    return g.k in (1, 2) and igemm_supported(ctx.options.isa)


def is_depthwise(g: ConvGeometry) -> bool:
    return g.groups > 1 and g.cg == 1 and g.og == 1


def native_depthwise(op: Operation) -> bool:
    """A depthwise convolution the native depthwise kernel takes as it is written: a float32
    weight ``[C, 1, kh, kw]`` (a multiplier of 1), unpacked."""
    if not is_depthwise_conv(op):
        return False
    w = op.operands[1].type
    assert isinstance(w, TensorType)
    return w.get_element_type() == f32 and w.get_shape()[0] == op.operands[0].type.get_shape()[1]  # pyright: ignore


def nhwc_view(ctx: LoweringContext, x: TensorValue, g: ConvGeometry) -> NhwcView:
    """``x`` ([N, C, *sp]) as a channels-last view (realized channels-last if it is not one)."""
    sp = _as_2d(g)[0]
    x4 = x if g.k == 2 else reshape(ctx, x, (g.n, g.c, 1, sp[1]))
    nhwc = permute(ctx, x4, [0, 2, 3, 1])
    view = ctx.strided_view(nhwc)
    if view is not None and nhwc.dtype in (F32, U8, BF16) and view[0].dtype == nhwc.dtype:
        strides = kernel_strides(nhwc.shape, view[2])
        if strides is not None:
            return NhwcView(view[0], view[1], *strides)
    # a uint8 input holds quantized integers (the depthwise kernel dequantizes them), a bf16 one
    # bf16 values (the bf16 depthwise call widens them): copied as they are
    buf = ctx.realize(nhwc if nhwc.dtype in (U8, BF16) else as_float32(ctx, nhwc), "nhwc")
    h, w, c = nhwc.shape[1:]
    return NhwcView(buf, 0, h * w * c, w * c, c)


def kernel_strides(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int, int] | None:
    """The ``(batch, row, pixel)`` strides with which the kernels read an ``[N, H, W, C]`` view
    of a buffer with ``strides``, or None when they cannot read it in place.  They take
    channels at unit stride and each pixel, row and image at a positive stride, a pixel's
    at least ``C`` (``ConvSpec``: a stride of 0 means "dense").  The stride of a dim of
    size 1 is never stepped over, whatever it is (a one-pixel input's pixel stride is 1):
    it reads as the dense one."""
    n, h, w, c = shape
    if c > 1 and strides[3] != 1:
        return None
    pixel = strides[2] if w > 1 else c
    row = strides[1] if h > 1 else w * pixel
    batch = strides[0] if n > 1 else h * row
    if pixel < c or row < 1 or batch < 1:
        return None  # pixels that overlap, or a broadcast (stride 0) dim: read from a copy
    return batch, row, pixel


def as_float32(ctx: LoweringContext, t: TensorValue) -> TensorValue:
    """``t`` cast to float32 element by element (itself when it is float32)."""
    if t.dtype == F32:
        return t
    return ctx.lazy(t.shape, F32, lambda idx: cast(t.load(idx), F32), [t])


def _padded_nhwc(ctx: LoweringContext, x: TensorValue, g: ConvGeometry) -> Buffer:
    """``x`` copied channels-last with its zero padding: ``[N, H+2ph, (W+2pw)*C]``."""
    sp, _, _, _, pad, _ = _as_2d(g)
    hp, wp, c = sp[0] + 2 * pad[0], sp[1] + 2 * pad[1], g.c
    x4 = x if g.k == 2 else reshape(ctx, x, (g.n, g.c, 1, sp[1]))

    def element(idx: Index) -> Value:
        n, y, j = (IndexExpr.of(i) for i in idx)
        return cast(load_or(x4, [n, j % c, y - pad[0], j // c - pad[1]], 0.0), F32)

    return ctx.realize(ctx.lazy((g.n, hp, wp * c), F32, element, [x]), "padded")


def _gemm_panels(ctx: LoweringContext, w: TensorValue, g: ConvGeometry,
                 packed: tuple[TensorValue, int] | None) -> Buffer | None:
    """The per-group ``KN{nr}n`` panels with the kernel's panel width."""
    nr = panel_width(ctx.options.isa)
    if packed is not None and packed[1] == nr and packed[0].buffer is not None:
        return packed[0].buffer
    tensor = weight_tensor(w)
    if tensor is None or tensor.dtype != F32:
        return None
    if packed is not None:  # packed for another panel width: back to the logical weight first
        from ziggurat.dialects.fused.pack import unpack_conv_weight_gemm

        tensor = unpack_conv_weight_gemm(tensor, (g.o, g.cg, *_as_2d(g)[2]), g.groups)  # type: ignore[arg-type]
    logical = tensor.reshape(g.o, g.cg, *_as_2d(g)[2])
    name = (w.buffer.name if w.buffer else "weight") + f"_KN{nr}n"
    return ctx.constant(pack_conv_weight_gemm(logical, nr, g.groups), name)


def _epilogue_spec(ctx: LoweringContext, epi: Epilogue, g: ConvGeometry,
                   spec: dict[str, Any]) -> tuple[Buffer, int] | None:
    """Adds the activation and residual to ``spec``; returns the residual operand."""
    if epi.unary is not None:
        spec["unary"] = epi.unary
        params = {n: v for n, v in epi.unary_params.items() if v is not None}
        if params:
            spec["unary_params"] = params
    if epi.binary is None or epi.other is None:
        return None
    view = _residual_view(ctx, epi.other, g)
    spec.update(binary=epi.binary, alpha=float(epi.alpha), other_pixel=view[2])
    if epi.binary_first:
        spec["binary_first"] = True
    return view[0], view[1]


def _residual_view(ctx: LoweringContext, other: TensorValue, g: ConvGeometry) -> tuple[Buffer, int, int]:
    """``other`` broadcast to the output as ``(buffer, offset, pixel stride)`` channels-last."""
    from ziggurat.backends.cpu.lowering.views import expand

    out_shape = (g.n, g.o, *g.out_sp)
    full = expand(ctx, other, out_shape) if other.shape != out_shape else other
    flat = reshape(ctx, permute(ctx, full, [0, *range(2, 2 + g.k), 1]), (g.n * g.p, g.o))
    view = ctx.strided_view(flat)
    if view is not None and full.dtype == F32 and view[0].dtype == F32:
        buf, off, (ps, cs) = view
        if cs == 1 and ps >= g.o:
            return buf, off, ps
    buf = ctx.realize(as_float32(ctx, flat), "other")
    return buf, 0, g.o


def conv_native(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None, g: ConvGeometry,
                epi: Epilogue, packed: tuple[TensorValue, int] | None) -> TensorValue | None:
    """The convolution on the native kernels, or None when they do not take it."""
    if not native_applicable(ctx, g):
        return None
    if is_depthwise(g):
        if not depthwise_supported(ctx.options.isa):
            return None
        tensor = weight_tensor(w)
        if tensor is None or tensor.dtype != F32 or packed is not None:
            return None
        weight = ctx.constant(pack_depthwise_weight(tensor.reshape(g.o, 1, *_as_2d(g)[2]),
                                                    vector_width(ctx.options.isa, 32)),
                              (w.buffer.name if w.buffer else "weight") + "_dw")
        return _emit(ctx, x, g, epi, bias, "depthwise", weight, [0])
    panels = _gemm_panels(ctx, w, g, packed)
    if panels is None:
        return None
    k_per_group = panels.shape[-2] * panels.shape[-1] * panels.shape[-3]
    return _emit(ctx, x, g, epi, bias, "igemm", panels, [grp * k_per_group for grp in range(g.groups)])


def quantized_depthwise(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None, g: ConvGeometry,
                        epi: Epilogue) -> TensorValue:
    """A depthwise convolution of a float32 weight that reads a ``ui8`` input
    (``epi.input_quantization``) or quantizes its output (``epi.requantize``, ``store_u8``) on the
    native depthwise kernel, its float32 arithmetic unchanged; NotLowerable elsewhere."""
    if not (native_applicable(ctx, g) and is_depthwise(g) and depthwise_supported(ctx.options.isa)):
        raise NotLowerable("a quantized operand or post-op of a convolution runs on the native depthwise kernel only")
    tensor = weight_tensor(w)
    if tensor is None or tensor.dtype != F32 or not bool(torch.isfinite(tensor).all()):
        raise NotLowerable("a quantized depthwise convolution takes a constant finite float32 weight")
    if (x.dtype == U8) != (epi.input_quantization is not None) or x.dtype not in (F32, U8):
        raise NotLowerable("a depthwise convolution's uint8 input needs its quantization (and a float32 one none)")
    if epi.other is not None and epi.other.dtype != F32:
        raise NotLowerable("a quantized depthwise convolution's residual must be float32")
    weight = ctx.constant(pack_depthwise_weight(tensor.reshape(g.o, 1, *_as_2d(g)[2]), vector_width(ctx.options.isa, 32)),
                          (w.buffer.name if w.buffer else "weight") + "_dw")
    return _emit(ctx, x, g, epi, bias, "depthwise", weight, [0])


def bf16_depthwise(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None, g: ConvGeometry,
                   epi: Epilogue) -> TensorValue | None:
    """A bf16 depthwise convolution (``widen-half-floats`` keeps them bf16) on the native
    float32 depthwise kernel, reading its bf16 input and writing its bf16 result
    (``ConvSpec.in_bf16``/``out_bf16``): eager's bf16 convolution sums the exact products in
    float32 and rounds once, as this does, and its fused post-ops commute with that rounding
    (``split_half_float_epilogues``).  None where the kernel does not apply (the caller widens)."""
    tensor = weight_tensor(w)
    if not (native_applicable(ctx, g) and is_depthwise(g) and depthwise_supported(ctx.options.isa)) \
            or tensor is None or x.dtype != BF16 or epi.other is not None:
        return None
    weight = ctx.constant(pack_depthwise_weight(tensor.float().reshape(g.o, 1, *_as_2d(g)[2]),
                                                vector_width(ctx.options.isa, 32)),
                          (w.buffer.name if w.buffer else "weight") + "_dw")
    return _emit(ctx, x, g, epi, bias, "depthwise", weight, [0], bf16=True)


def _emit(ctx: LoweringContext, x: TensorValue, g: ConvGeometry, epi: Epilogue, bias: TensorValue | None,
          kind: str, weight: Buffer, w_offsets: Sequence[int], bf16: bool = False) -> TensorValue:
    in_sp, out_sp, ks, stride, pad, dil = _as_2d(g)
    row_segments = kind == "igemm" and g.groups == 1 and g.cg < ROW_SEGMENT_CHANNELS and dil[1] == 1
    if row_segments:
        buf = _padded_nhwc(ctx, x, g)
        hp, wp = in_sp[0] + 2 * pad[0], in_sp[1] + 2 * pad[1]
        src = NhwcView(buf, 0, hp * wp * g.c, wp * g.c, g.c)
        in_sp, pad = [hp, wp], [0, 0]
    else:
        src = nhwc_view(ctx, x, g)
    out_dtype = BF16 if bf16 else U8 if epi.store_u8 else F32
    out = ctx.new_buffer((g.n, *g.out_sp, g.o), out_dtype, "conv" if kind == "igemm" else "dwconv")
    bias_buf = float32_bias(ctx, bias, g.o, "convolution") if bias is not None else None
    per_call = g.c if kind == "depthwise" else g.cg
    outs = g.o if kind == "depthwise" else g.og
    spec: dict[str, Any] = {
        "kernel": kind, "batch": g.n, "in_h": in_sp[0], "in_w": in_sp[1], "channels": per_call,
        "out_h": out_sp[0], "out_w": out_sp[1], "out_channels": outs, "kh": ks[0], "kw": ks[1],
        "sh": stride[0], "sw": stride[1], "ph": pad[0], "pw": pad[1], "dh": dil[0], "dw": dil[1],
        "in_pixel": src.pixel, "in_row": src.row, "in_batch": src.batch or 1, "ldc": g.o,
    }
    if kind == "igemm":
        spec["nr"] = panel_width(ctx.options.isa)
        if row_segments:
            spec["row_segments"] = True
    if bias_buf is not None:
        spec["bias"] = True
    if epi.input_quantization is not None:
        spec["in_quantization"] = tuple(epi.input_quantization)
    if epi.requantize is not None:
        spec["requantize"] = tuple(epi.requantize)
    if epi.store_u8:
        spec["store_u8"] = True
    if bf16:
        spec.update(in_bf16=True, out_bf16=True)
    other = _epilogue_spec(ctx, epi, g, spec)
    try:  # what codegen will build (its checks do not depend on the ISA, which lowering may not
        # run on): an inconsistent call is this op's internal error, a fallback
        conv_spec_from_dict(spec, Isa.SCALAR, 1, "check")
    except ConvSpecError as e:
        raise LoweringBug(f"native convolution call: {e}") from None
    calls = len(w_offsets)
    for grp in range(calls):
        ch_in = grp * g.cg if calls > 1 else 0
        ch_out = grp * g.og if calls > 1 else 0
        ctx.nodes.append(GemmNode(
            ctx.unique_name(f"{kind}_{ctx.current_origin or 'conv'}"),
            GemmOperand(src.buffer, src.offset + ch_in),
            GemmOperand(weight, w_offsets[grp]),
            GemmOperand(out, ch_out),
            GemmOperand(bias_buf, ch_out) if bias_buf is not None else None,
            GemmOperand(other[0], other[1] + ch_out) if other is not None else None,
            dict(spec), (ctx.current_origin,)))
    base: TensorValue = BufferValue(out)
    return permute(ctx, base, [0, 1 + g.k, *range(1, 1 + g.k)])
