"""Convolutions of odd geometry against eager on every ISA: one-pixel inputs, padding larger
than the input, strides larger than the kernel, a batch broadcast from one image.

The native kernels read their input in place as an NHWC view of a buffer.  A one-pixel input
has pixel stride 1 in that view (``conv1d`` of a ``[31, 1]`` input, fuzz program s1_g494),
which the kernel call refuses (``ConvSpecError: in_pixel=1 < channels``: the compile failed at
code generation), and a batch expanded from one image has batch stride 0, which the call took
for "dense" (wrong images).  A dim of size 1 now reads with the dense stride and a broadcast
dim from a copy.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

#: name -> (input shape, weight shape, keyword arguments); 1-d when the weight is [O, I, k]
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "conv1d_one_pixel_unbatched": ((31, 1), (4, 31, 5), {"stride": 3, "padding": 3}),
    "conv1d_one_pixel": ((2, 31, 1), (4, 31, 5), {"stride": 3, "padding": 3}),
    "conv1d_one_pixel_few_channels": ((2, 3, 1), (4, 3, 5), {"stride": 3, "padding": 3}),
    "conv1d_one_pixel_k1": ((2, 20, 1), (6, 20, 1), {}),
    "conv1d_one_pixel_groups": ((2, 18, 1), (6, 6, 3), {"padding": 2, "groups": 3}),
    "conv1d_one_pixel_depthwise": ((2, 18, 1), (18, 1, 3), {"padding": 2, "groups": 18}),
    "conv1d_stride_above_kernel": ((2, 17, 11), (5, 17, 2), {"stride": 5, "padding": 4}),
    "conv1d_dilated": ((1, 18, 7), (4, 18, 3), {"stride": 4, "padding": 5, "dilation": 3}),
    "conv2d_one_pixel": ((2, 23, 1, 1), (4, 23, 3, 3), {"stride": 2, "padding": 2}),
    "conv2d_one_pixel_unbatched": ((23, 1, 1), (4, 23, 3, 3), {"stride": 2, "padding": 2}),
    "conv2d_one_pixel_one_channel": ((2, 1, 1, 1), (4, 1, 3, 3), {"padding": 3}),
    "conv2d_one_column": ((2, 19, 5, 1), (4, 19, 3, 3), {"stride": (1, 3), "padding": (1, 3)}),
    "conv2d_one_row": ((2, 19, 1, 6), (4, 19, 3, 3), {"stride": (3, 1), "padding": (3, 1)}),
    "conv2d_padding_above_input": ((1, 20, 3, 4), (7, 20, 2, 2), {"stride": 3, "padding": 6}),
    "conv2d_stride_above_kernel": ((2, 20, 9, 10), (7, 20, 2, 3), {"stride": (5, 4), "padding": (1, 2)}),
    "conv2d_one_pixel_depthwise": ((2, 24, 1, 1), (24, 1, 3, 3), {"padding": 1, "groups": 24}),
    "conv2d_one_pixel_groups": ((2, 24, 1, 1), (8, 6, 3, 3), {"padding": 1, "groups": 4}),
    "conv2d_depthwise_strided": ((1, 16, 7, 5), (16, 1, 2, 2), {"stride": 3, "padding": 2, "groups": 16}),
}


@pytest.mark.parametrize("batch_broadcast", [False, True], ids=["plain", "batch_expanded"])
def test_odd_conv_geometry(isa: str, batch_broadcast: bool) -> None:
    g = torch.Generator().manual_seed(17)
    cases = [(name, xs, ws, kw) for name, (xs, ws, kw) in CASES.items() if not batch_broadcast or len(xs) == len(ws)]
    inputs = tuple(torch.randn(*((1, *xs[1:]) if batch_broadcast else xs), generator=g) for _, xs, _, _ in cases)
    weights = [(torch.randn(*ws, generator=g), torch.randn(ws[0], generator=g)) for _, _, ws, _ in cases]

    def fn(*xs: torch.Tensor) -> list[torch.Tensor]:
        outs = []
        for x, (_, shape, ws, kw), (w, b) in zip(xs, cases, weights, strict=True):
            if batch_broadcast:
                x = x.expand(shape[0], *x.shape[1:])
            conv = F.conv1d if len(ws) == 3 else F.conv2d
            outs.append(torch.relu(conv(x, w, b, **kw)))
        return outs

    compiled = compile_cpu(OpModule(fn), inputs, isa=isa, frontend="torchscript")
    for (name, *_), got, expected in zip(cases, compiled(*inputs), fn(*inputs), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4, msg=lambda m: f"{name}: {m}")
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops


class _RuntimeWeightConv(torch.nn.Module):
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.conv1d(x, w, padding=3, stride=3)


def test_padded_conv_by_run_time_weights_checks_they_are_finite() -> None:
    """eager skips the taps on the padding; the native kernel multiplies them by zero, NaN for
    an inf weight (fuzz seed 3 program 1633). Weights given at run time are checked at the call:
    finite ones run natively, an inf one is an error, never a NaN eager does not give."""
    import ziggurat
    from ziggurat.ir.errors import ZigguratError

    torch.manual_seed(0)
    x, w = torch.randn(3, 1, 7), torch.randn(5, 1, 5)
    compiled = ziggurat.compile(_RuntimeWeightConv(), (x, w), backend="cpu")
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    torch.testing.assert_close(compiled(x, w), _RuntimeWeightConv()(x, w))
    w[1, 0, 0] = float("inf")
    with pytest.raises(ZigguratError, match="inf or NaN weight"):
        compiled(x, w)
