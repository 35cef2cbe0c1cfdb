"""GEMMs with a run-time ``m`` or batch count (``GemmSpec.m_runtime`` / ``batch_runtime``): one
function, planned for the largest size, called at every size up to it (the row tail as
microkernels of 8, 4, 2 and 1 rows), against torch, on every ISA, packed and unpacked A and
B, with epilogues, at one and two threads (``make test`` runs each sweep's each-choice cover,
``-m slow`` all of it: ``tests/support/sweep.py``)."""

from __future__ import annotations

import ctypes

import pytest
import torch
from llvmlite import ir

from tests.support.sweep import each_choice
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


@each_choice(["top, n, k, pack_a", "isa", "threads"], [(77, 45, 33, None), (200, 64, 600, True), (40, 300, 17, False)],
             ALL_ISAS, [1, 2], ids=[["odd", "packed-a", "plain-a"], lambda i: i.value, None])
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
    with pytest.raises(GemmSpecError, match="a batched GEMM takes a run-time m only with the batch strides"):
        GemmSpec(m=8, n=8, k=8, batch=2, m_runtime=True)


def test_runtime_strides_need_a_plain_b_and_no_epilogue() -> None:
    with pytest.raises(GemmSpecError, match="plain \\(not prepacked\\) B"):
        GemmSpec(m=8, n=8, k=8, runtime=("n",))
    with pytest.raises(GemmSpecError, match="plain \\(not prepacked\\) B"):
        GemmSpec(m=8, n=8, k=8, b_packed=False, bias=True, runtime=("n",))
    with pytest.raises(GemmSpecError, match="each at most once"):
        GemmSpec(m=8, n=8, k=8, b_packed=False, runtime=("n", "m"))


_SEQ = {"m", "batch", "n", "k", "lda", "ldb", "ldc", "batch_stride_a", "batch_stride_b", "batch_stride_c"}


def _attention_spec(isa: Isa, threads: int, which: str, top: int, heads: int, d: int, unary: str | None) -> GemmSpec:
    """Q @ K^T (``[s, d] @ [d, s]``) or P @ V (``[s, s] @ [s, d]``) over ``heads`` matrices
    whose ``s`` (and batch) come at run time, planned for ``top``."""
    if which == "qk":
        return GemmSpec(m=top, n=top, k=d, lda=d, ldc=top, ldb=top, isa=isa, threads=threads, b_packed=False,
                        batch=heads, batch_stride_a=top * d, batch_stride_b=d * top, batch_stride_c=top * top,
                        unary=unary, m_runtime=True, batch_runtime=True,
                        runtime=("n", "ldb", "ldc", "batch_stride_a", "batch_stride_b", "batch_stride_c"))
    if which == "qkt":  # K read in place, [s, d] rows: B transposed
        return GemmSpec(m=top, n=top, k=d, lda=d, ldc=top, ldb=d, isa=isa, threads=threads, b_packed=False,
                        b_transposed=True, batch=heads, batch_stride_a=top * d, batch_stride_b=top * d,
                        batch_stride_c=top * top, unary=unary, m_runtime=True, batch_runtime=True,
                        runtime=("n", "ldc", "batch_stride_a", "batch_stride_b", "batch_stride_c"))
    return GemmSpec(m=top, n=d, k=top, lda=top, ldc=d, ldb=d, isa=isa, threads=threads, b_packed=False,
                    batch=heads, batch_stride_a=top * top, batch_stride_b=top * d, batch_stride_c=top * d,
                    unary=unary, m_runtime=True, batch_runtime=True,
                    runtime=("k", "lda", "batch_stride_a", "batch_stride_b", "batch_stride_c"))


@each_choice(["which, top, d, unary", "isa", "threads"],
             [("qk", 77, 24, None), ("pv", 77, 24, None), ("qk", 300, 64, "relu"), ("pv", 700, 40, "gelu_erf"),
              ("qk", 50, 700, "tanh"), ("qkt", 77, 24, None), ("qkt", 70, 33, "relu")], ALL_ISAS, [1, 2],
             ids=[["qk", "pv", "qk-big", "pv-long-k", "qk-staged-k-blocks", "qkt", "qkt-odd-d"], lambda i: i.value, None])
