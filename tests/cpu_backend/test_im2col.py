"""``im2col`` (``F.unfold``): zero-padded patches, equal to eager in float32 and the 16-bit types,
batched or not, with strides, dilations and paddings; an integer tensor, which eager's im2col
refuses, runs in torch and raises as eager does (a native gather would return numbers)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.apply import Apply
from ziggurat.ir.errors import ZigguratError

CASES = [((2, 3, 9, 11), {"kernel_size": 3}),
         ((1, 4, 10, 7), {"kernel_size": (3, 2), "dilation": (2, 1), "padding": (1, 2), "stride": (2, 3)}),
         ((3, 8, 8), {"kernel_size": 2, "stride": 2}),
         ((2, 16, 8, 1), {"kernel_size": (9, 1), "padding": (4, 0)})]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("shape,options", CASES, ids=[str(s) for s, _ in CASES])
def test_unfold_matches_eager(shape: tuple[int, ...], options: dict[str, object], dtype: torch.dtype) -> None:
    model = Apply(lambda x: F.unfold(x, **options))  # pyright: ignore[reportArgumentType]
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(3)) * 10).to(dtype)
    compiled = compile_cpu(model, (x,))
    assert not compiled.report.fallback_ops
    assert torch.equal(compiled(x), model(x))


def test_integer_unfold_raises_as_eager() -> None:
    model = Apply(lambda x: torch.ops.aten.im2col(x, [2, 2], [1, 1], [0, 0], [1, 1]))
    x = torch.arange(2 * 3 * 4 * 4).reshape(2, 3, 4, 4)
    with pytest.raises(NotImplementedError):
        model(x)
    compiled = compile_cpu(model, (x,))
    assert "aten::im2col" in compiled.report.fallback_ops
    with pytest.raises(ZigguratError):
        compiled(x)
