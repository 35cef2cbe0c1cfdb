"""A number eager converts with an overflow check raises in the compiled module as in eager.

``x.masked_fill(m, 1e10)`` on float16, ``clamp(max=1e39)`` on float32: eager raises ("value
cannot be converted ... without overflow"); the native kernels wrote infinity (or clamped to
it) before.  Such an op now runs through torch, which raises at the call (``InputError``
naming the op); where eager does not check (bf16 ``where``, ``x + 1e39``) the numbers match.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.cpu_backend.conftest import compile_cpu
from ziggurat.ir.errors import ZigguratError

#: a number past each type's range, within float32's for the 16-bit types
PAST_RANGE = {torch.float32: 1e39, torch.bfloat16: 3.395e38, torch.float16: 65520.0, torch.int32: 2**31}

OPS: dict[str, Callable[[torch.Tensor, float], torch.Tensor]] = {
    "masked_fill": lambda x, v: x.masked_fill(x == 0, v),
    "full_like": lambda x, v: torch.full_like(x, v),
    "new_full": lambda x, v: x.new_full((3,), v),
    "fill": lambda x, v: x.clone().fill_(v),
    "where_other": lambda x, v: torch.where(x == 0, x, v),
    "where_self": lambda x, v: torch.where(x == 0, v, x),
    "clamp": lambda x, v: x.clamp(max=v),
    "clamp_min": lambda x, v: x.clamp_min(-v),
    "hardtanh": lambda x, v: F.hardtanh(x, -v, v),
    "threshold_value": lambda x, v: F.threshold(x, 1, v),
    "threshold": lambda x, v: F.threshold(x, v, 0),
    "pad": lambda x, v: F.pad(x, (1, 1), value=v),
    "add_alpha": lambda x, v: torch.add(x, x, alpha=v),
    "leaky_relu": lambda x, v: F.leaky_relu(x, v),
    "elu": lambda x, v: F.elu(x, v),
    "add": lambda x, v: x + v,
    "pow": lambda x, v: x ** v,
}
FLOAT_ONLY = {"leaky_relu", "elu", "pow", "threshold"}


class Apply(nn.Module):
    def __init__(self, fn: Callable[[torch.Tensor, float], torch.Tensor], value: float) -> None:
        super().__init__()
        self.fn, self.value = fn, value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x, self.value)


@pytest.mark.parametrize("dtype", list(PAST_RANGE), ids=["f32", "bf16", "f16", "i32"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_raises_where_eager_raises(name: str, dtype: torch.dtype) -> None:
    if name in FLOAT_ONLY and not dtype.is_floating_point:
        pytest.skip("a float op")
    x = torch.arange(4).to(dtype)
    model = Apply(OPS[name], PAST_RANGE[dtype])
    try:
        expected: torch.Tensor | None = model(x)
    except RuntimeError as e:
        assert "overflow" in str(e) or "too big" in str(e)
        expected = None
    compiled = compile_cpu(model, (x,))
    if expected is None:
        with pytest.raises(ZigguratError, match="without overflow"):
            compiled(x)
        return
    got = compiled(x)
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=True)


def test_fused_post_op_keeps_its_check() -> None:
    """A clamp after a linear is a post-op of the GEMM; with a number eager raises on it stays
    an op of its own, in torch."""
    linear = nn.Linear(8, 8)
    model = Apply(lambda x, v: linear(x).clamp(max=v), 1e39)
    x = torch.randn(2, 8)
    with pytest.raises(RuntimeError, match="overflow"):
        model(x)
    compiled = compile_cpu(model, (x,))
    assert list(compiled.report.fallback_ops) == ["aten::clamp"]
    with pytest.raises(ZigguratError, match="without overflow"):
        compiled(x)
