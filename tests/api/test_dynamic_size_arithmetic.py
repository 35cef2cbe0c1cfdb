"""Sizes in tensor arithmetic under ``dynamic_shapes``: torch.export passes a SymInt (or a
SymFloat) where an op's schema says ``Tensor`` (``x / x.numel()`` is ``aten.div.Tensor(x,
sym_numel)``); the compiled module matches eager's values and dtypes at every size."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import SYMBOLIC_SHAPES


class SizeArithmetic(torch.nn.Module):
    """Sizes in tensor arithmetic: torch.export writes ``aten.div.Tensor(x, sym_numel)``, a
    SymInt (or SymFloat) where the schema says ``Tensor``."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        n = x.shape[0]
        return (x / x.numel(), x * n, n * x, n - x, x + n, x // n, x / (n * 0.5), x.shape[0] ** (x % 3))


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_sizes_in_tensor_arithmetic_are_wrapped_numbers(backend: str, dtype: torch.dtype) -> None:
    """A size given for a ``Tensor`` argument moved to the op's ``Scalar`` overload: eager's
    wrapped-number promotion (``int64 / n`` is float32, ``int64 * n`` stays int64, ``float32 *
    n`` stays float32) at every size; the symbolic import did not verify (an ``i64`` operand
    where a tensor goes; found by the fuzzer's -dyn configurations). The symbolic run keeps the
    size arithmetic (``n * 0.5``) symbolic: the sizes are annotated over the whole range."""
    model = SizeArithmetic()
    compiled = ziggurat.compile(model, (torch.arange(1, 7, dtype=dtype).reshape(3, 2),), backend,
                                dynamic_shapes=({0: Dim("n", min=2, max=16)},))
    assert compiled.report.stats[SYMBOLIC_SHAPES] == "annotated"
    for n in (3, 4, 11):
        x = torch.arange(1, 2 * n + 1, dtype=dtype).reshape(n, 2)
        for got, want in zip(compiled(x), model(x), strict=True):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, rtol=0, atol=0)
