"""bf16 convolutions on the bf16 GEMM kernels (AMX tiles or AVX512-BF16).

* **1x1** (no padding, one group): ``out[n] = W[Cout, Cin] @ x[n][Cin, H*W]``
  (:func:`bf16_pointwise_conv`).
* **KxK** (any stride, padding and dilation, one group): an implicit GEMM
  ``out[n] = W[Cout, Cin*KH*KW] @ im2col(x[n])`` that never builds the im2col matrix.  The image
  is copied once, zero-padded and split into the stride's phases: ``[N, Cin, sh, sw, Hq, Wq]``
  with phase ``(a, b)`` holding the padded pixels ``(sh*y + a, sw*x + b)`` (stride 1: one
  phase, the padded image).  Column ``j`` of the product is the output pixel
  ``(j // Wq, j % Wq)``, so every row ``(c, i, t)`` of im2col is one phase plane of channel
  ``c`` read from a fixed element on, 32 contiguous pixels per panel, which the kernel packs
  as it goes (``Bf16GemmSpec.b_conv``).  The ``Wq - OW`` columns past each output row are
  computed and dropped: the result is a ``[N, Cout, OH, Wq]`` buffer read through a
  ``[..., :OW]`` view.  The weight is the GEMM's A, read in place; the bias is one per row
  (output channel); activation and residual run in the epilogue, in float32, before the one
  rounding to bf16 (a residual is first copied to the same padded width).
* **Pixel rows** (a small image, any kernel): ``out^T[N*OH*OW, Cout] = im2col(x) @ W^T``
  (:func:`_pixel_rows_conv`), where the two forms above, whose GEMM columns are pixels, would
  leave over a fifth of their 32-pixel panels' lanes idle (a 7x7 image: 49 of 64).  The im2col
  rows are copied once; ``W^T`` is prepacked as a linear layer's weight; the result is
  channels-last, which the next pixel-rows convolution reads with its channels contiguous.

Grouped convolutions are widened to the float32 kernels before this (``widen-half-floats``); one that
reaches here (``passes=`` without that pass) runs in torch, with the reason.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from ziggurat.backends.cpu.kernels.bf16_specials import specials_of
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import MAX_RUNTIME_K
from ziggurat.backends.cpu.kernels.pack_bf16 import K_STEP, PANEL, padded_k, panels
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.layout import is_channels_last, prefers_channels_last, realize_channels_last
from ziggurat.backends.cpu.lowering.gemm_bf16 import (
    bf16_gemm_node,
    bf16_kernel,
    bf16_row_stride,
    constant_bf16,
    prepacked_gemm,
)
from ziggurat.backends.cpu.lowering.gemm_operands import float32_bias, matrix_view
from ziggurat.backends.cpu.lowering.nodes import GemmNode, GemmOperand
from ziggurat.backends.cpu.lowering.ops import load_or
from ziggurat.backends.cpu.lowering.padding import constant_pad
from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.tensors import BufferValue, Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Buffer, Value
from ziggurat.backends.cpu.lowering.views import expand, permute, reshape, slice_dim


def bf16_convolution(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None,
                     stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
                     out_shape: Sequence[int], epi: Any) -> TensorValue:
    """A bf16 2-D convolution with a constant weight on the GEMM kernels, or NotLowerable."""
    weight = constant_bf16(w, "convolution")
    if weight is None or weight.dim() != 4 or x.rank != 4 or len(out_shape) != 4:
        raise NotLowerable("a bf16 convolution needs a constant 4-D weight and a 4-D image")
    if groups != 1:
        raise NotLowerable("a grouped bf16 convolution (widen-half-floats widens them) runs in torch")
    pointwise = tuple(weight.shape[2:]) == (1, 1) and all(p == 0 for p in padding)
    if pointwise and all(s == 1 for s in stride) and x.numel * 2 <= PIXEL_ROWS_MAX_BYTES \
            and (is_channels_last(ctx, x) or prefers_channels_last(x)):
        # a 1x1 convolution of channels-last values (the float32 depthwise kernel's result, a
        # pixel-rows convolution's, or a cast of either: layout.py's tests): pixel rows keep the
        # chain channels-last, where channel rows would transpose the image to NCHW and the
        # depthwise kernel's input back (MobileNetV2)
        return _pixel_rows_conv(ctx, x, weight, w, bias, stride, padding, dilation, out_shape, epi)
    if _pixel_rows_pay(x, weight, stride, padding, out_shape, pointwise):
        return _pixel_rows_conv(ctx, x, weight, w, bias, stride, padding, dilation, out_shape, epi)
    if pointwise:
        return bf16_pointwise_conv(ctx, x, w, bias, stride, padding, groups, out_shape, epi)
    return _implicit_gemm_conv(ctx, x, weight, w, bias, stride, padding, dilation, out_shape, epi)


#: A convolution whose channel rows use at most this share of their 32-pixel panels' lanes
#: computes pixel rows instead (:func:`_pixel_rows_conv`).
PIXEL_ROWS_LANE_USE = 0.8
#: ... when its im2col copy is at most this many bytes.
PIXEL_ROWS_MAX_BYTES = 2 * 1024 * 1024
#: A pixel-rows convolution of a channel-major image with at least this many channels and more
#: than one tap copies the image channels-last first (:func:`_pixel_rows_conv`).
CHANNELS_LAST_COPY_MIN_CHANNELS = 16


def _pixel_rows_pay(x: TensorValue, weight: Any, stride: Sequence[int], padding: Sequence[int],
                    out_shape: Sequence[int], pointwise: bool) -> bool:
    """Whether pixel rows waste fewer lanes than channel rows.  Channel rows (the kernels' N is
    the pixels) compute whole panels of 32 pixel columns, and an implicit GEMM's columns also
    run past each output row to the padded width: a 7x7 image is 49 useful lanes of 64 (ResNet's
    layer 4), 39 of 64 at 5x5.  Pixel rows have no waste with a multiple of 32 output channels."""
    n, cout = int(x.shape[0]), int(weight.shape[0])
    oh, ow = int(out_shape[2]), int(out_shape[3])
    k = int(weight.shape[1]) * int(weight.shape[2]) * int(weight.shape[3])
    if cout % PANEL or n * oh * ow * k * 2 > PIXEL_ROWS_MAX_BYTES:
        return False
    if pointwise:
        cols = oh * ow
    else:
        sw, pw = int(stride[1]), int(padding[1])
        wq = -(-(int(x.shape[3]) + 2 * pw) // sw)
        cols = (oh - 1) * wq + ow
    return oh * ow <= PIXEL_ROWS_LANE_USE * panels(cols) * PANEL


def _pixel_rows_conv(ctx: LoweringContext, x: TensorValue, weight: Any, w: TensorValue, bias: TensorValue | None,
                     stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], out_shape: Sequence[int],
                     epi: Any) -> TensorValue:
    """A small image's convolution as pixel rows: ``out^T[N*OH*OW, Cout] = im2col(x) @ W^T``,
    the im2col rows ``[N, OH, OW, Cin, KH, KW]`` copied once, ``W^T`` prepacked as a linear
    layer's weight, the bias one per column and a residual read as ``[N*OH*OW, Cout]``.  The
    result is channels-last, returned as its ``[N, Cout, OH, OW]`` view (a next pixel-rows
    convolution or residual reads it in place)."""
    if epi.bias is not None:
        raise NotLowerable("a bf16 convolution with a column bias")
    n, cin = int(x.shape[0]), int(x.shape[1])
    cout, _, kh, kw = (int(d) for d in weight.shape)
    oh, ow = int(out_shape[2]), int(out_shape[3])
    (sh, sw), (ph, pw), (dh, dw) = ((int(v) for v in pair) for pair in (stride, padding, dilation))
    m, k = n * oh * ow, cin * kh * kw

    # K as (tap, channel) for a channels-last input (a pixel-rows result: each tap's channels
    # contiguous), else as (channel, tap) (each channel's taps a window of its plane)
    view = ctx.strided_view(x)
    tap_outer = view is not None and view[2][1] == 1 and cin > 1
    if not tap_outer and kh * kw > 1 and cin >= CHANNELS_LAST_COPY_MIN_CHANNELS:
        # a channel-major image (a channel-rows result: ResNet's last 14x14 layer into its
        # stride-2 3x3) is copied channels-last first: copied in (channel, tap) order, each
        # pixel's rows were vectors of KW lanes
        x = realize_channels_last(ctx, x.shape, x.dtype, x.load, [x], "channels_last")
        tap_outer = True

    def element(idx: Index) -> Value:
        b_, y, z, *k_index = (IndexExpr.of(v) for v in idx)
        i, j, c = k_index if tap_outer else (k_index[1], k_index[2], k_index[0])
        return load_or(x, [b_, c, y * sh + i * dh - ph, z * sw + j * dw - pw], 0.0)

    rows = _dense_pixel_rows(ctx, x, (kh, kw), (sh, sw), (ph, pw), m, k)
    if rows is None:
        cols = ctx.realize(ctx.lazy((n, oh, ow, kh, kw, cin) if tap_outer else (n, oh, ow, cin, kh, kw), x.dtype,
                                    element, [x]), "im2col_rows")
        rows = reshape(ctx, BufferValue(cols), (m, k))
    if tap_outer:
        weight = weight.permute(0, 2, 3, 1)
    rows_epi = copy.copy(epi)
    rows_epi.bias = bias
    if epi.other is not None and epi.binary is not None:
        other = epi.other if tuple(epi.other.shape) == tuple(out_shape) else expand(ctx, epi.other, out_shape)
        rows_epi.other = reshape(ctx, permute(ctx, other, (0, 2, 3, 1)), (m, cout))
    out = prepacked_gemm(ctx, rows, weight.reshape(cout, k).t(), cout, (m, cout), rows_epi, w, 1.0, None, 1.0)
    return permute(ctx, reshape(ctx, out, (n, oh, ow, cout)), (0, 3, 1, 2))


def _dense_pixel_rows(ctx: LoweringContext, x: TensorValue, kernel: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int], m: int, k: int) -> TensorValue | None:
    """A 1x1 stride-1 convolution's rows read in place: ``x``'s channels-last ``[N*H*W, C]``
    matrix when it is a dense bf16 buffer (a depthwise or pixel-rows result), else None (the
    rows are copied).  MobileNetV2 copied every block's activations twice for this."""
    if kernel != (1, 1) or stride != (1, 1) or padding != (0, 0) or x.dtype != torch.bfloat16:
        return None
    rows = reshape(ctx, permute(ctx, x, (0, 2, 3, 1)), (m, k))
    view = ctx.strided_view(rows)
    if view is None or view[0].dtype != torch.bfloat16 or tuple(view[2]) != (k, 1):
        return None
    return rows


