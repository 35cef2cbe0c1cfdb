"""Weight layout contract of the ``fused`` dialect (its ``weight_layout`` attribute),
between the ``prepack-weights`` pass, the reference interpreter and the native kernels.
Pure torch; every pack has an unpack.  Which panel width an ISA's microkernel wants is the
CPU backend's choice (``backends/cpu/kernels/tiles.py``).

GEMM B panels, layout ``KN{nr}n``
    For ``C[M, N] = A[M, K] @ B[K, N]``, B is cut into ``ceil(N/nr)`` column
    panels, each stored k-major: ``packed[p, k, j] = B[k, p*nr + j]``, shape
    ``[ceil(N/nr), K, nr]``, zero padded past column N.  The microkernel then
    reads ``nr`` consecutive floats per k step.  A ``linear`` weight
    ``W[N, K]`` (``y = x @ W^T``) is packed as ``pack_gemm_b(W.t(), nr)``
    (:func:`pack_linear_weight`).

Blocked conv weights, layout ``OIhw{ib}i{ob}o``
    ``w[O, I, kh, kw]`` -> ``[ceil(O/ob), ceil(I/ib), kh, kw, ib, ob]`` with
    ``packed[ob_, ib_, y, x, i, o] = w[ob_*ob + o, ib_*ib + i, y, x]``, zero
    padded in O and I (oneDNN's naming), for direct convolution over
    channel-blocked activations.

Implicit-GEMM conv weights, layout ``KN{nr}n`` over ``K = kh*kw*Ig``
    For NHWC activations a convolution is a GEMM whose K index runs over
    ``(y, x, i)`` (i fastest).  :func:`pack_conv_weight_gemm` stores, per
    group ``g``, the GEMM B panels of ``W_g[Og, kh*kw*Ig]``:
    shape ``[groups, ceil(Og/nr), kh*kw*Ig, nr]``.  A 1x1 convolution is then
    exactly the GEMM kernel with prepacked B.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


class PackError(ValueError):
    """A tensor does not fit the requested packed layout."""


@dataclass(frozen=True)
class GemmPackedLayout:
    """B panels for an ``[K, N]`` right operand, ``nr`` columns per panel."""

    nr: int
    k: int
    n: int

    def __post_init__(self) -> None:
        for field in ("nr", "k", "n"):
            v = getattr(self, field)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise PackError(f"GemmPackedLayout.{field} must be a positive int, got {v!r}")

    @property
    def name(self) -> str:
        return f"KN{self.nr}n"

    @property
    def panels(self) -> int:
        return -(-self.n // self.nr)

    @property
    def packed_shape(self) -> tuple[int, int, int]:
        return (self.panels, self.k, self.nr)

    @property
    def panel_stride(self) -> int:
        """Elements between the starts of consecutive panels."""
        return self.k * self.nr

    def offset(self, k: int, n: int) -> int:
        """Flat element offset of ``B[k, n]`` in the packed buffer."""
        return (n // self.nr) * self.panel_stride + k * self.nr + n % self.nr


def _check_tensor(t: torch.Tensor, dims: int, what: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise PackError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dim() != dims:
        raise PackError(f"{what}: expected a {dims}-d tensor, got shape {tuple(t.shape)}")
    if not t.dtype.is_floating_point:
        raise PackError(f"{what}: expected a floating-point tensor, got {t.dtype}")


def _check_block(value: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PackError(f"{what} must be a positive int, got {value!r}")


def pack_gemm_b(b_kn: torch.Tensor, nr: int) -> torch.Tensor:
    """``B[K, N]`` -> contiguous ``[ceil(N/nr), K, nr]`` panels (zero padded)."""
    _check_tensor(b_kn, 2, "pack_gemm_b")
    _check_block(nr, "pack_gemm_b: nr")
    k, n = b_kn.shape
    if k < 1 or n < 1:
        raise PackError(f"pack_gemm_b: empty operand of shape {(k, n)}")
    panels, full = -(-n // nr), n // nr
    packed = b_kn.new_zeros((panels, k, nr))  # written in place: no padded copy beside it
    if full:
        packed[:full].copy_(b_kn[:, :full * nr].reshape(k, full, nr).permute(1, 0, 2))
    if n > full * nr:
        packed[full, :, :n - full * nr].copy_(b_kn[:, full * nr:])
    return packed


def unpack_gemm_b(packed: torch.Tensor, n: int) -> torch.Tensor:
    """Inverse of :func:`pack_gemm_b`: panels -> ``B[K, N]``."""
    _check_tensor(packed, 3, "unpack_gemm_b")
    panels, k, nr = packed.shape
    if not 0 < n <= panels * nr or n <= (panels - 1) * nr:
        raise PackError(f"unpack_gemm_b: n={n} does not match {panels} panels of width {nr}")
    return packed.permute(1, 0, 2).reshape(k, panels * nr)[:, :n].contiguous()


def pack_linear_weight(w_nk: torch.Tensor, nr: int) -> torch.Tensor:
    """A ``linear`` weight ``W[N, K]`` as B panels of ``W^T``."""
    _check_tensor(w_nk, 2, "pack_linear_weight")
    return pack_gemm_b(w_nk.t(), nr)


def unpack_linear_weight(packed: torch.Tensor, n: int) -> torch.Tensor:
    return unpack_gemm_b(packed, n).t().contiguous()


def conv_layout_name(ib: int, ob: int) -> str:
    return f"OIhw{ib}i{ob}o"


def pack_conv_weight(w: torch.Tensor, ib: int, ob: int) -> torch.Tensor:
    """``w[O, I, kh, kw]`` -> ``OIhw{ib}i{ob}o``: ``[ceil(O/ob), ceil(I/ib), kh, kw, ib, ob]``."""
    _check_tensor(w, 4, "pack_conv_weight")
    _check_block(ib, "pack_conv_weight: ib")
    _check_block(ob, "pack_conv_weight: ob")
    o, i, kh, kw = w.shape
    ob_n, ib_n = -(-o // ob), -(-i // ib)
    padded = w.new_zeros((ob_n * ob, ib_n * ib, kh, kw))
    padded[:o, :i] = w
    # [ob_n, ob, ib_n, ib, kh, kw] -> [ob_n, ib_n, kh, kw, ib, ob]
    return padded.reshape(ob_n, ob, ib_n, ib, kh, kw).permute(0, 2, 4, 5, 3, 1).contiguous()


def unpack_conv_weight(packed: torch.Tensor, out_channels: int, in_channels: int) -> torch.Tensor:
    """Inverse of :func:`pack_conv_weight`."""
    _check_tensor(packed, 6, "unpack_conv_weight")
    ob_n, ib_n, kh, kw, ib, ob = packed.shape
    if not (ob_n - 1) * ob < out_channels <= ob_n * ob or not (ib_n - 1) * ib < in_channels <= ib_n * ib:
        raise PackError(
            f"unpack_conv_weight: channels ({out_channels}, {in_channels}) do not match packed "
            f"shape {tuple(packed.shape)}"
        )
    w = packed.permute(0, 5, 1, 4, 2, 3).reshape(ob_n * ob, ib_n * ib, kh, kw)
    return w[:out_channels, :in_channels].contiguous()


def conv_gemm_layout(w_shape: tuple[int, int, int, int], groups: int, nr: int) -> GemmPackedLayout:
    """The per-group GEMM layout of :func:`pack_conv_weight_gemm`."""
    o, ig, kh, kw = w_shape
    if o % groups:
        raise PackError(f"conv weight: {o} output channels not divisible by groups={groups}")
    return GemmPackedLayout(nr=nr, k=kh * kw * ig, n=o // groups)


def pack_conv_weight_gemm(w: torch.Tensor, nr: int, groups: int = 1) -> torch.Tensor:
    """``w[O, I/groups, kh, kw]`` -> ``[groups, ceil(Og/nr), kh*kw*Ig, nr]``:
    per group, the ``KN{nr}n`` panels of ``B[(y, x, i), o] = w[g*Og + o, i, y, x]``."""
    _check_tensor(w, 4, "pack_conv_weight_gemm")
    _check_block(nr, "pack_conv_weight_gemm: nr")
    _check_block(groups, "pack_conv_weight_gemm: groups")
    layout = conv_gemm_layout(tuple(w.shape), groups, nr)  # type: ignore[arg-type]
    og = layout.n
    per_group = []
    for g in range(groups):
        wg = w[g * og:(g + 1) * og]  # [Og, Ig, kh, kw]
        b_kn = wg.permute(2, 3, 1, 0).reshape(layout.k, og)  # [(y, x, i), o]
        per_group.append(pack_gemm_b(b_kn, nr))
    return torch.stack(per_group)


def unpack_conv_weight_gemm(packed: torch.Tensor, w_shape: tuple[int, int, int, int], groups: int = 1) -> torch.Tensor:
    """Inverse of :func:`pack_conv_weight_gemm` for a weight of shape ``w_shape``."""
    _check_tensor(packed, 4, "unpack_conv_weight_gemm")
    o, ig, kh, kw = w_shape
    layout = conv_gemm_layout(w_shape, groups, packed.shape[-1])
    if tuple(packed.shape) != (groups, *layout.packed_shape):
        raise PackError(
            f"unpack_conv_weight_gemm: packed shape {tuple(packed.shape)} does not match "
            f"{(groups, *layout.packed_shape)} for weight {w_shape}, groups={groups}"
        )
    parts = []
    for g in range(groups):
        b_kn = unpack_gemm_b(packed[g], layout.n)  # [(y, x, i), Og]
        parts.append(b_kn.reshape(kh, kw, ig, layout.n).permute(3, 2, 0, 1))
    return torch.cat(parts).contiguous()
