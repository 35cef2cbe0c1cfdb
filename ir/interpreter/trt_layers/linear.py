"""Reference semantics of convolution, deconvolution, matrix multiply and einsum.

Convolutions are written out from their definition (explicit pre/post padding,
then a sum over every dilated window), not delegated to torch's conv ops, so
the check of a converter's padding/stride/dilation/groups mapping is independent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ziggurat.dialects.trt.enums import MatrixOperation
from ziggurat.dialects.trt.linear import (
    ConvolutionOp,
    DeconvolutionOp,
    EinsumOp,
    MatrixMultiplyOp,
    WindowedConvolutionOp,
)
from ziggurat.dialects.trt.base import ints
from ziggurat.dialects.trt.shapes import resolve_padding
from ziggurat.ir.interpreter.trt_layers.common import (
    compute,
    layer,
    result_dtype,
    result_shape,
    spatial_pad,
    window_view,
)


def correlate(
    x: torch.Tensor,
    kernel: torch.Tensor,
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    out_spatial: Sequence[int],
) -> torch.Tensor:
    """sum over c, k of x[n, g*Cg + c, o*S + k*D] * kernel[g*Kg + m, c, k] on an already padded x."""
    n, channels = x.shape[:2]
    maps = kernel.shape[0]
    ksize = tuple(kernel.shape[2:])
    windows = window_view(x, ksize, stride, dilation)
    # Windows past the requested outputs (round-down leftovers) are dropped.
    windows = windows[(slice(None), slice(None), *(slice(0, o) for o in out_spatial))]
    cols = windows.reshape(n, groups, channels // groups, math.prod(out_spatial), math.prod(ksize))
    w = kernel.reshape(groups, maps // groups, channels // groups, math.prod(ksize))
    out = torch.einsum("ngcoj,gmcj->ngmo", cols, w)
    return out.reshape(n, maps, *out_spatial)


def _padded_input(op: WindowedConvolutionOp, x: torch.Tensor, out_spatial: Sequence[int]) -> torch.Tensor:
    spatial = x.shape[2:]
    kernel = list(ints(op.kernel_size))
    stride = op.stride_values()
    dilation = op.dilation_values()
    pre, post, _ = resolve_padding(
        op.padding_mode.data, spatial, kernel, stride, dilation,
        op.pre_padding_values(), op.post_padding_values(),
    )
    # kEXPLICIT_ROUND_UP can place the last window past the padded input: it reads zeros there.
    extra = [
        max(0, (o - 1) * s + d * (k - 1) + 1 - (i + p0 + p1))
        for o, s, d, k, i, p0, p1 in zip(out_spatial, stride, dilation, kernel, spatial, pre, post, strict=True)
    ]
    return spatial_pad(x, pre, [p + e for p, e in zip(post, extra, strict=True)], 0.0)


@layer(ConvolutionOp)
def _convolution(op: ConvolutionOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = compute(args[0])
    kernel = compute(args[1])
    out_spatial = result_shape(op.output)[2:]
    padded = _padded_input(op, x, out_spatial)
    y = correlate(padded, kernel, op.stride_values(), op.dilation_values(), op.num_groups.value.data, out_spatial)
    if len(args) > 2:
        y = y + compute(args[2]).reshape(1, -1, *([1] * len(out_spatial)))
    return [y.to(result_dtype(op.output))]


@layer(DeconvolutionOp)
def _deconvolution(op: DeconvolutionOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Transposed convolution: out[o*S + k*D - pre] += x[i] * kernel[c, m, k], cropped by pre/post."""
    x = compute(args[0])
    kernel = compute(args[1])  # [C, K/groups, *k]
    groups = op.num_groups.value.data
    stride = op.stride_values()
    dilation = op.dilation_values()
    pre = op.pre_padding_values()
    post = op.post_padding_values()
    n, channels = x.shape[:2]
    ksize = tuple(kernel.shape[2:])
    spatial = tuple(x.shape[2:])
    # Zero-insert the input by the stride, pad by the dilated kernel extent - 1, correlate with
    # the flipped kernel: the full transposed convolution of length (I-1)*S + DK.
    dilated = [(i - 1) * s + 1 for i, s in zip(spatial, stride, strict=True)]
    zeros = x.new_zeros((n, channels, *dilated))
    zeros[(slice(None), slice(None), *(slice(None, None, s) for s in stride))] = x
    extents = [d * (k - 1) for d, k in zip(dilation, ksize, strict=True)]
    padded = spatial_pad(zeros, extents, extents, 0.0)
    maps_per_group = kernel.shape[1]
    flipped = kernel.flip(list(range(2, kernel.dim())))
    flipped = flipped.reshape(groups, channels // groups, maps_per_group, *ksize).transpose(1, 2)
    flipped = flipped.reshape(groups * maps_per_group, channels // groups, *ksize)
    full_spatial = [dl + e for dl, e in zip(dilated, extents, strict=True)]
    y = correlate(padded, flipped, [1] * len(ksize), dilation, groups, full_spatial)
    y = y[(slice(None), slice(None), *(slice(p0, f - p1) for p0, p1, f in zip(pre, post, full_spatial, strict=True)))]
    if len(args) > 2:
        y = y + compute(args[2]).reshape(1, -1, *([1] * len(ksize)))
    assert tuple(y.shape) == result_shape(op.output)
    return [y.to(result_dtype(op.output))]


@layer(MatrixMultiplyOp)
def _matrix_multiply(op: MatrixMultiplyOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    a, b = compute(args[0]), compute(args[1])
    op0, op1 = op.op0.data, op.op1.data
    if op0 == MatrixOperation.kTRANSPOSE:
        a = a.transpose(-1, -2)
    if op1 == MatrixOperation.kTRANSPOSE:
        b = b.transpose(-1, -2)
    if op0 == MatrixOperation.kVECTOR:
        a = a.unsqueeze(-2)  # a row vector
    if op1 == MatrixOperation.kVECTOR:
        b = b.unsqueeze(-1)  # a column vector
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = a.expand(*batch, *a.shape[-2:])
    b = b.expand(*batch, *b.shape[-2:])
    y = torch.einsum("...mk,...kn->...mn", a, b)
    if op1 == MatrixOperation.kVECTOR:
        y = y.squeeze(-1)
    if op0 == MatrixOperation.kVECTOR:
        y = y.squeeze(-1 if op1 == MatrixOperation.kVECTOR else -2)
    return [y.reshape(result_shape(op.output)).to(result_dtype(op.output))]


@layer(EinsumOp)
def _einsum(op: EinsumOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    y = torch.einsum(op.equation.data, *(compute(t) for t in args))
    return [y.to(result_dtype(op.output))]
