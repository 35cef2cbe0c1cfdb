"""Column-outer tile order with streaming L2 prefetch of the next prepacked B
micro-panel (GemmPlan.cols_outer / prefetch_stream): when the planner picks it,
and numerics of every order against torch eager (row/column tails, several K
blocks, epilogues, two threads, each ISA)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels import GemmSpec, gemm_callable, make_plan, pack_gemm_b
from ziggurat.backends.cpu.kernels.gemm_plan import GemmPlan

from .helpers import ALL_ISAS, assert_close_to

VECTOR_ISAS = [isa for isa in ALL_ISAS if isa is not Isa.SCALAR]
ORDERS = {
    "rows": dict(cols_outer=False, prefetch_stream=False),
    "cols": dict(cols_outer=True, prefetch_stream=False),
    "cols+stream": dict(cols_outer=True, prefetch_stream=True),
}


def _variant(spec: GemmSpec, order: str) -> GemmPlan:
    return dataclasses.replace(make_plan(spec), **ORDERS[order])  # type: ignore[arg-type]


#: The caches the planner's choices below were made for (the Intel host's L1d and L2 a core):
#: they are the planner's, not this host's.
PLANNED_CACHES = {1: 48 * 1024, 2: 2 * 1024 * 1024, 3: 8 * 1024 * 1024}


def test_planner_streams_b_for_small_row_counts_with_prepacked_b(monkeypatch: pytest.MonkeyPatch) -> None:
    from ziggurat.backends.cpu.kernels import gemm_plan

    monkeypatch.setattr(gemm_plan, "cache_sizes", lambda: PLANNED_CACHES)
    lm_head = make_plan(GemmSpec(m=64, n=50257, k=768, isa=Isa.AVX512, threads=1))
    assert lm_head.cols_outer and lm_head.prefetch_stream and lm_head.a_once
    bert = make_plan(GemmSpec(m=128, n=768, k=768, isa=Isa.AVX512, threads=2))
    assert bert.cols_outer and bert.prefetch_stream
    # Rows spanning several A blocks keep the row-outer order.
    square = make_plan(GemmSpec(m=1024, n=1024, k=1024, isa=Isa.AVX512, threads=1))
    assert not square.a_once and not square.cols_outer and not square.prefetch_stream
    # B read in place / packed on the fly: no prepacked panel to stream.
    unpacked = make_plan(GemmSpec(m=64, n=768, k=768, isa=Isa.AVX512, threads=1, b_packed=False))
    assert not unpacked.cols_outer and not unpacked.prefetch_stream
    # Scalar code has no B panels of the tile width.
    assert not make_plan(GemmSpec(m=64, n=768, k=768, isa=Isa.SCALAR, threads=1)).prefetch_stream


def test_wide_n_is_split_by_columns_for_two_threads() -> None:
    """Splitting a wide-N GEMM with few rows by rows would make both threads read all of B."""
    plan = make_plan(GemmSpec(m=64, n=50257, k=768, isa=Isa.AVX512, threads=2))
    assert plan.threads == 2 and plan.tasks_m == 1 and plan.tasks_n == 2


def test_matrix_vector_products_reading_a_large_b_use_both_threads() -> None:
    """M = 1 is bound by reading B: worth a second thread once B is a few MB, split by columns."""
    gemv = make_plan(GemmSpec(m=1, n=1024, k=784, isa=Isa.AVX512, threads=2))
    assert gemv.threads == 2 and gemv.tasks_m == 1 and gemv.tasks_n == 2
    assert make_plan(GemmSpec(m=1, n=10, k=1024, isa=Isa.AVX512, threads=2)).threads == 1


def test_a_threaded_matrix_vector_product_matches_eager(force_threads: None) -> None:
    spec = GemmSpec(m=1, n=1031, k=1024, isa=VECTOR_ISAS[0], threads=2)
    plan = make_plan(spec)
    assert plan.threads == 2
    a, b = torch.randn(1, 1024), torch.randn(1024, 1031)
    c = torch.full((1, 1031), float("nan"))
    got = gemm_callable(spec, plan)(a, pack_gemm_b(b, spec.b_layout.nr), c)
    assert_close_to(got, a @ b, 1024)


@pytest.mark.parametrize("isa", VECTOR_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("m, n, k", [(1, 100, 37), (13, 70, 129), (64, 1000, 200), (37, 333, 900), (12, 32, 4)],
                         ids=str)
def test_orders_match_eager(isa: Isa, order: str, m: int, n: int, k: int) -> None:
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=1)
    plan = _variant(spec, order)
    a, b = torch.randn(m, k), torch.randn(k, n)
    c = torch.full((m, n), float("nan"))
    got = gemm_callable(spec, plan)(a, pack_gemm_b(b, spec.b_layout.nr), c)
    assert_close_to(got, a @ b, k)


@pytest.mark.parametrize("isa", VECTOR_ISAS, ids=lambda i: i.value)
@pytest.mark.parametrize("order", ["rows", "cols+stream"])
def test_epilogue_over_several_k_blocks_and_threads(isa: Isa, order: str, force_threads: None) -> None:
    """bias + gelu + broadcast residual with K split in blocks, two threads, tails both ways."""
    m, n, k = 29, 203, 1100
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, bias=True, unary="gelu_erf", binary="add",
                    other_strides=(0, 1))
    plan = _variant(spec, order)
    assert plan.kc < k and plan.threads == 2
    a, b = torch.randn(m, k) / k ** 0.5, torch.randn(k, n)
    bias, other = torch.randn(n), torch.randn(1, n)
    c = torch.full((m, n), float("nan"))
    got = gemm_callable(spec, plan)(a, pack_gemm_b(b, spec.b_layout.nr), c, bias, other.expand(m, n))
    want = torch.nn.functional.gelu(a @ b + bias) + other
    assert_close_to(got, want, k)


@pytest.mark.parametrize("isa", VECTOR_ISAS, ids=lambda i: i.value)
def test_batched_shared_weights_streamed(isa: Isa, force_threads: None) -> None:
    batch, m, n, k = 3, 20, 150, 70
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=2, batch=batch, batch_stride_b=0)
    plan = make_plan(spec)
    assert plan.prefetch_stream
    a, b = torch.randn(batch, m, k), torch.randn(k, n)
    got = gemm_callable(spec)(a, pack_gemm_b(b, spec.b_layout.nr), torch.empty(batch, m, n))
    assert_close_to(got, a @ b, k)


def test_an_l2_under_a_megabyte_is_planned_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Tuning.l2_floor``: a 512 KB L2 (AMD Zen 1-3) gets the blocks of a 1 MB one."""
    from ziggurat.backends.cpu.kernels import gemm_plan

    spec = GemmSpec(m=1024, n=1024, k=1024, isa=Isa.AVX2, threads=1)
    monkeypatch.setattr(gemm_plan, "cache_sizes", lambda: {1: 32 * 1024, 2: 512 * 1024, 3: 8 << 20})
    small = make_plan(spec)
    monkeypatch.setattr(gemm_plan, "cache_sizes", lambda: {1: 32 * 1024, 2: 1 << 20, 3: 8 << 20})
    assert small == make_plan(spec) and (small.kc, small.nc, small.mc) == (512, 256, 126), small