def _implicit_gemm_conv(ctx: LoweringContext, x: TensorValue, weight: Any, w: TensorValue,
                        bias: TensorValue | None, stride: Sequence[int], padding: Sequence[int],
                        dilation: Sequence[int], out_shape: Sequence[int], epi: Any) -> TensorValue:
    if epi.bias is not None:
        raise NotLowerable("a bf16 convolution with a column bias")
    n, cin, h, wd = x.shape
    cout, _, kh, kw = (int(d) for d in weight.shape)
    sh, sw = (int(v) for v in stride)
    ph, pw = (int(p) for p in padding)
    dh, dw = (int(d) for d in dilation)
    hp, wp = h + 2 * ph, wd + 2 * pw
    hq, wq = -(-hp // sh), -(-wp // sw)
    oh, ow = int(out_shape[2]), int(out_shape[3])
    if (oh, ow) != ((hp - (kh - 1) * dh - 1) // sh + 1, (wp - (kw - 1) * dw - 1) // sw + 1):
        raise NotLowerable(f"a bf16 convolution whose output {oh}x{ow} is not its size")
    k = cin * kh * kw
    if min(n, cin, cout, oh, ow) < 1 or k > MAX_RUNTIME_K:
        raise NotLowerable(f"a bf16 convolution with K = {cin}x{kh}x{kw} = {k} > {MAX_RUNTIME_K} or an empty size")
    kernel = bf16_kernel(ctx)
    image = ctx.realize(_phases(ctx, x, (sh, sw), (ph, pw), (hq, wq)), "padded")
    cols = (oh - 1) * wq + ow  # the last row's columns past OW are not needed
    rows, a_spec = _weight_rows(ctx, weight, w, cout, k, kernel)
    spec: dict[str, Any] = {"bf16_kernel": kernel, "m": cout, "n": cols, "k": k, **a_spec, "ldc": oh * wq,
                            "b_packed": False, "b_conv": (hq * wq, wq, kh, kw, dh, dw, sh, sw)}
    if n > 1:
        spec.update(batch=n, batch_stride_a=0, batch_stride_b=cin * sh * sw * hq * wq, batch_stride_c=cout * oh * wq)
    row_epi = copy.copy(epi)
    row_epi.bias = None
    residual = None
    if epi.other is not None and epi.binary is not None:
        row_epi.other = None
        residual = (GemmOperand(_padded_width(ctx, epi.other, (n, cout, oh, ow), wq)), oh * wq, 1, cout * oh * wq)
    if bias is not None:
        spec["bias_rows"] = True
    out = bf16_gemm_node(ctx, kernel, spec, GemmOperand(rows), GemmOperand(image), (n,), cout, cols, (n, cout, oh, wq),
                row_epi, 1.0, None, 1.0, other_view=residual)
    _bias_per_row(ctx, bias, cout)
    return slice_dim(ctx, out, 3, 0, 1, ow)


def _weight_rows(ctx: LoweringContext, weight: Any, w: TensorValue, cout: int, k: int,
                 kernel: str) -> tuple[Buffer, dict[str, Any]]:
    """The weight as the GEMM's A, ``[Cout, K]``, its rows zero-padded to a whole number of
    32-deep K steps when K is not one (``Bf16GemmSpec.a_padded``: the AVX512-BF16 kernel reads
    the last step in place; ResNet's 7x7 stem, K = 147: 0.73 -> 0.68 ms), and for the AMX
    kernel stored at the row stride whose tile loads spread over L1's sets
    (:func:`~ziggurat.backends.cpu.lowering.gemm_bf16.bf16_row_stride`)."""
    rows = weight.reshape(cout, k)
    name = (w.buffer.name if w.buffer else "weight") + "_rows"
    row = padded_k(k)
    lda = bf16_row_stride(kernel, row)
    spec: dict[str, Any] = {"lda": lda, "a_specials": specials_of(rows)}
    if k % K_STEP:
        spec["a_padded"] = True
    if lda == k:
        return ctx.constant(rows.contiguous(), name), spec
    padded = torch.nn.functional.pad(rows, (0, lda - k)).contiguous()  # zeros past K: the spec's contract
    return ctx.constant(padded, name), spec


def _bias_per_row(ctx: LoweringContext, bias: TensorValue | None, cout: int) -> None:
    """The convolution's bias, one float32 per output channel (row), on the GEMM just emitted."""
    if bias is None:
        return
    node = ctx.nodes[-1]
    assert isinstance(node, GemmNode)
    node.bias = GemmOperand(float32_bias(ctx, bias, cout, "bf16"))


def _phases(ctx: LoweringContext, x: TensorValue, stride: tuple[int, int], padding: tuple[int, int],
            size: tuple[int, int]) -> TensorValue:
    """``x`` zero-padded and split into the stride's phases: ``[N, C, sh, sw, Hq, Wq]`` with
    element ``(n, c, a, b, y, z)`` the padded pixel ``(sh*y + a, sw*z + b)``; zero past the image."""
    (sh, sw), (ph, pw), (hq, wq) = stride, padding, size
    n, cin = x.shape[:2]
    if (sh, sw) == (1, 1):
        return constant_pad(ctx, x, [pw, pw, ph, ph], 0.0, (n, cin, hq, wq))

    def element(idx: Index) -> Value:
        b_, c, a, bb, y, z = (IndexExpr.of(i) for i in idx)
        return load_or(x, [b_, c, y * sh + a - ph, z * sw + bb - pw], 0.0)

    planes = ctx.lazy((n, cin, sh, sw, hq, wq), x.dtype, element, [x])
    return planes


def _padded_width(ctx: LoweringContext, other: TensorValue, shape: tuple[int, int, int, int], wq: int) -> Buffer:
    """The residual copied into the output's padded-width layout ``[N, Cout, OH, Wq]``."""
    n, cout, oh, ow = shape
    if other.shape != shape:
        other = expand(ctx, other, shape)
    return ctx.realize(constant_pad(ctx, other, [0, wq - ow], 0.0, (n, cout, oh, wq)), "residual")


def bf16_pointwise_conv(ctx: LoweringContext, x: TensorValue, w: TensorValue, bias: TensorValue | None,
                        stride: Sequence[int], padding: Sequence[int], groups: int, out_shape: Sequence[int],
                        epi: Any) -> TensorValue:
    """A bf16 1x1 convolution (NCHW) as one GEMM per image: ``out[n] = W[Cout, Cin] @ x[n][Cin, H*W]``,
    the weight read in place (rows of A), the image packed by the kernel a panel of 32 pixels
    at a time, the bias one per row; a stride is a strided view of the image (copied)."""
    weight = constant_bf16(w, "convolution")
    if (weight is None or weight.dim() != 4 or tuple(weight.shape[2:]) != (1, 1) or groups != 1
            or any(p != 0 for p in padding) or x.rank != 4 or len(out_shape) != 4):
        raise NotLowerable("bf16 convolutions other than 1x1 (no padding, one group) run in torch")
    if epi.bias is not None:
        raise NotLowerable("a bf16 1x1 convolution with a column bias")
    n, cin = x.shape[:2]
    cout, oh, ow = out_shape[1], out_shape[2], out_shape[3]
    if min(n, cin, cout, oh, ow) < 1 or cin > MAX_RUNTIME_K:
        raise NotLowerable(f"a bf16 1x1 convolution of {cin} input channels and an empty size")
    kernel = bf16_kernel(ctx)
    if any(s != 1 for s in stride):
        x = slice_dim(ctx, slice_dim(ctx, x, 2, 0, stride[0], oh), 3, 0, stride[1], ow)
    hw = oh * ow
    view = ctx.strided_view(x)
    if view is None or view[2][3] != 1 or (oh > 1 and view[2][2] != ow):
        # Rows not back to back (a KxK convolution's [..., :OW] view, a stride): copied as
        # [N, C, OH, OW], rows of contiguous vectors, not as [N, C, OH*OW] with a division per lane.
        x = BufferValue(ctx.realize(x, "compact"))
    image = reshape(ctx, x, (n, cin, hw))
    bv = matrix_view(ctx, image, (n,), allow_transposed=True)
    rows, a_spec = _weight_rows(ctx, weight, w, cout, cin, kernel)
    spec: dict[str, Any] = {"bf16_kernel": kernel, "m": cout, "n": hw, "k": cin, **a_spec, "ldc": hw,
                            "b_packed": False, "b_transposed": bv.transposed, "ldb": bv.ld}
    if n > 1:
        spec.update(batch=n, batch_stride_a=0, batch_stride_b=bv.batch_stride, batch_stride_c=cout * hw)
    row_epi = copy.copy(epi)
    row_epi.bias = None
    if bias is not None:
        spec["bias_rows"] = True
    out = bf16_gemm_node(ctx, kernel, spec, GemmOperand(rows), bv.operand, (n,), cout, hw, out_shape, row_epi, 1.0, None, 1.0)
    _bias_per_row(ctx, bias, cout)
    return out
