"""scatter_add, scatter_reduce(sum/mean/prod) and index_put(accumulate=True) keep a -0.0
destination where no source but -0.0 lands, as eager does (it adds the sources to the
destination one by one, and ``x + -0.0`` is ``x``): the cpu backend summed the sources from
+0.0 and added that to the destination, so a -0.0 left alone came back +0.0, and
``signbit`` of it False (fuzz seed 3, program 6706: ``signbit(scatter_add(x, ...))``).

Compared bit for bit, the sign of every zero included, on every ISA, natively."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu

#: destinations: -0.0 untouched, -0.0 hit by -0.0s only, by -0.0 and +0.0, by a nonzero, a
#: +0.0 hit by -0.0, nonzero ones, NaN hit by -0.0
BASE = [5.0, -0.0, -0.0, -0.0, -0.0, 0.0, 1.0, -0.0, float("nan")]
INDEX = [0, 1, 2, 2, 4, 5, 6, 6, 8]
SOURCE = [-0.0, -0.0, -0.0, 0.0, 1.0, -0.0, -1.0, -0.0, -0.0]


class ScatterAdd(torch.nn.Module):
    def forward(self, b: torch.Tensor, i: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return torch.scatter_add(b, 0, i, s)


class ScatterReduce(torch.nn.Module):
    def __init__(self, reduce: str, include_self: bool) -> None:
        super().__init__()
        self.reduce, self.include_self = reduce, include_self

    def forward(self, b: torch.Tensor, i: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return b.scatter_reduce(0, i, s, self.reduce, include_self=self.include_self)


class IndexPutAccumulate(torch.nn.Module):
    def forward(self, b: torch.Tensor, i: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return torch.index_put(b, (i,), s, accumulate=True)


class SignbitOfScatterAdd(torch.nn.Module):
    """The fuzz program's shape: a -0.0 outside every scattered row, then signbit."""

    def forward(self, x: torch.Tensor, i: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return torch.signbit(torch.scatter_add(x, -1, i, s))


MODELS = [ScatterAdd(), IndexPutAccumulate()] + [ScatterReduce(r, inc) for r in ("sum", "mean", "prod")
                                                 for inc in (True, False)]


def _same_bits(z: torch.Tensor, e: torch.Tensor) -> bool:
    return torch.equal(z.view(torch.int32), e.view(torch.int32))


def _name(m: torch.nn.Module) -> str:
    return "_".join([type(m).__name__] + [str(getattr(m, a)) for a in ("reduce", "include_self") if hasattr(m, a)])


@pytest.mark.parametrize("model", MODELS, ids=_name)
def test_scatter_accumulate_keeps_negative_zero(model: torch.nn.Module, isa: str) -> None:
    inputs = (torch.tensor(BASE), torch.tensor(INDEX), torch.tensor(SOURCE))
    expected = model(*inputs)
    compiled = compile_cpu(model, inputs, isa=isa, threads=1)
    assert compiled.report.fallback_ops == {}, compiled.report.fallback_ops
    got = compiled(*inputs)
    assert _same_bits(got, expected), f"{got.tolist()} vs eager {expected.tolist()}"


def test_signbit_of_scatter_add_outside_the_index(isa: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 31, generator=g)
    x[1, 0, 5] = x[0, 2, 7] = x[1, 2, 30] = -0.0
    i = torch.randint(0, 31, (1, 3, 5), generator=g)
    s = torch.randn(1, 3, 5, generator=g)
    model = SignbitOfScatterAdd()
    expected = model(x, i, s)
    compiled = compile_cpu(model, (x, i, s), isa=isa, threads=1)
    assert torch.equal(compiled(x, i, s), expected)
