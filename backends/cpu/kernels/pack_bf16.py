"""The bf16 GEMM's prepacked B: panels of 32 columns in VNNI-2 pairs (layout ``KN32n2k``).

``B[k, j]`` (``K x N``) is stored as ``[N/32][Kp/2][32][2]`` with ``Kp`` = K rounded up to a
multiple of 32 and N to a multiple of 32, zero padded: element ``(k, j)`` is at
``((j // 32) * (Kp // 2) + k // 2) * 64 + (j % 32) * 2 + k % 2``.

One layout serves both kernels: an AMX ``tdpbf16ps`` B tile is 16 k-pairs by 16 columns
(64 bytes a row), read from a panel with a row stride of 128 bytes; ``vdpbf16ps`` takes one
k-pair of 16 columns as a 512-bit vector.  The zero padding makes every tile and vector of a
panel readable, so the kernels need no tail code on B.
"""

from __future__ import annotations

import torch

PANEL = 32  # columns per panel
K_STEP = 32  # K is padded to a multiple of this (one AMX tile's depth)
LAYOUT = "KN32n2k"


def padded_k(k: int) -> int:
    return -(-k // K_STEP) * K_STEP


def panels(n: int) -> int:
    return -(-n // PANEL)


def packed_elements(k: int, n: int) -> int:
    return panels(n) * padded_k(k) * PANEL


def pack_b_bf16(b: torch.Tensor) -> torch.Tensor:
    """``b``: ``[K, N]`` -> the packed panels as a flat bf16 tensor."""
    if b.dim() != 2:
        raise ValueError(f"pack_b_bf16 expects a 2-D [K, N] matrix, got shape {list(b.shape)}")
    k, n = b.shape
    kp, np_ = padded_k(k), panels(n)
    if (kp, np_ * PANEL) == (k, n):  # no padding: one copy, from a strided view of b itself
        padded = b.to(torch.bfloat16)
    else:
        padded = torch.zeros(kp, np_ * PANEL, dtype=torch.bfloat16)
        padded[:k, :n] = b.to(torch.bfloat16)
    return padded.reshape(kp // 2, 2, np_, PANEL).permute(2, 0, 3, 1).contiguous().view(-1)


def pack_linear_weight_bf16(w: torch.Tensor) -> torch.Tensor:
    """A linear layer's ``W[N, K]`` (``x @ W^T``) -> packed ``B = W^T``."""
    if w.dim() != 2:
        raise ValueError(f"pack_linear_weight_bf16 expects a 2-D [N, K] weight, got shape {list(w.shape)}")
    return pack_b_bf16(w.t())


def unpack_b_bf16(packed: torch.Tensor, k: int, n: int) -> torch.Tensor:
    """The inverse of :func:`pack_b_bf16` (tests)."""
    kp, np_ = padded_k(k), panels(n)
    full = packed.view(np_, kp // 2, PANEL, 2).permute(1, 3, 0, 2).reshape(kp, np_ * PANEL)
    return full[:k, :n]
