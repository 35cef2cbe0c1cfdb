"""torch's taps of linear upsampling along one dim, where TensorRT's IResizeLayer differs.

torch (``compute_source_index_and_lambda`` in ATen's ``UpSample.h``) reads two elements per
output index, ``i0 = min(floor(src), in - 1)`` with weight ``1 - l`` and ``i1 = i0 + (i0 < in - 1)``
with weight ``l = clamp(src - i0, 0, 1)``, and multiplies both even where a weight is 0.  A dim
whose size does not change reads the element itself twice, weights 1 and 0.  Where ``i0 == i1``
and a weight is 0 (that dim, an input of size 1, the last pixel at an exact coordinate), torch's
result is NaN wherever that element is not finite (``inf * 0``), while IResizeLayer copies the
element (inf stays inf).  Elsewhere a zero weight falls on a distinct neighbour, as it does in
IResizeLayer's two-tap interpolation.

torch computes the coordinates in its op-math type (float32 for float32 tensors): ``scale * dst``
(align_corners) or ``max(scale * (dst + 0.5) - 0.5, 0)``, the latter with or without a fused
multiply-add depending on how its kernel was compiled; where the two roundings disagree about a
zero weight the result is not known (None).
"""

from __future__ import annotations

import torch


def copied_with_zero_weight(in_len: int, out_len: int, align_corners: bool, scale: float | None,
                            opmath: torch.dtype = torch.float32) -> list[bool] | None:
    """Per output index, whether torch reads one element with weights 1 and 0 (so its result is
    NaN where that element is not finite, what ``y + y * 0`` makes of IResizeLayer's copy);
    None where the answer depends on torch's rounding, or where IResizeLayer's taps (its
    coordinate formulas, as ``ir/interpreter/trt_layers/layout.py`` evaluates them) read other
    elements than torch's or weigh them by 0 elsewhere (torch's float32 coordinate a rounding
    error off an integer).  ``scale``: the scale factor torch was given (it maps coordinates
    with ``1 / scale``)."""
    if in_len == out_len:
        return [True] * out_len
    dst = torch.arange(out_len, dtype=torch.float64)
    if align_corners:
        ratio = _round((in_len - 1) / (out_len - 1) if out_len > 1 else 0.0, opmath)
        variants = [_round(ratio * dst, opmath)]
    else:
        ratio = _round(1.0 / scale if scale is not None and scale > 0 else in_len / out_len, opmath)
        centre = _round(dst + 0.5, opmath)
        separate = _round(_round(ratio * centre, opmath) - 0.5, opmath)
        fused = _round(ratio * centre - 0.5, opmath)  # the product is exact in float64
        variants = [separate.clamp(min=0), fused.clamp(min=0)]
    eager = [_eager_taps(src, in_len) for src in variants]
    if any(e != eager[0] for e in eager[1:]):
        return None
    copied = [read == zero and len(read) == 1 for read, zero in eager[0]]
    resize = _resize_taps(dst, in_len, out_len, align_corners)
    poisoned = [(read, read if c else zero) for (read, zero), c in zip(resize, copied, strict=True)]
    return copied if poisoned == eager[0] else None


Taps = list[tuple[frozenset[int], frozenset[int]]]


def _round(value: float | torch.Tensor, opmath: torch.dtype) -> torch.Tensor:
    """``value`` rounded to the op-math type, held in float64."""
    return torch.as_tensor(value, dtype=torch.float64).to(opmath).to(torch.float64)


def _eager_taps(src: torch.Tensor, in_len: int) -> Taps:
    """Per output index: the elements torch reads, and those of them it weighs by 0."""
    taps: Taps = []
    for c in src.tolist():
        i0 = min(int(c // 1), in_len - 1)
        lam = min(max(c - i0, 0.0), 1.0)  # exact: c and i0 are close
        i1 = i0 + (1 if i0 < in_len - 1 else 0)
        zero = {i for i, w in ((i0, 1.0 - lam), (i1, lam)) if w == 0}
        taps.append((frozenset({i0, i1}), frozenset(zero)))
    return taps


def _resize_taps(dst: torch.Tensor, in_len: int, out_len: int, align_corners: bool) -> Taps:
    """The same for IResizeLayer: an element clamped to the last pixel is copied."""
    if align_corners:
        src = torch.zeros(out_len, dtype=torch.float64) if out_len == 1 else dst * ((in_len - 1) / (out_len - 1))
    else:
        src = (dst + 0.5) * (in_len / out_len) - 0.5
    taps: Taps = []
    for c in src.clamp(0, in_len - 1).tolist():
        lo = int(c // 1)
        hi = min(lo + 1, in_len - 1)
        if lo == hi:
            taps.append((frozenset({lo}), frozenset()))
            continue
        w = c - lo
        taps.append((frozenset({lo, hi}), frozenset(i for i, x in ((lo, 1.0 - w), (hi, w)) if x == 0)))
    return taps
