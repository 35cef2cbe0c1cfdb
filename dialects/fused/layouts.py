"""Packed weight layouts of the ``fused`` ops: the packed operand's shape for a logical weight.

The layouts are defined by ``pack.py`` (which packs and unpacks the
data) and chosen by ``backends/cpu/prepack_weights.py``; the verifier only needs their shapes:

* ``KN{nr}n``, GEMM B panels: a ``fused.linear`` weight ``W[N, K]`` and a ``fused.matmul``
  right operand ``B[K, N]`` become ``[ceil(N/nr), K, nr]``; a ``fused.conv2d`` weight
  ``[O, I/g, kh, kw]`` becomes, per group, the panels over ``K = kh*kw*I/g``:
  ``[groups, ceil(O/g/nr), kh*kw*I/g, nr]``;
* ``OIhw{ib}i{ob}o``, blocked conv weights: ``[O, I, kh, kw]`` ->
  ``[ceil(O/ob), ceil(I/ib), kh, kw, ib, ob]``;
* ``KN32n4k``, a ``fused.linear``'s int8 weight with one scale per row (``pack_int8.py``): one
  flat int8 operand, the epilogue table then the VNNI-4 panels (a ``fused.conv2d``'s
  ``[O, I, kh, kw]`` as ``[O, kh*kw*I]``, taps outer, channels inner, for an NHWC input).  The
  logical weight is the float32 one (int8 times its row's scale).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_GEMM = re.compile(r"KN([1-9][0-9]{0,5})n")
_BLOCKED = re.compile(r"OIhw([1-9][0-9]{0,5})i([1-9][0-9]{0,5})o")
#: The int8 linear weight's layout (``pack_int8.LAYOUT``).
INT8_LINEAR = "KN32n4k"
INT8_LAYOUTS = (INT8_LINEAR,)


class LayoutError(ValueError):
    """A packed weight does not match its layout and logical shape."""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _gemm_panels(layout: str, n: int, k: int, nr: int) -> tuple[int, ...]:
    if n < 1 or k < 1:
        raise LayoutError(f"{layout} packs a non-empty weight, the logical one has N={n}, K={k}")
    return (_ceil_div(n, nr), k, nr)


def packed_shape(base: str, layout: str, logical: Sequence[int], groups: int = 1) -> tuple[int, ...]:
    """The shape of ``logical`` packed in ``layout`` for a ``base`` op (``"conv2d"``,
    ``"linear"``, ``"matmul"``); ``LayoutError`` says why there is none."""
    shape = tuple(logical)
    rank = {"linear": 2, "matmul": 2, "conv2d": 4}[base]
    if len(shape) != rank:
        raise LayoutError(f"weight_shape of a packed {base} weight must have {rank} dimensions, got {list(shape)}")
    if any(d < 1 for d in shape):
        raise LayoutError(f"weight_shape must be positive, got {list(shape)}")
    if layout == INT8_LINEAR and base in ("linear", "conv2d"):
        from ziggurat.dialects.fused.pack_int8 import packed_operand_bytes

        if base == "conv2d" and groups != 1:
            raise LayoutError(f"{layout} packs a convolution of one group, this one has {groups}")
        return (packed_operand_bytes(math.prod(shape[1:]), shape[0]),)
    if (gemm := _GEMM.fullmatch(layout)) is not None:
        nr = int(gemm.group(1))
        if base == "linear":
            return _gemm_panels(layout, shape[0], shape[1], nr)
        if base == "matmul":
            return _gemm_panels(layout, shape[1], shape[0], nr)
        o, ig, kh, kw = shape
        if o % groups:
            raise LayoutError(f"{layout}: {o} output channels are not divisible by groups = {groups}")
        return (groups, *_gemm_panels(layout, o // groups, kh * kw * ig, nr))
    if (blocked := _BLOCKED.fullmatch(layout)) is not None and base == "conv2d":
        ib, ob = int(blocked.group(1)), int(blocked.group(2))
        o, i, kh, kw = shape
        return (_ceil_div(o, ob), _ceil_div(i, ib), kh, kw, ib, ob)
    known = "KN{nr}n, OIhw{ib}i{ob}o, KN32n4k" if base == "conv2d" else "KN{nr}n, KN32n4k" if base == "linear" else "KN{nr}n"
    raise LayoutError(f"unknown weight layout '{layout}' for {base} (known: {known})")


__all__ = ["INT8_LAYOUTS", "INT8_LINEAR", "LayoutError", "packed_shape"]
