"""GEMM numerics against torch eager: shapes with tails, ISAs, threads,
prepacked vs on-the-fly B, batching, leading dimensions."""

from __future__ import annotations

import pytest
import torch
from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.kernels import GemmSpec, emit_gemm, gemm_callable, gemm_workspace_bytes, make_plan, pack_gemm_b

from .helpers import ALL_ISAS, assert_close_to

SHAPES = [(1, 1, 1), (1, 3, 17), (3, 17, 64), (17, 64, 3), (64, 64, 64), (13, 100, 70), (65, 33, 1023), (1023, 17, 3)]
IDS = [f"{m}x{n}x{k}" for m, n, k in SHAPES]


def _run_packed(spec: GemmSpec, a: torch.Tensor, b_kn: torch.Tensor) -> torch.Tensor:
    kern = gemm_callable(spec)
    c = torch.full((spec.m, spec.n), float("nan"))
    return kern(a, pack_gemm_b(b_kn, spec.b_layout.nr), c)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("m, n, k", SHAPES, ids=IDS)
def test_packed_b(isa: Isa, m: int, n: int, k: int) -> None:
    a, b = torch.randn(m, k), torch.randn(k, n)
    got = _run_packed(GemmSpec(m=m, n=n, k=k, isa=isa, threads=1), a, b)
    assert_close_to(got, a @ b, k)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("m, n, k", [(1, 1023, 64), (65, 33, 1023), (200, 300, 50), (13, 7, 9)], ids=str)
def test_two_threads(isa: Isa, m: int, n: int, k: int, force_threads: None) -> None:
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2)
    assert make_plan(spec).threads == 2
    a, b = torch.randn(m, k), torch.randn(k, n)
    assert_close_to(_run_packed(spec, a, b), a @ b, k)


def test_plan_splits_work_for_two_threads() -> None:
    plan = make_plan(GemmSpec(m=512, n=512, k=64, isa="auto", threads=2))
    assert plan.threads == 2 and plan.tasks_m * plan.tasks_n >= 2
    plan1 = make_plan(GemmSpec(m=512, n=512, k=64, isa="auto", threads=1))
    assert plan1.threads == 1 and plan1.tasks_m * plan1.tasks_n == 1
    tiny = make_plan(GemmSpec(m=4, n=8, k=8, isa="auto", threads=2))
    assert tiny.threads == 1  # not worth forking a team


def test_pack_a_forced_on_and_off() -> None:
    m, n, k = 50, 40, 30
    a, b = torch.randn(m, k), torch.randn(k, n)
    for pack_a in (True, False):
        spec = GemmSpec(m=m, n=n, k=k, threads=1, pack_a=pack_a)
        assert make_plan(spec).pack_a is pack_a
        assert_close_to(_run_packed(spec, a, b), a @ b, k)


@pytest.mark.parametrize(
    "m, n, k, lda, threads, packed",
    [
        (1024, 1024, 1024, None, 1, True),  # 4 KiB row stride: MR rows alias in L1
        (128, 768, 3072, None, 1, True),
        (100, 300, 700, 1024, 1, True),  # the stride, not K, decides aliasing
        (512, 512, 512, None, 1, False),  # unaliased, one thread: read in place
        (128, 768, 768, None, 2, True),  # two threads, K >= pack_a_min_k
        (3136, 256, 64, None, 2, False),  # short K: the copy is not repaid
        (8, 1024, 1024, None, 1, False),  # fewer rows than one microkernel tile
        (1024, 64, 1024, None, 1, False),  # too narrow to reuse the packed panel
    ],
    ids=str,
)
def test_auto_pack_a(m: int, n: int, k: int, lda: int | None, threads: int, packed: bool) -> None:
    spec = GemmSpec(m=m, n=n, k=k, lda=lda, isa=Isa.AVX512, threads=threads)
    assert make_plan(spec).pack_a is packed


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("m, n, k", [(65, 33, 1023), (1023, 17, 3), (700, 70, 400)], ids=str)
def test_packed_a(isa: Isa, m: int, n: int, k: int) -> None:
    """A packed into MR-row panels: M tails, K blocks, several A blocks per task."""
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, pack_a=True, lda=k + 1)
    plan = make_plan(spec)
    assert plan.pack_a
    a_big = torch.randn(m, k + 1)
    a, b = a_big[:, :k], torch.randn(k, n)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(m, n))
    assert_close_to(got, a @ b, k)


def test_packed_a_with_several_a_blocks_per_task() -> None:
    spec = GemmSpec(m=1023, n=40, k=700, threads=1, pack_a=True)
    plan = make_plan(spec)
    assert not plan.a_once and plan.mc < 1023 and plan.kc < 700
    a, b = torch.randn(1023, 700), torch.randn(700, 40)
    assert_close_to(_run_packed(spec, a, b), a @ b, 700)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("transposed", [False, True], ids=["kn", "nk"])
