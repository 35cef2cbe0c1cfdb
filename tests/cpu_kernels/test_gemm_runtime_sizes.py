"""GEMMs with a run-time ``m`` or batch count (``GemmSpec.m_runtime`` / ``batch_runtime``): one
function, planned for the largest size, called at every size up to it (the row tail as
microkernels of 8, 4, 2 and 1 rows), against torch, on every ISA, packed and unpacked A and
B, with epilogues, at one and two threads."""

from __future__ import annotations

import ctypes

import pytest
import torch
from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.kernels import GemmSpec, emit_gemm, gemm_workspace_bytes, make_plan, pack_gemm_b
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError

from .helpers import ALL_ISAS, assert_close_to


def _compile(spec: GemmSpec):  # -> ctypes function
    module = ir.Module(name=spec.symbol)
    emit_gemm(module, spec)
    library = compile_ir(module, spec.isa, cache=None)  # type: ignore[arg-type]
    args = [ctypes.c_void_p] * 6 + [ctypes.c_int64] * len(spec.runtime_sizes)
    return library, library.ctypes_function(spec.symbol, None, args)


def _workspace(spec: GemmSpec) -> torch.Tensor:
    return torch.empty(gemm_workspace_bytes(spec) // 4 + 16)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("top, n, k, pack_a", [(77, 45, 33, None), (200, 64, 600, True), (40, 300, 17, False)],
                         ids=["odd", "packed-a", "plain-a"])
def test_runtime_m_every_size(isa: Isa, threads: int, top: int, n: int, k: int, pack_a: bool | None,
                              force_threads: None) -> None:
    spec = GemmSpec(m=top, n=n, k=k, isa=isa, threads=threads, bias=True, unary="relu", binary="add",
                    pack_a=pack_a, m_runtime=True)
    assert spec.runtime_sizes == ("m",)
    if pack_a:
        assert make_plan(spec).pack_a
    _lib, fn = _compile(spec)
    torch.manual_seed(0)
    w = torch.randn(k, n)
    bias = torch.randn(n)
    packed = pack_gemm_b(w, spec.b_layout.nr)
    ws = _workspace(spec)
    for m in sorted({1, 2, 3, 5, 7, 8, 11, 12, 13, 15, 16, 17, 25, 31, top - 1, top}):
        if m > top:
            continue
        a, other = torch.randn(m, k), torch.randn(m, n)
        c = torch.full((m, n), float("nan"))
        fn(a.data_ptr(), packed.data_ptr(), c.data_ptr(), bias.data_ptr(), other.data_ptr(),
           (ws.data_ptr() + 63) // 64 * 64, m)
        assert_close_to(c, torch.relu(a @ w + bias) + other, k)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
def test_runtime_batch_count(isa: Isa, force_threads: None) -> None:
    """Q @ K^T over a run-time number of (batch x heads) matrices."""
    top, m, n, k = 9, 13, 13, 8
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, b_packed=False, b_transposed=True, batch=top,
                    batch_runtime=True)
    _lib, fn = _compile(spec)
    ws = _workspace(spec)
    for batch in (1, 2, 5, top):
        q, key = torch.randn(batch, m, k), torch.randn(batch, n, k)
        c = torch.full((batch, m, n), float("nan"))
        fn(q.data_ptr(), key.data_ptr(), c.data_ptr(), 0, 0, (ws.data_ptr() + 63) // 64 * 64, batch)
        assert_close_to(c, q @ key.transpose(1, 2), k)


def test_runtime_m_of_a_batched_gemm_is_refused() -> None:
    with pytest.raises(GemmSpecError, match="only an unbatched GEMM takes a run-time m"):
        GemmSpec(m=8, n=8, k=8, batch=2, m_runtime=True)
