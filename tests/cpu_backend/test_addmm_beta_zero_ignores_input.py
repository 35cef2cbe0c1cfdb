"""``addmm``/``baddbmm``/``addmv``/``addbmm`` with ``beta=0`` ignore their input: torch
documents that its NaN and inf are not propagated.  The fusion pass lifted ``addmm`` into
``fused.matmul`` keeping the input as a bias scaled by ``beta``, which every backend computes
as ``0 * inf`` = NaN (fuzz seed 3, program 4485: ``addmm(c, x, w, beta=0) * 3 >= y`` was
False where ``c`` is +-inf, eager True).

Checked on every ISA, natively, and on the reference backend (it interprets fused.matmul)."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from tests.cpu_backend.conftest import compile_cpu

INF, NAN = float("inf"), float("nan")


def _input(*shape: int) -> torch.Tensor:
    """Normal values with +-inf and NaN sprinkled in."""
    g = torch.Generator().manual_seed(1)
    t = torch.randn(*shape, generator=g)
    flat = t.view(-1)
    flat[::3] = INF
    flat[1::5] = -INF
    flat[2::7] = NAN
    return t


class Addmm(torch.nn.Module):
    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addmm(c, a, b, beta=0, alpha=1)


class AddmmScaledCompare(torch.nn.Module):
    """The fuzz program's shape: the product scaled (folded into alpha) and compared."""

    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.ge(torch.addmm(c, a, b, beta=0, alpha=1) * 3, 0.5)


class AddmmAlphaRelu(torch.nn.Module):
    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.addmm(c, a, b, beta=0.0, alpha=2.0))


class Baddbmm(torch.nn.Module):
    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(c, a.expand(2, -1, -1), b.expand(2, -1, -1), beta=0)


class Addmv(torch.nn.Module):
    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addmv(c[:, 0], a, b[:, 0], beta=0)


class Addbmm(torch.nn.Module):
    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addbmm(c, a.expand(2, -1, -1), b.expand(2, -1, -1), beta=0)


MODELS = [Addmm(), AddmmScaledCompare(), AddmmAlphaRelu(), Baddbmm(), Addmv(), Addbmm()]


def _inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(2)
    return _input(7, 17), torch.randn(7, 2, generator=g), torch.randn(2, 17, generator=g)


def _check(got: torch.Tensor, expected: torch.Tensor) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype == torch.bool:
        assert torch.equal(got, expected)
    else:
        assert not bool(got.isnan().any()), "the ignored input's NaN/inf leaked"
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_addmm_beta_zero_ignores_input(model: torch.nn.Module, isa: str) -> None:
    inputs = _inputs()
    compiled = compile_cpu(model, inputs, isa=isa, threads=1)
    assert compiled.report.fallback_ops == {}, compiled.report.fallback_ops
    _check(compiled(*inputs), model(*inputs))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_addmm_beta_zero_ignores_input_reference(model: torch.nn.Module) -> None:
    inputs = _inputs()
    compiled = ziggurat.compile(model, inputs, backend="reference")
    _check(compiled(*inputs), model(*inputs))
