"""The reference interpreter's bf16 and float16 convolutions: float32 convolutions of the same
values, rounded once to the 16-bit type.

torch 2.13's oneDNN AMX kernels compute some 16-bit convolutions wrongly, differently from call
to call (README, "torch's oneDNN AMX convolution bugs"): a width-1 image by a 1x3 kernel at
stride (1, 3); a grouped 5x3 kernel at stride 3 over a width-3 image.  Eager autocast inherits
them; the interpreter, the trusted side of every numeric check, must not.  Products of 16-bit
values are exact in float32 and eager's 16-bit kernels sum in float32 before rounding once, so
the float32 convolution rounded once is eager's kernel where that is right, up to the order of
the sums.  A weight holding inf or NaN keeps torch's 16-bit kernel: that one skips the taps on
the padding (0 there), a float32 one multiplies their zeros by inf (NaN).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

#: aten's convolutions (the qualified names, every overload)
CONVOLUTIONS = frozenset({
    "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution", "aten::_convolution",
    "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
})
HALF_FLOATS = (torch.bfloat16, torch.float16)


def half_dtype(tensors: Sequence[Any]) -> torch.dtype | None:
    """The one 16-bit float type of a convolution's CPU tensors, or None (float32, mixed, another
    device, or a weight holding inf or NaN: those run torch's own kernel)."""
    present = [t for t in tensors if isinstance(t, torch.Tensor)]
    dtypes = {t.dtype for t in present}
    if len(present) < 2 or len(dtypes) != 1 or any(t.device.type != "cpu" for t in present):
        return None
    dtype = dtypes.pop()
    if dtype not in HALF_FLOATS or not bool(torch.isfinite(present[1]).all()):
        return None
    return dtype


def convolve(fn: Callable[..., Any], positional: Sequence[Any], keywords: dict[str, Any]) -> Any:
    """``fn(*positional, **keywords)``, a convolution; in float32 rounded once where its tensors
    (input, weight, bias: the first two are input and weight) are bf16 or float16."""
    dtype = half_dtype([*positional, *keywords.values()])
    if dtype is None:
        return fn(*positional, **keywords)

    def wide(v: Any) -> Any:
        return v.float() if isinstance(v, torch.Tensor) else v

    result = fn(*[wide(v) for v in positional], **{k: wide(v) for k, v in keywords.items()})
    return result.to(dtype)
