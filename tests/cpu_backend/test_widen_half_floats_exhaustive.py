"""The widened element functions over every bf16 and float16 value, on every ISA of the host
(``-m slow``: about 200 compiles): bit for bit eager's vector loop, but for the counts in
``FLIPS``, values where float32's result sits within a float32 ulp of a 16-bit rounding
boundary and lands on the other side (an ulp of the 16-bit type).

This is the check behind ``widen_half_floats.WIDENED``'s element functions; it also found
``sin``/``cos`` of ``|x| >= 2^49`` (NaN) and ``acosh`` below -1 (numbers) in float32.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.cpu_backend.conftest import compile_cpu, host_isas

Fn = Callable[[torch.Tensor], torch.Tensor]

FUNCTIONS: dict[str, Fn] = {
    "log2": torch.log2, "log10": torch.log10, "log1p": torch.log1p, "expm1": torch.expm1, "cosh": torch.cosh,
    "sinh": torch.sinh, "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "atanh": torch.atanh,
    "asinh": torch.asinh, "acosh": torch.acosh, "erfc": torch.erfc, "round": torch.round, "frac": torch.frac,
    "deg2rad": torch.deg2rad, "rad2deg": torch.rad2deg, "selu": F.selu, "celu": lambda x: F.celu(x, 0.7),
    "threshold": lambda x: F.threshold(x, 0.1, 20.0), "sgn": torch.sgn, "sin": torch.sin, "cos": torch.cos,
    "tan": torch.tan, "isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite,
    "signbit": torch.signbit, "logical_not": torch.logical_not,
    # widened before, on the same terms
    "exp": torch.exp, "log": torch.log, "exp2": torch.exp2, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "silu": F.silu, "elu": F.elu, "softplus": F.softplus, "sqrt": torch.sqrt, "reciprocal": torch.reciprocal,
    # eager's hardshrink compares with lambd rounded to the 16-bit type (WidenHardshrink)
    "logsigmoid": F.logsigmoid, "hardshrink_0.1": lambda x: F.hardshrink(x, 0.1),
    "hardshrink_0.3337": lambda x: F.hardshrink(x, 0.3337), "hardshrink_2.7": lambda x: F.hardshrink(x, 2.7),
}
#: (function, dtype, isa) -> values an ulp off eager (None: any ISA)
FLIPS: dict[tuple[str, torch.dtype, str | None], int] = {
    ("sin", torch.float16, None): 2, ("tan", torch.float16, None): 2, ("acos", torch.float16, None): 2,
    ("atan", torch.float16, None): 4, ("asinh", torch.float16, None): 2, ("sigmoid", torch.float16, None): 7,
    ("silu", torch.float16, None): 2, ("softplus", torch.float16, None): 1, ("tan", torch.bfloat16, None): 2,
    # logsigmoid of x >= 102.875: eager's float32 log1p of exp(-x) (the smallest denormal) is 0,
    # ours is that denormal, so the 16-bit result is -0 where eager's is +0; and one float16 ulp
    ("logsigmoid", torch.bfloat16, None): 2, ("logsigmoid", torch.float16, None): 19,
}


class Apply(nn.Module):
    def __init__(self, fn: Fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


def _allowed(name: str, dtype: torch.dtype, isa: str) -> int:
    return FLIPS.get((name, dtype, isa), FLIPS.get((name, dtype, None), 0))


@pytest.mark.slow
@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_value(name: str, dtype: torch.dtype, isa: str) -> None:
    if isa not in host_isas():
        pytest.skip(f"host cannot run {isa}")
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype).reshape(256, 256).clone()
    model = Apply(FUNCTIONS[name])
    compiled = compile_cpu(model, (x,), isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops  # pyright: ignore[reportAttributeAccessIssue]
    got, expected = compiled(x), model(x)  # pyright: ignore[reportCallIssue]
    if expected.dtype == torch.bool:
        assert torch.equal(got, expected)
        return
    same = (got.view(torch.int16) == expected.view(torch.int16)) | (got.isnan() & expected.isnan())
    off = ~same
    assert int(off.sum()) <= _allowed(name, dtype, isa), x[off][:8]
    if off.any():  # an ulp apart, same sign and class (or zeros of two signs)
        step = (got[off].view(torch.int16).int() - expected[off].view(torch.int16).int()).abs()
        zeros = (got[off] == 0) & (expected[off] == 0)
        assert bool(((step == 1) | zeros).all()), (x[off][:8], got[off][:8], expected[off][:8])