def test_runtime_sequence_in_attention(isa: Isa, threads: int, which: str, top: int, d: int, unary: str | None,
                                       force_threads: None) -> None:
    """A dynamic sequence: ``n``/``ldb``/``ldc`` (Q @ K^T) or ``k``/``lda`` (P @ V) and every batch
    stride at run time, with ``m`` and the batch count, at sizes around the tile width and the
    K block, against torch; the columns past ``n`` of a staged tile are never written."""
    heads = 5
    spec = _attention_spec(isa, threads, which, top, heads, d, unary)
    plan = make_plan(spec)
    assert set(spec.runtime_sizes) <= _SEQ and plan.pack_b
    if d == 700:
        assert plan.kc < d  # more than one K block: a staged tile is copied back in
    _lib, fn = _compile(spec)
    ws = _workspace(spec)
    torch.manual_seed(1)
    act = {None: lambda x: x, "relu": torch.relu, "gelu_erf": torch.nn.functional.gelu, "tanh": torch.tanh}[unary]
    for s in sorted({1, 2, 3, 15, 16, 17, 31, 33, 47, 49, top // 2 + 1, top - 1, top}):
        for batch in (1, 3, heads):
            if which == "qk":
                x, y = torch.randn(batch, s, d), torch.randn(batch, d, s)
                c = torch.full((batch, s, s + 1), float("nan"))[..., :s].contiguous()
                sizes = (s, batch, s, s, s, s * d, d * s, s * s)
            elif which == "qkt":
                x, key = torch.randn(batch, s, d), torch.randn(batch, s, d)
                y = key.transpose(1, 2)
                c = torch.full((batch, s, s), float("nan"))
                sizes = (s, batch, s, s, s * d, s * d, s * s)
                guard = torch.full((c.numel() + 64,), 7.0)
                guard[:c.numel()] = float("nan")
                fn(x.data_ptr(), key.data_ptr(), guard.data_ptr(), 0, 0, (ws.data_ptr() + 63) // 64 * 64, *sizes)
                assert_close_to(guard[:c.numel()].view(c.shape), act(x @ y), d)
                assert bool((guard[c.numel():] == 7.0).all()), f"s={s}, batch={batch}: wrote past C"
                continue
            else:
                x, y = torch.randn(batch, s, s), torch.randn(batch, s, d)
                c = torch.full((batch, s, d), float("nan"))
                sizes = (s, batch, s, s, s * s, s * d, s * d)
            guard = torch.full((c.numel() + 64,), 7.0)
            guard[:c.numel()] = float("nan")
            fn(x.data_ptr(), y.data_ptr(), guard.data_ptr(), 0, 0, (ws.data_ptr() + 63) // 64 * 64, *sizes)
            got = guard[:c.numel()].view(c.shape)
            assert_close_to(got, act(x @ y), y.shape[1])
            assert bool((guard[c.numel():] == 7.0).all()), f"s={s}, batch={batch}: wrote past C"


@each_choice(["isa", "binary_first, unary"], ALL_ISAS, [(True, "relu"), (False, "silu"), (False, None)],
             ids=[lambda i: i.value, None])
def test_runtime_strides_of_the_residual(isa: Isa, binary_first: bool, unary: str | None, force_threads: None) -> None:
    """A linear layer over ``seq`` rows whose residual is stored transposed (``[hidden, seq]``:
    row stride 1, column stride ``seq``), both at run time, with a prepacked B and a bias."""
    top, n, k = 45, 40, 24
    spec = GemmSpec(m=top, n=n, k=k, isa=isa, threads=2, bias=True, unary=unary, binary="add", alpha=0.5,
                    binary_first=binary_first, other_strides=(1, top), m_runtime=True,
                    runtime=("other_row_stride", "other_col_stride"))
    assert spec.epilogue.other_runtime and spec.runtime_sizes == ("m", "other_row_stride", "other_col_stride")
    _lib, fn = _compile(spec)
    torch.manual_seed(2)
    w, bias = torch.randn(k, n), torch.randn(n)
    packed = pack_gemm_b(w, spec.b_layout.nr)
    ws = _workspace(spec)
    act = {None: lambda x: x, "relu": torch.relu, "silu": torch.nn.functional.silu}[unary]
    for m in (1, 2, 7, 16, 17, 31, top):
        a, residual = torch.randn(m, k), torch.randn(n, m)
        c = torch.full((m, n), float("nan"))
        fn(a.data_ptr(), packed.data_ptr(), c.data_ptr(), bias.data_ptr(), residual.data_ptr(),
           (ws.data_ptr() + 63) // 64 * 64, m, 1, m)
        y = a @ w + bias
        want = act(y + 0.5 * residual.t()) if binary_first else act(y) + 0.5 * residual.t()
        assert_close_to(c, want, k)
        # and a contiguous residual through the same function: column stride 1
        contiguous = residual.t().contiguous()
        fn(a.data_ptr(), packed.data_ptr(), c.data_ptr(), bias.data_ptr(), contiguous.data_ptr(),
           (ws.data_ptr() + 63) // 64 * 64, m, n, 1)
        assert_close_to(c, want, k)
