"""Layer, group and instance norm on the TensorRT path, against eager on the reference executor.

Values near float32's largest: eager's Welford keeps each row's mean finite while its squares
overflow, so ``rstd`` is 0 and the output is the bias.  INormalizationLayer (as the reference
executor models it, a float32 sum) made the mean infinite and ``(x - mean) * 0`` NaN (fuzz seed
111, program 107; seed 96 found it on the CPU path).  The converters now sum ``x * (1 / n)``.
(Eager's own result is NaN for some row lengths, multiples of 8 among them: its vectorized
Welford sums chunks; the fuzz oracle calls such a program's outcome unspecified.  The rows
here are lengths where it is the bias.)  16-bit inputs are normalized in float32 and rounded once, as eager does (float16 squares
overflow from 256 on)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.export import Dim

import ziggurat

from conversion_harness import convert_and_run


def _huge_rows(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    big = x.flatten(1)
    big[0] = (torch.rand(big.shape[1], generator=g) + 1.0) * 1.5e38  # one sign: the sum overflows
    big[1] = -(torch.rand(big.shape[1], generator=g) + 1.0) * 1.5e38
    return x


def _params(c: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(c, generator=g), torch.randn(c, generator=g)


CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), (3, 57), 57),
    "layer_norm_2d": (lambda x, w, b: F.layer_norm(x, x.shape[-2:], w.reshape(x.shape[-2:]),
                                                   b.reshape(x.shape[-2:])), (3, 3, 19), 57),
    "group_norm": (lambda x, w, b: F.group_norm(x, 5, w, b), (3, 5, 3, 19), 5),
    "group_norm_3d": (lambda x, w, b: F.group_norm(x, 3, w, b), (4, 6, 7), 6),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (3, 4, 23), 4),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_overflowing_rows_give_eagers_bias(case: str) -> None:
    fn, shape, c = CASES[case]
    w, b = _params(c, 7)
    x = _huge_rows(shape, 3)
    converted = convert_and_run(lambda x: fn(x, w, b), [x])
    assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
    (got,), (want,) = converted.outputs, converted.expected
    assert torch.isfinite(want[2:]).all()
    assert torch.equal(torch.isnan(got), torch.isnan(want)), "NaN where eager is finite (or the other way)"
    finite = torch.isfinite(want)
    torch.testing.assert_close(got[finite], want[finite], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["layer_norm", "group_norm"])
def test_half_float_norms_compute_in_float32(case: str, dtype: torch.dtype) -> None:
    fn, shape, c = CASES[case]
    w, b = _params(c, 8)
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(4)) * 300.0).to(dtype)  # squares past 65504
    converted = convert_and_run(lambda x: fn(x, w.to(dtype), b.to(dtype)), [x])
    assert not converted.fallback_ops, converted.fallback_ops
    (got,), (want,) = converted.outputs, converted.expected
    assert got.dtype == dtype and torch.isfinite(got).all()
    # eager rounds the float32 result once; ours may differ by the float32 steps' order: an ulp
    torch.testing.assert_close(got.float(), want.float(), rtol=2 ** -7, atol=2 ** -7)


class _Norms(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return F.instance_norm(x) * 2 + 1, F.layer_norm(x, x.shape[-1:]) - 1, F.group_norm(x, 2) + 0.5


def test_a_dynamic_batch_converts_and_a_dynamic_row_falls_back() -> None:
    """The mean's ``1 / n`` needs the reduced dims' sizes: a dynamic batch converts (N is not
    reduced), a dynamic spatial size runs the norms through torch with the reason."""
    model, x = _Norms(), torch.randn(2, 4, 9)
    batch = ziggurat.compile(model, (x,), backend="tensorrt-reference", dynamic_shapes={"x": {0: Dim("n", min=2, max=8)}})
    assert {"aten::instance_norm", "aten::layer_norm", "aten::group_norm"} <= set(batch.report.native_ops)
    width = ziggurat.compile(model, (x,), backend="tensorrt-reference", dynamic_shapes={"x": {2: Dim("w", min=2, max=16)}})
    assert "a dynamic dim is known only at run time" in " ".join(width.report.fallback_ops["aten::group_norm"])
    for compiled, call in ((batch, torch.randn(5, 4, 9)), (width, torch.randn(2, 4, 13))):
        for got, want in zip(compiled(call), model(call), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
