"""tanh near 0 is its Taylor series (``vecmath/smooth.py``): the expm1 quotient was 1 ulp off in
four cases of ten there, and ``tanhshrink`` (``x - tanh(x)``, all cancellation) turned that ulp
into a 0 where eager's is not (fuzz seed 24, program 246: a floor division by it then gave 0
for 1).  Below |x| = 0.0625 the result is correctly rounded, as eager's is."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from ziggurat.backends.cpu.isa import Isa, host_supports

ISAS = [i.value for i in (Isa.AVX512, Isa.AVX2, Isa.SCALAR) if host_supports(i)]


class Tanh(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.tanh(x), torch.nn.functional.tanhshrink(x)


@pytest.mark.parametrize("isa", ISAS)
def test_tanh_is_correctly_rounded_near_zero(isa: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.cat([(torch.rand(1 << 16, generator=g) - 0.5) * 0.125, torch.logspace(-30, -1.3, 512),
                   -torch.logspace(-30, -1.3, 512)]).float()
    compiled = ziggurat.compile(Tanh(), (x,), backend="cpu", isa=isa)
    tanh, shrink = compiled(x)
    exact = torch.tanh(x.double())
    ulp = torch.finfo(torch.float32).eps * exact.abs().clamp_min(torch.finfo(torch.float32).tiny)
    assert ((tanh.double() - exact).abs() / ulp).max().item() <= 0.5001
    assert (tanh == torch.tanh(x)).float().mean().item() > 0.995
    assert torch.equal(shrink == 0, (x - torch.tanh(x)) == 0)


@pytest.mark.parametrize("isa", ISAS)
def test_tanh_keeps_the_sign_of_zero(isa: str) -> None:
    x = torch.tensor([0.0, -0.0, 1e-39, -1e-39])
    tanh, _ = ziggurat.compile(Tanh(), (x,), backend="cpu", isa=isa)(x)
    assert torch.equal(torch.signbit(tanh), torch.signbit(x)) and torch.equal(tanh, x)
