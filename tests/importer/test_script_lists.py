"""Scripted code on lists and optionals: the pieces of split/unbind/chunk indexed, sliced,
copied, assigned and counted; ``x is None``; defaults and keywords of a scripted forward.
Each compiles natively on cpu and matches eager."""

from __future__ import annotations

from typing import Optional

import pytest
import torch

import ziggurat
from ziggurat.ir.errors import InputError


class Pieces(torch.nn.Module):
    def forward(self, x: torch.Tensor, b: Optional[torch.Tensor] = None, k: int = 2) -> tuple[torch.Tensor, int]:
        parts = torch.split(x, 2, 1)
        ys = list(parts[1:])
        ys[0] = ys[0] * 3
        y = parts[0] * ys[-1] * k
        if b is not None:
            y = y + b
        for t in torch.unbind(x, 0):
            y = y + t[:2]
        a, c = torch.chunk(x, 2, 0)[0], x.chunk(3, 1)[2]
        return y + a.sum() + c.mean(), len(ys)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_list_pieces_and_optional(backend: str) -> None:
    scripted = torch.jit.script(Pieces().eval())
    x, b = torch.randn(2, 6), torch.randn(2, 2)
    without = ziggurat.compile(scripted, (x,), backend=backend, frontend="torchscript")
    with_b = ziggurat.compile(scripted, (x, b), backend=backend, frontend="torchscript")
    for t in (x, torch.randn(2, 6)):
        got, want = without(t), scripted(t)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] == want[1] == 2
        torch.testing.assert_close(with_b(t, b)[0], scripted(t, b)[0])
    if backend == "cpu":
        assert not without.report.fallback_ops, without.report.fallback_ops


def test_scripted_forward_binds_defaults_and_keywords() -> None:
    scripted = torch.jit.script(Pieces().eval())
    x, b = torch.randn(2, 6), torch.randn(2, 2)
    compiled = ziggurat.compile(scripted, (x,), example_kwargs={"b": b, "k": 5}, backend="cpu")
    want = scripted(x, b, 5)[0]
    torch.testing.assert_close(compiled(x, b=b, k=5)[0], want)
    torch.testing.assert_close(compiled(x, b, 5)[0], want)
    torch.testing.assert_close(compiled(b=b, x=x, k=5)[0], want)
    with pytest.raises(InputError, match="'k' was given at compile time"):
        compiled(x, b=b)
    plain = ziggurat.compile(scripted, (x,), backend="cpu")
    torch.testing.assert_close(plain(x, k=2)[0], scripted(x)[0])
    with pytest.raises(InputError, match="argument 'k' was not given at compile time"):
        plain(x, k=3)


class TensorOfConstants(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        a = torch.tensor([1.0, 2.0, 3.0]) * x
        b = torch.tensor(x.shape[0]) + x
        c = torch.tensor([[1, 2, 3]], dtype=torch.int32) + a.long()
        return a + b, c, torch.as_tensor([4, 5, 6]) * x


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_tensor_of_constants_is_a_literal(frontend: str) -> None:
    """torch.tensor(list) failed at import on the TorchScript path (torch.ops.aten.tensor
    refuses a Python list for its generic t[]); it is a constant, computed natively."""
    x = torch.randn(2, 3)
    for model in ([torch.jit.script(TensorOfConstants()), TensorOfConstants()] if frontend == "torchscript"
                  else [TensorOfConstants()]):
        compiled = ziggurat.compile(model, (x,), backend="cpu", frontend=frontend)
        for got, want in zip(compiled(x), TensorOfConstants()(x), strict=True):
            torch.testing.assert_close(got, want, rtol=0, atol=0)
        assert not compiled.report.fallback_ops


def test_dtype_queries_are_static() -> None:
    """``if x.is_floating_point():`` is a compile-time branch (the dtype is static)."""

    def f(x: torch.Tensor) -> torch.Tensor:
        if x.is_floating_point():
            return x * 2
        if x.is_complex():
            return x
        return x + 1

    scripted = torch.jit.script(f)
    for x in (torch.randn(3), torch.arange(3)):
        compiled = ziggurat.compile(scripted, (x,), backend="cpu")
        torch.testing.assert_close(compiled(x), scripted(x))
        assert not compiled.report.fallback_ops
