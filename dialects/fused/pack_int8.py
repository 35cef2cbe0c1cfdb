"""The int8 GEMM's prepacked weight (layout ``KN32n4k``): its epilogue table, then its panels.

A ``fused.linear`` (or a ``fused.conv2d``, ``W[O, I, kh, kw]`` as ``W[O, kh*kw*I]``: taps
outer, channels inner, the order of an NHWC input's implicit im2col) of a uint8-quantized
input (``ziggurat.input_quantization``) whose weight ``W[N, K]`` is int8 times one scale per
row takes it packed as one flat int8 operand: the table's bytes (float32 words) followed by
the panels'.

``B[k, j]`` (``K x N`` int8, ``B = W^T`` for a linear's ``W[N, K]``) is stored as
``[N/32][Kp/4][32][4]``, ``Kp`` = K rounded up to a multiple of 4 and N to 32, zero padded:
one ``vpdpbusd`` takes 4 consecutive k of 16 columns as a 512-bit vector (VNNI-4).

The epilogue table (float32 words, ``TABLE_ROWS x Np`` with ``Np`` = N rounded up to 32)
holds per output column ``j``:

* row 0: ``zero_point * sum_k B[k, j]`` as an int32 (its bits), subtracted from the
  accumulator: ``sum_k (u[k] - zero_point) * B[k, j]`` with ``u`` the uint8 activations;
* row 1: ``a_scale * w_scale[j]`` rounded to float32 (the kernel's float64 epilogue makes the
  product from the two scales instead; the row stays so that the layout does not change);
* row 2: ``w_scale[j]``, the weight's own scale (the float32 weight is ``W * w_scale``).
"""

from __future__ import annotations

import torch

PANEL = 32  # columns per panel
K_GROUP = 4  # k per 32-bit lane (vpdpbusd)
LAYOUT = "KN32n4k"
TABLE_ROWS = 3


def padded_k(k: int) -> int:
    return -(-k // K_GROUP) * K_GROUP


def panels(n: int) -> int:
    return -(-n // PANEL)


def packed_bytes(k: int, n: int) -> int:
    return panels(n) * padded_k(k) * PANEL


def pack_weight_int8(w: torch.Tensor) -> torch.Tensor:
    """A linear's int8 ``W[N, K]`` -> the packed panels of ``B = W^T`` as a flat int8 tensor."""
    if w.dim() != 2 or w.dtype != torch.int8:
        raise ValueError(f"pack_weight_int8 expects a 2-D int8 [N, K] weight, got {w.dtype} {list(w.shape)}")
    n, k = w.shape
    kp, np_ = padded_k(k), panels(n)
    padded = torch.zeros(np_ * PANEL, kp, dtype=torch.int8)
    padded[:n, :k] = w
    # [Np*32, Kp] -> [np, 32, kp/4, 4] -> [np, kp/4, 32, 4]
    return padded.view(np_, PANEL, kp // K_GROUP, K_GROUP).permute(0, 2, 1, 3).contiguous().view(-1)


def unpack_weight_int8(packed: torch.Tensor, n: int, k: int) -> torch.Tensor:
    """The inverse of :func:`pack_weight_int8` (tests, the reference interpreter)."""
    kp, np_ = padded_k(k), panels(n)
    full = packed.view(np_, kp // K_GROUP, PANEL, K_GROUP).permute(0, 2, 1, 3).reshape(np_ * PANEL, kp)
    return full[:n, :k]


def table_floats(n: int) -> int:
    return TABLE_ROWS * panels(n) * PANEL


def packed_operand_bytes(k: int, n: int) -> int:
    """Bytes of the whole operand: the table, then the panels."""
    return 4 * table_floats(n) + packed_bytes(k, n)


def epilogue_table(w: torch.Tensor, w_scales: torch.Tensor, a_scale: float, a_zero_point: int) -> torch.Tensor:
    """The per-column table (see the module's docstring) as a flat float32 tensor."""
    n = w.shape[0]
    np_ = panels(n) * PANEL
    colsum = torch.zeros(np_, dtype=torch.int64)
    colsum[:n] = w.to(torch.int64).sum(dim=1) * a_zero_point
    if colsum.abs().max() >= 2**31:
        raise ValueError("the zero point's correction overflows int32")
    scale = torch.zeros(np_, dtype=torch.float64)
    scale[:n] = torch.tensor(a_scale, dtype=torch.float32).double() * w_scales.to(torch.float32).double()
    table = torch.zeros(TABLE_ROWS, np_, dtype=torch.float32)
    table[0] = colsum.to(torch.int32).view(torch.float32)
    table[1] = scale.to(torch.float32)
    table[2, :n] = w_scales.to(torch.float32)
    return table.reshape(-1)


def pack_quantized_linear(w: torch.Tensor, w_scales: torch.Tensor, a_scale: float, a_zero_point: int) -> torch.Tensor:
    """The whole ``KN32n4k`` operand: the table's bytes, then the panels."""
    table = epilogue_table(w, w_scales, a_scale, a_zero_point)
    return torch.cat([table.view(torch.int8), pack_weight_int8(w)])


def unpack_quantized_linear(packed: torch.Tensor, n: int, k: int) -> torch.Tensor:
    """The float32 weight ``W * w_scale`` a ``KN32n4k`` operand holds (as eager's
    ``dequantize_per_channel`` computes it)."""
    floats = table_floats(n)
    table = packed[: 4 * floats].view(torch.float32).view(TABLE_ROWS, -1)
    w = unpack_weight_int8(packed[4 * floats:], n, k)
    return w.to(torch.float32) * table[2, :n, None]


def conv_rows(w: torch.Tensor) -> torch.Tensor:
    """A convolution's ``W[O, I, kh, kw]`` as the GEMM's ``[O, kh*kw*I]`` (taps outer)."""
    return w.permute(0, 2, 3, 1).reshape(w.shape[0], -1).contiguous()


def unpack_quantized_conv(packed: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """The float32 ``[O, I, kh, kw]`` weight a convolution's ``KN32n4k`` operand holds."""
    o, i, kh, kw = shape
    rows = unpack_quantized_linear(packed, o, kh * kw * i)
    return rows.reshape(o, kh, kw, i).permute(0, 3, 1, 2).contiguous()
