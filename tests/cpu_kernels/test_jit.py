"""MCJIT compilation: calls work, every failure is a clear JitError."""

from __future__ import annotations

import ctypes
import logging
import math

import pytest

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import JitError, compile_ir, emit_assembly, optimized_ir, undefined_symbols, compile_object

from .helpers import ALL_ISAS

SAXPY = """
declare float @expf(float)
define void @saxpy(float* %x, float* %y, float %a, i64 %n) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %px = getelementptr float, float* %x, i64 %i
  %py = getelementptr float, float* %y, i64 %i
  %vx = load float, float* %px
  %vy = load float, float* %py
  %t = fmul float %a, %vx
  %r = fadd float %t, %vy
  store float %r, float* %py
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}
define float @myexp(float %x) {
  %r = call float @expf(float %x)
  ret float %r
}
"""


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
def test_compile_and_call(isa: Isa) -> None:
    lib = compile_ir(SAXPY, isa, cache=None)
    saxpy = lib.ctypes_function("saxpy", None, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float, ctypes.c_int64])
    n = 37
    x = (ctypes.c_float * n)(*[float(i) for i in range(n)])
    y = (ctypes.c_float * n)(*[1.0] * n)
    saxpy(ctypes.addressof(x), ctypes.addressof(y), 2.0, n)
    assert list(y) == [1.0 + 2.0 * i for i in range(n)]
    myexp = lib.ctypes_function("myexp", ctypes.c_float, [ctypes.c_float])
    assert math.isclose(myexp(1.0), math.e, rel_tol=1e-6)
    assert lib.has_function("saxpy") and not lib.has_function("nothere")
    assert lib.isa is isa


def test_ctypes_function_keeps_library_alive() -> None:
    fn = compile_ir(SAXPY, "auto", cache=None).ctypes_function("myexp", ctypes.c_float, [ctypes.c_float])
    import gc

    gc.collect()
    assert math.isclose(fn(0.0), 1.0)


def test_vectorised_at_o3() -> None:
    text = optimized_ir(SAXPY, Isa.AVX512 if Isa.AVX512 in ALL_ISAS else "auto")
    assert "x float>" in text  # the loop vectoriser ran


def test_parse_error_is_reported() -> None:
    with pytest.raises(JitError, match=r"(?s)does not parse.*expected type"):
        compile_ir("define i32 @g( {", cache=None)


def test_verify_error_is_reported() -> None:
    bad = """
    define i32 @g(i32 %x) {
    a:
      br label %b
    b:
      %y = add i32 %z, 1
      %z = add i32 %x, 1
      ret i32 %y
    }
    """
    with pytest.raises(JitError, match="verification"):
        compile_ir(bad, cache=None)


def test_unresolved_symbol_is_an_error_not_an_abort() -> None:
    src = "declare void @zig_no_such_function()\ndefine void @g() {\n call void @zig_no_such_function()\n ret void\n}"
    with pytest.raises(JitError, match="zig_no_such_function"):
        compile_ir(src, cache=None)


def test_missing_function_lookup() -> None:
    lib = compile_ir(SAXPY, cache=None)
    with pytest.raises(JitError, match="no function named 'nope'"):
        lib.address("nope")


def test_bad_input_type() -> None:
    with pytest.raises(JitError, match="expected LLVM IR text"):
        compile_ir(42, cache=None)  # type: ignore[arg-type]


def test_undefined_symbols_of_object() -> None:
    obj = compile_object(SAXPY, "auto")
    assert "expf" in undefined_symbols(obj)
    assert "saxpy" not in undefined_symbols(obj)


def test_emit_assembly_names_functions() -> None:
    asm = emit_assembly(SAXPY, "auto")
    assert "saxpy:" in asm and "myexp:" in asm


def test_concurrent_compiles_from_python_threads() -> None:
    """LLVM work is serialised internally; parallel callers all get working code."""
    import threading

    results: list[float] = []
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            src = SAXPY.replace("define float @myexp", f"define float @myexp{i}")
            lib = compile_ir(src, "auto", cache=None)
            results.append(lib.ctypes_function(f"myexp{i}", ctypes.c_float, [ctypes.c_float])(0.0))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [1.0] * 4
