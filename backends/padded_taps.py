"""Why a padded convolution by a weight holding inf or NaN is not compiled natively, for both
backends: eager's kernels differ on the taps that fall on the padding.  Its float32 direct
convolution and its float16 kernels skip them (fuzz seeds 3 and 95), its bf16 depthwise kernel
multiplies the padding's zero by the weight, NaN (seed 144); a compiled kernel, or TensorRT,
does one or the other everywhere."""

from __future__ import annotations

import torch

#: the reason, as fallback lines and run-time errors quote it
PADDED_TAPS_DIFFER = ("eager's kernels differ on the taps on the padding: some skip them, others multiply their zero "
                      "by the weight, NaN")


def nonfinite_weight_reason(weight: torch.Tensor) -> str | None:
    """The reason a padded convolution by the constant ``weight`` cannot be compiled, or None."""
    if bool(torch.isfinite(weight).all()):
        return None
    return f"a padded convolution by weights holding inf or NaN ({PADDED_TAPS_DIFFER})"