@pytest.mark.parametrize("m, n, k", [(1, 37, 70), (3, 17, 64), (97, 45, 600), (50, 300, 70)], ids=str)
def test_unpacked_b(isa: Isa, transposed: bool, m: int, n: int, k: int, force_threads: None) -> None:
    a = torch.randn(m, k)
    if transposed:
        storage = torch.randn(n, k + 5)
        b_view = storage[:, :k]  # [N, K] with ldb = k + 5
        b_kn = b_view.t()
    else:
        storage = torch.randn(k, n + 3)
        b_view = storage[:, :n]  # [K, N] with ldb = n + 3
        b_kn = b_view
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, b_packed=False, b_transposed=transposed,
                    ldb=b_view.stride(0))
    if transposed or (m, n) == (50, 300):
        assert make_plan(spec).pack_b  # the on-the-fly packing path is covered
    got = gemm_callable(spec)(a, b_view, torch.empty(m, n))
    assert_close_to(got, a @ b_kn, k)


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
def test_leading_dimensions(isa: Isa) -> None:
    m, n, k = 19, 23, 45
    a_big = torch.randn(m, k + 7)
    c_big = torch.zeros(m, n + 9)
    b = torch.randn(k, n)
    a, c = a_big[:, :k], c_big[:, :n]
    spec = GemmSpec(m=m, n=n, k=k, lda=k + 7, ldc=n + 9, isa=isa, threads=1)
    gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), c)
    assert_close_to(c, a @ b, k)
    assert torch.count_nonzero(c_big[:, n:]) == 0  # nothing written past N


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
def test_batched_prepacked_and_shared_weights(isa: Isa, force_threads: None) -> None:
    batch, m, n, k = 3, 14, 35, 50
    a = torch.randn(batch, m, k)
    b = torch.randn(batch, k, n)
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, batch=batch)
    assert make_plan(spec).threads == 2
    nr = spec.b_layout.nr
    packed = torch.stack([pack_gemm_b(b[i], nr) for i in range(batch)])
    got = gemm_callable(spec)(a, packed, torch.empty(batch, m, n))
    assert_close_to(got, torch.bmm(a, b), k)
    # One weight shared by every batch entry (batch stride 0).
    shared = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, batch=batch, batch_stride_b=0)
    got = gemm_callable(shared)(a, pack_gemm_b(b[0], nr), torch.empty(batch, m, n))
    assert_close_to(got, a @ b[0], k)


@pytest.mark.parametrize("transposed", [False, True], ids=["pv", "qkt"])
def test_batched_attention_shapes(transposed: bool, force_threads: None) -> None:
    """bmm with B read on the fly: Q @ K^T (B given as [N, K]) and P @ V."""
    heads, s, d = 4, 37, 24
    q = torch.randn(heads, s, d)
    kmat = torch.randn(heads, s, d)
    p = torch.softmax(torch.randn(heads, s, s), -1)
    if transposed:
        spec = GemmSpec(m=s, n=s, k=d, threads=2, batch=heads, b_packed=False, b_transposed=True)
        got = gemm_callable(spec)(q, kmat, torch.empty(heads, s, s))
        assert_close_to(got, q @ kmat.transpose(1, 2), d)
    else:
        spec = GemmSpec(m=s, n=d, k=s, threads=2, batch=heads, b_packed=False)
        got = gemm_callable(spec)(p, kmat, torch.empty(heads, s, d))
        assert_close_to(got, p @ kmat, s)


def test_two_gemms_in_one_module_share_microkernels() -> None:
    module = ir.Module("two")
    s1 = GemmSpec(m=30, n=40, k=50, threads=1, name="gemm_one")
    s2 = GemmSpec(m=31, n=40, k=50, threads=1, name="gemm_two")
    emit_gemm(module, s1)
    emit_gemm(module, s2)
    names = [f.name for f in module.functions if ".uk" in f.name]
    assert len(names) == len(set(names))
    full_tiles = [n for n in names if n.startswith("zig.uk12x32.")]
    assert len(full_tiles) <= 1  # the 12x32 tile is shared
    lib = compile_ir(module, s1.isa)
    import ctypes

    for spec in (s1, s2):
        fn = lib.ctypes_function(spec.symbol, None, [ctypes.c_void_p] * 6)
        a, b = torch.randn(spec.m, spec.k), torch.randn(spec.k, spec.n)
        packed = pack_gemm_b(b, spec.b_layout.nr)
        c = torch.empty(spec.m, spec.n)
        ws = torch.empty(max(1, gemm_workspace_bytes(spec) // 4))
        fn(a.data_ptr(), packed.data_ptr(), c.data_ptr(), 0, 0, ws.data_ptr())
        assert_close_to(c, a @ b, spec.k)


def test_emit_gemm_rejects_duplicate_symbol() -> None:
    module = ir.Module()
    spec = GemmSpec(m=4, n=4, k=4, threads=1, name="dup")
    emit_gemm(module, spec)
    with pytest.raises(ValueError, match="already has a symbol named 'dup'"):
        emit_gemm(module, spec)
