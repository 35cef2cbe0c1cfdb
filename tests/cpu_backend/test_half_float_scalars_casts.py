"""bf16 and float16 powers, casts, scalar selections and bilinear resizes, native and bit for bit
eager's, the ops Hugging Face models in bf16 ran through torch (GPT-2's ``x ** 3``, T5's
``where(mask, x, finfo.min)``, DeBERTa's ``mask.to(bf16)``, SegFormer's bilinear resize).

Eager's 16-bit kernels round a Python number to float32 first (c10's ``BFloat16`` and ``Half``
convert from ``float``): an exponent, a fill value, an int64 converted to bf16.  A constant of
``1 + 2**-8 + 2**-40`` was bf16's 1.0078125 here, where eager's is 1.0.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.apply import Apply

DTYPES = [torch.bfloat16, torch.float16]
IDS = ["bf16", "f16"]
#: numbers of the two types' double rounding: through float32 a tie, rounded to even
TIES = {torch.bfloat16: 1 + 2**-8 + 2**-40, torch.float16: 1 + 2**-11 + 2**-40}


def _every_value(dtype: torch.dtype) -> torch.Tensor:
    return torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype).reshape(256, 256).clone()


def _same_bits(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Equal bits, or both NaN (eager's scalar and vector conversions give NaNs of other signs)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if not got.dtype.is_floating_point:
        return torch.equal(got, expected)
    same = (got.view(torch.int16) == expected.view(torch.int16)) | (got.isnan() & expected.isnan())
    return bool(same.all())


def _check(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> None:
    model = Apply(fn)
    compiled = compile_cpu(model, args)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    assert _same_bits(compiled(*args), model(*args))


# bf16 x ** 3 and x ** -2 are multiplied in bf16 by eager (each product rounded); 0.1, 1.7 and
# 257 are rounded to the tensor's type first (bf16's 257 is 256)
EXPONENTS = [2, 3, -2, 0.5, -0.5, -1, 1.5, 4, -3, 0.1, 1.7, 257, 3.0001]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_pow_of_every_value(exponent: float, dtype: torch.dtype) -> None:
    if dtype == torch.float16 and abs(exponent) == 0.5:
        pytest.skip("float16 x ** +-0.5 stays in torch (eager's float32 pow, not sqrt)")
    _check(lambda x: torch.pow(x, exponent), _every_value(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_float16_square_root_power_runs_in_torch(dtype: torch.dtype) -> None:
    x = torch.tensor([-0.0, float("-inf"), 2.0, 0.25]).to(dtype)
    model = Apply(lambda t: t ** 0.5)
    compiled = compile_cpu(model, (x,))
    assert bool(compiled.report.fallback_ops) == (dtype == torch.float16)
    assert _same_bits(compiled(x), model(x))  # float16: +0 and +inf, bf16: -0 and NaN


INTEGERS = torch.cat([torch.randint(-2**40, 2**40, (997,), generator=torch.Generator().manual_seed(0)),
                      torch.tensor([2**31 + 2**23 + 1, 2**24 + 2**13 + 1, 65519, 65520, -65520, 2**62 + 1, -2**63, 0, 1])])


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("source", [torch.int64, torch.int32, torch.bool], ids=["i64", "i32", "bool"])
def test_cast_to_half_float_rounds_through_float32(source: torch.dtype, dtype: torch.dtype) -> None:
    values = INTEGERS > 0 if source == torch.bool else INTEGERS.clamp(-2**31, 2**31 - 1).to(source)
    _check(lambda x: x.to(dtype), values)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("target", [torch.int64, torch.int32, torch.bool, "other"], ids=["i64", "i32", "bool", "other"])
def test_cast_from_half_float(target: torch.dtype | str, dtype: torch.dtype) -> None:
    to = (torch.float16 if dtype == torch.bfloat16 else torch.bfloat16) if target == "other" else target
    assert isinstance(to, torch.dtype)
    _check(lambda x: x.to(to), _every_value(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_mask_cast_in_a_product(dtype: torch.dtype) -> None:
    x = torch.randn(4, 9).to(dtype)
    mask = torch.randint(0, 2, (4, 9))
    _check(lambda a, m: a * m.to(a.dtype), x, mask)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("form", ["where_other", "where_self", "masked_fill"])
@pytest.mark.parametrize("value", ["tie", "min", 0.1, -3, float("-inf"), float("nan")])
def test_scalar_selected_as_eager_rounds_it(value: float | str, form: str, dtype: torch.dtype) -> None:
    number = TIES[dtype] if value == "tie" else torch.finfo(dtype).min if value == "min" else value
    assert isinstance(number, float | int)
    fns: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "where_other": lambda x: torch.where(x > 0, x, number),
        "where_self": lambda x: torch.where(x > 0, number, x),
        "masked_fill": lambda x: x.masked_fill(x > 0, number),
    }
    _check(fns[form], torch.randn(3, 37).to(dtype))


RESIZES = [((2, 6, 37, 53), {"scale_factor": 2}), ((2, 6, 37, 53), {"size": (64, 20)}),
           ((2, 6, 37, 53), {"size": (50, 100)}), ((2, 6, 37, 53), {"size": (100, 50)}),
           ((1, 8, 16, 16), {"scale_factor": 4}), ((1, 3, 7, 9), {"size": (11, 13)}), ((1, 4, 32, 32), {"size": (8, 8)}),
           ((1, 19, 8, 8), {"size": (32, 32)}), ((1, 5, 30, 40), {"scale_factor": 0.7})]
#: the 16-bit types' unit roundoff: a rounding moves a value by at most this share of it
HALF_ULP = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("shape,size", RESIZES, ids=[f"{s}-{k}" for s, k in RESIZES])
def test_bilinear_resize_rounds_once(shape: tuple[int, ...], size: dict[str, object], channels_last: bool,
                                     dtype: torch.dtype) -> None:
    """Eager's float32 resize rounded once (within half an ulp, plus float32's arithmetic in
    another order), and no farther from the float64 resize than eager's 16-bit kernel, which
    rounds inside on some sizes ((50, 100): 28,958 of 60,000 bf16 values differ from its float32
    result rounded, some two ulp off; on most sizes it is that rounded result, bit for bit)."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1)).to(dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    model = Apply(lambda t: F.interpolate(t, mode="bilinear", align_corners=False, **size))  # pyright: ignore[reportArgumentType]
    compiled = compile_cpu(model, (x,))
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, eager = compiled(x).double(), model(x).double()
    wide = F.interpolate(x.float(), mode="bilinear", align_corners=False, **size).double()  # pyright: ignore[reportArgumentType]
    exact = F.interpolate(x.double(), mode="bilinear", align_corners=False, **size)  # pyright: ignore[reportArgumentType]
    float32_error = 2.0**-20 * float(x.abs().max())  # a few float32 ulp of the largest input
    assert bool(((got - wide).abs() <= wide.abs() * HALF_ULP[dtype] + float32_error).all())
    assert float((got - exact).abs().max()) <= float((eager - exact).abs().max()) + float32_error


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("form", ["softmax", "log_softmax", "sum", "cumsum"])
def test_float32_dtype_argument_casts_the_operand(form: str, dtype: torch.dtype) -> None:
    """``softmax(x, -1, dtype=torch.float32)`` of a 16-bit ``x`` (Bloom, Gemma 2): ``x`` widened
    exactly, the op in float32, as eager."""
    fns: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "softmax": lambda x: torch.softmax(x, -1, dtype=torch.float32),
        "log_softmax": lambda x: torch.log_softmax(x, -1, dtype=torch.float32),
        "sum": lambda x: torch.sum(x, -1, dtype=torch.float32),
        "cumsum": lambda x: torch.cumsum(x, -1, dtype=torch.float32),
    }
    x = (torch.randn(5, 37, generator=torch.Generator().manual_seed(2)) * 4).to(dtype)
    model = Apply(fns[form])
    compiled = compile_cpu(model, (x,))
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    torch.testing.assert_close(compiled(x), model(x), rtol=2e-6, atol=1e-6)  # float32 in another order


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_cast_to_its_own_type_is_a_copy(dtype: torch.dtype) -> None:
    """``x.to(device="cpu", dtype=x.dtype)`` (Bart's ``to.dtype_layout``) keeps every bit."""
    _check(lambda x: x.to(device="cpu", dtype=dtype, copy=True), _every_value(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("replacements", [{}, {"nan": 0.5, "posinf": 100.0, "neginf": -3.0},
                                          {"posinf": 1e10, "neginf": -1e10}, {"nan": 0.1, "posinf": 0.3}],
                         ids=["defaults", "given", "overflowing", "rounded"])
def test_nan_to_num_of_every_value(replacements: dict[str, float], dtype: torch.dtype) -> None:
    """Eager's 16-bit defaults for the infinities are the type's largest and smallest values, not
    float32's; a given replacement rounds through float32 (1e10 is float16's infinity)."""
    _check(lambda x: torch.nan_to_num(x, **replacements), _every_value(dtype))
