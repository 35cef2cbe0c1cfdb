"""A write into an empty slice (fuzz seed 6, program 1878: ``v[1:1:3, -11:5:2, None, :] = -1``):
the ``slice_scatter`` of a zero-element source built its index arithmetic with a modulo by
the zero-size dimension (``ValueError: modulo by 0``, an internal error that sent the op to
torch), and the zero-element buffer torch then wrote had no storage at run time
(``RuntimeError: buffer has no storage`` at every call).  A zero-size shape now needs no
subscript arithmetic and no storage."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu


class EmptySliceWrite(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = x * 1
        v[1:1:3, -11:5:2, None, :] = -1
        return torch.square(v)


class EmptyPieces(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        empty = x[2:2].reshape(0, 13, 3)
        return empty.exp(), torch.cat([x, empty], 0) * 2, empty.sum(0)


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("model", [EmptySliceWrite(), EmptyPieces()], ids=lambda m: type(m).__name__)
def test_zero_size_values_compile_natively(model: torch.nn.Module, frontend: str, isa: str) -> None:
    x = torch.randn(5, 13, 3)
    compiled = compile_cpu(model, (x,), isa=isa, threads=1, frontend=frontend)
    assert compiled.report.fallback_ops == {}, compiled.report.fallback_ops
    for t in (x, torch.randn(5, 13, 3)):
        got, want = compiled(t), model(t)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                        strict=True):
            assert g.shape == w.shape
            torch.testing.assert_close(g, w)
