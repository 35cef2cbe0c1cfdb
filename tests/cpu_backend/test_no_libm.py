"""Transcendentals are polynomial vector code: the object code of a graph full of them needs
no symbol but libgomp's (never libm), under every ISA."""

from __future__ import annotations

import torch

from tests.cpu_backend.conftest import compile_cpu
from ziggurat.backends.cpu.jit import compile_object, undefined_symbols

ALLOWED = {"GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads", "_GLOBAL_OFFSET_TABLE_"}
#: The scalar ISA switches FMA off; ``llvm.fma`` (vecmath's polynomials) then becomes libm's
#: correctly rounded software ``fma`` - an arithmetic primitive, not a transcendental.
SCALAR_FMA = {"fma", "fmaf"}


class Transcendental(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.exp(x) + torch.log1p(x.abs()) + torch.tanh(x) + torch.erf(x) + torch.sin(x) * torch.cos(x)
        y = y + torch.atan2(x, y) + torch.pow(x.abs() + 1, y.clamp(-2, 2)) + torch.floor(x) + torch.fmod(x, 0.7)
        return torch.nn.functional.gelu(y) + torch.sigmoid(y).round() + torch.asinh(y) + torch.acos(x.clamp(-1, 1))


def test_object_code_calls_no_libm(isa: str) -> None:
    x = torch.randn(64, 67)
    compiled = compile_cpu(Transcendental(), (x,), isa=isa, threads=2)
    torch.testing.assert_close(compiled(x), Transcendental()(x), rtol=2e-4, atol=2e-5)
    obj = compile_object(compiled.ir["llvm"], isa)
    allowed = ALLOWED | (SCALAR_FMA if isa == "scalar" else set())
    assert set(undefined_symbols(obj)) <= allowed, undefined_symbols(obj)
    declared = [line for line in compiled.ir["llvm"].splitlines() if line.startswith("declare")]
    assert all('"llvm.' in line or any(s in line for s in ALLOWED) for line in declared), declared
