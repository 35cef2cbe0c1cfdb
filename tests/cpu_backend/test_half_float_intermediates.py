"""bf16 and float16 ``xlogy``, ``logit`` and trunc division, native and bit for bit eager's.

Eager's 16-bit kernels round an intermediate there (``log(y)``; ``1 - x`` and the odds; the
quotient), in its vector loop, its scalar tail and on strided operands alike.  Float32's result
rounded once differs from eager's on 8,499, 1,787 and 408 of 65,536 random bf16 pairs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import WIDEST_ISA, compile_cpu, host_isas
from tests.support.apply import Apply

DTYPES = [torch.bfloat16, torch.float16]
IDS = ["bf16", "f16"]
Fn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
OPS: dict[str, Fn] = {
    "xlogy": torch.xlogy,
    "logit": lambda x, y: torch.logit(x),
    "div_trunc": lambda x, y: torch.div(x, y, rounding_mode="trunc"),
}
#: how the operands reach eager's kernel: its vector loop, its scalar tail (31-element rows of
#: a strided view), strided operands, and a broadcast row
FORMS: dict[str, Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]] = {
    "contiguous": lambda x, y: (x, y),
    "strided": lambda x, y: (x[:, ::2], y[:, ::2]),
    "tail": lambda x, y: (x[:, :31], y[:, :31]),
    "broadcast": lambda x, y: (x, y[:1]),
}


def _pairs(dtype: torch.dtype, rows: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """Random values, a quarter of them random bit patterns (NaNs, infinities, denormals),
    values in (0, 1) for logit, zeros and NaNs where xlogy special-cases them."""
    g = torch.Generator().manual_seed(7)
    n = rows * 64
    x = (torch.randn(n, generator=g) * 4).to(dtype)
    y = (torch.randn(n, generator=g) * 4).to(dtype)
    bits = torch.randint(-32768, 32767, (2, n // 4), generator=g, dtype=torch.int32).to(torch.int16).view(dtype)
    x[: n // 4], y[n // 8: n // 8 + n // 4] = bits[0], bits[1]
    x[n // 2: n // 2 + n // 8] = torch.rand(n // 8, generator=g).to(dtype)
    x[-64:-32] = 0.0
    y[-48:-40] = float("nan")
    return x.reshape(rows, 64), y.reshape(rows, 64)


def _check(name: str, form: str, dtype: torch.dtype, isa: str = WIDEST_ISA) -> None:
    fn, shape = OPS[name], FORMS[form]
    model = Apply(lambda x, y: fn(*shape(x, y)))
    x, y = _pairs(dtype)
    compiled = compile_cpu(model, (x, y), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, expected = compiled(x, y), model(x, y)
    same = (got.view(torch.int16) == expected.view(torch.int16)) | (got.isnan() & expected.isnan())
    assert bool(same.all()), f"{int((~same).sum())} of {same.numel()} differ: {got[~same][:4]} vs {expected[~same][:4]}"


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", sorted(OPS))
def test_bit_for_bit(name: str, form: str, dtype: torch.dtype) -> None:
    _check(name, form, dtype)


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_other_isas(name: str, isa: str) -> None:
    if isa not in host_isas():
        pytest.skip(f"host cannot run {isa}")
    for dtype in DTYPES:
        _check(name, "contiguous", dtype, isa)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_logit_with_eps_and_floor_division_stay_in_torch(dtype: torch.dtype) -> None:
    """Not written out (eager's roundings there are not measured): they run through torch."""
    x, y = _pairs(dtype, 4)
    for fn in (lambda a, b: torch.logit(a, 1e-3), lambda a, b: torch.div(a, b, rounding_mode="floor")):
        model = Apply(fn)
        compiled = compile_cpu(model, (x, y))
        assert compiled.report.fallback_ops
        got, expected = compiled(x, y), model(x, y)
        assert bool(((got.view(torch.int16) == expected.view(torch.int16)) | (got.isnan() & expected.isnan())).all())
