"""The libgomp parallel-for helper."""

from __future__ import annotations

import ctypes
import os
import threading

import pytest
import torch
from llvmlite import ir

from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.llvm_ir import F32, I64, I64P, for_range
from ziggurat.backends.cpu.threads import (
    TEAM_PTR_FN,
    THREADS_PTR_FN,
    default_threads,
    emit_parallel_for,
    load_openmp,
    openmp_library_path,
)


def _fill_module(n_tasks: int, threads: int) -> ir.Module:
    """``fill(out, who)``: out[i] = 2*i, who[i] = thread id, for i < n_tasks."""
    m = ir.Module("fill")
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [F32.as_pointer(), I64P]), name="fill")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def body(bb: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        out, who = caps
        with for_range(bb, begin, end) as i:
            v = bb.fmul(bb.sitofp(i, F32), ir.Constant(F32, 2.0))
            bb.store(v, bb.gep(out, [i]))
            bb.store(tid, bb.gep(who, [i]))

    emit_parallel_for(m, b, n_tasks, body, num_threads=threads, captures=list(fn.args))
    b.ret_void()
    return m


def _run(n_tasks: int, threads: int) -> tuple[torch.Tensor, torch.Tensor]:
    lib = compile_ir(_fill_module(n_tasks, threads), "auto", cache=None)
    f = lib.ctypes_function("fill", None, [ctypes.c_void_p, ctypes.c_void_p])
    out = torch.full((n_tasks,), -1.0)
    who = torch.full((n_tasks,), -1, dtype=torch.int64)
    f(out.data_ptr(), who.data_ptr())
    return out, who


@pytest.mark.parametrize("n_tasks, threads", [(1, 1), (10, 1), (10, 2), (7, 3), (2, 8), (1000, 2)])
def test_parallel_for_covers_every_task_once(n_tasks: int, threads: int) -> None:
    out, who = _run(n_tasks, threads)
    torch.testing.assert_close(out, 2.0 * torch.arange(n_tasks, dtype=torch.float32))
    team = min(threads, n_tasks)
    assert set(who.tolist()) == set(range(team))
    # Static contiguous split: thread ids are non-decreasing over the tasks.
    assert who.tolist() == sorted(who.tolist())


def test_single_thread_does_not_reference_openmp() -> None:
    text = str(_fill_module(4, 1))
    assert "GOMP_parallel" not in text and "omp_get" not in text
    assert "GOMP_parallel" in str(_fill_module(4, 2))


@pytest.mark.parametrize("limit, team", [(0, 3), (1, 1), (2, 2), (3, 3), (5, 3), (-1, 3)])
def test_run_time_thread_limit(limit: int, team: int) -> None:
    """The module's thread limit, set after compiling, sizes the team (capped by the planned
    3 threads; 0 or less: the planned count); the region records the team it really got."""
    lib = compile_ir(_fill_module(12, 3), "auto", cache=None)
    f = lib.ctypes_function("fill", None, [ctypes.c_void_p, ctypes.c_void_p])
    limit_ptr, team_ptr = (lib.ctypes_function(name, ctypes.c_void_p, [])() for name in (THREADS_PTR_FN, TEAM_PTR_FN))
    ctypes.c_int32.from_address(limit_ptr).value = limit
    out = torch.full((12,), -1.0)
    who = torch.full((12,), -1, dtype=torch.int64)
    f(out.data_ptr(), who.data_ptr())
    torch.testing.assert_close(out, 2.0 * torch.arange(12, dtype=torch.float32))
    assert set(who.tolist()) == set(range(team))
    assert ctypes.c_int32.from_address(team_ptr).value == team


def test_shares_torchs_openmp_runtime() -> None:
    torch.set_num_threads(2)
    x = torch.randn(256, 256)
    (x @ x).sum()  # torch's OpenMP pool is up
    path = load_openmp()
    assert path == openmp_library_path()
    mapped = [line.split()[-1] for line in open("/proc/self/maps") if "libgomp" in line]
    assert len(set(mapped)) == 1, f"more than one OpenMP runtime mapped: {set(mapped)}"
    out, who = _run(64, 2)
    assert set(who.tolist()) == {0, 1}
    (x @ x).sum()  # and torch still works afterwards
    torch.testing.assert_close(out[:4], torch.tensor([0.0, 2.0, 4.0, 6.0]))


def test_concurrent_callers_from_python_threads() -> None:
    lib = compile_ir(_fill_module(257, 2), "auto", cache=None)
    f = lib.ctypes_function("fill", None, [ctypes.c_void_p, ctypes.c_void_p])
    errors: list[str] = []

    def worker() -> None:
        for _ in range(20):
            out = torch.zeros(257)
            who = torch.zeros(257, dtype=torch.int64)
            f(out.data_ptr(), who.data_ptr())
            if not torch.equal(out, 2.0 * torch.arange(257, dtype=torch.float32)):
                errors.append("wrong result")

    ts = [threading.Thread(target=worker) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_default_threads_is_affinity() -> None:
    assert default_threads() == len(os.sched_getaffinity(0))


def test_bad_arguments() -> None:
    m = ir.Module()
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), []), name="f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with pytest.raises(ValueError, match="num_threads"):
        emit_parallel_for(m, b, 4, lambda *a: None, num_threads=0)
    with pytest.raises(ValueError, match="n_tasks"):
        emit_parallel_for(m, b, -1, lambda *a: None, num_threads=2)


def test_dynamic_task_count() -> None:
    """``n_tasks`` may be a runtime i64 value (the team size is then fixed)."""
    m = ir.Module("dyn")
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [F32.as_pointer(), I64]), name="fill")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def body(bb: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        (out,) = caps
        with for_range(bb, begin, end) as i:
            bb.store(bb.sitofp(i, F32), bb.gep(out, [i]))

    emit_parallel_for(m, b, fn.args[1], body, num_threads=2, captures=[fn.args[0]])
    b.ret_void()
    f = compile_ir(m, "auto", cache=None).ctypes_function("fill", None, [ctypes.c_void_p, ctypes.c_int64])
    for n in (0, 1, 5, 100):
        out = torch.full((max(n, 1),), -1.0)
        f(out.data_ptr(), n)
        if n:
            torch.testing.assert_close(out, torch.arange(n, dtype=torch.float32))
        else:
            assert out.item() == -1.0
