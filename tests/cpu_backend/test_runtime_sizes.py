"""Run-time sizes at the loop level (issue 16, step 1 of one CPU build per range).

Loop-level functions written by hand with a dynamic batch dim: ``loop.dim`` reads it from
the input, ``loop.offset`` computes sizes from it, buffers are allocated with it (planned in
the arena at the top of the range), kernels take it (``sizes(...)``), and ``loop.parallel``,
``loop.for`` and ``loop.vfor`` run to it, the vector loop with a run-time masked tail.  One
build is called at every size of the range's ends and odd sizes between, against torch.
"""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from ziggurat.backends.cpu.backend import CpuBackend
from ziggurat.backends.cpu.runtime import CpuExecutable
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.ir.context import make_context
from ziggurat.ir.errors import InputError

COLS = 19
LOW, HIGH = 1, 40
SIZES = (1, 2, 3, 7, 13, 16, 31, 39, 40)
WIDTH = {"avx512": 16, "avx2": 8, "scalar": 4}


def _program(isa: str) -> str:
    """``out = (x * 2 + 1)`` over a ``[?, 19]`` input through three kernels (a flat vector loop
    to ``19 * n``, a parallel loop over rows and columns, a serial loop over rows), plus the
    column sums of ``x`` (a vector loop carrying a sum across its run-time tail)."""
    w = WIDTH[isa]
    vec = f"vector<{w}xf32>"
    return f"""
builtin.module {{
  func.func @forward(%x: memref<?x{COLS}xf32>) -> (memref<?x{COLS}xf32>, memref<{COLS}xf32>, memref<1xf32>)
      attributes {{loop.isa = "{isa}", loop.threads = 2 : i64}} {{
    %n = loop.dim %x[0] in [{LOW}, {HIGH}] : memref<?x{COLS}xf32>
    %len = loop.offset {COLS} * %n
    %0 = loop.alloc(%n) : memref<?x{COLS}xf32>
    %1 = loop.alloc(%n) : memref<?x{COLS}xf32>
    %2 = loop.alloc(%n) : memref<?x{COLS}xf32>
    %sums = loop.alloc : memref<{COLS}xf32>
    %total = loop.alloc : memref<1xf32>
    loop.kernel @double_0 ins(%x : memref<?x{COLS}xf32>) outs(%0 : memref<?x{COLS}xf32>) sizes(%len) {{isa = "{isa}", vector_width = {w} : i64, vectorized = true}} {{
    ^bb0(%a: memref<?x{COLS}xf32>, %o: memref<?x{COLS}xf32>, %elems: index):
      %two = arith.constant 2.0 : f32
      %tv = vector.broadcast %two : f32 to {vec}
      loop.vfor %j, %lanes = 0 to %elems step {w} {{
        %v = loop.vload %a[%j] lanes(%lanes) : memref<?x{COLS}xf32> -> {vec}
        %d = arith.mulf %v, %tv : {vec}
        loop.vstore %d, %o[%j] lanes(%lanes) : {vec}, memref<?x{COLS}xf32>
      }}
    }}
    loop.kernel @copy_1 ins(%0 : memref<?x{COLS}xf32>) outs(%1 : memref<?x{COLS}xf32>) sizes(%n) {{isa = "{isa}", vector_width = 1 : i64, vectorized = false}} {{
    ^bb0(%a: memref<?x{COLS}xf32>, %o: memref<?x{COLS}xf32>, %rows: index):
      loop.parallel %i = 0 to %rows, %j = 0 to {COLS} {{
        %off = loop.offset {COLS} * %i + %j
        %v = loop.load %a[%off] : memref<?x{COLS}xf32> -> f32
        loop.store %v, %o[%off] : f32, memref<?x{COLS}xf32>
      }}
    }}
    loop.kernel @add_one_2 ins(%1 : memref<?x{COLS}xf32>) outs(%2 : memref<?x{COLS}xf32>) sizes(%n) {{isa = "{isa}", vector_width = 1 : i64, vectorized = false}} {{
    ^bb0(%a: memref<?x{COLS}xf32>, %o: memref<?x{COLS}xf32>, %rows: index):
      %one = arith.constant 1.0 : f32
      loop.for %i = 0 to %rows step 1 {{
        loop.for %j = 0 to {COLS} step 1 {{
          %off = loop.offset {COLS} * %i + %j
          %v = loop.load %a[%off] : memref<?x{COLS}xf32> -> f32
          %r = arith.addf %v, %one : f32
          loop.store %r, %o[%off] : f32, memref<?x{COLS}xf32>
        }}
      }}
    }}
    loop.kernel @column_sums_3 ins(%x : memref<?x{COLS}xf32>) outs(%sums, %total : memref<{COLS}xf32>, memref<1xf32>) sizes(%n, %len) {{isa = "{isa}", vector_width = {w} : i64, vectorized = true}} {{
    ^bb0(%a: memref<?x{COLS}xf32>, %o: memref<{COLS}xf32>, %t: memref<1xf32>, %rows: index, %elems: index):
      %zero = arith.constant 0.0 : f32
      %zv = vector.broadcast %zero : f32 to {vec}
      loop.for %j = 0 to {COLS} step 1 {{
        %s = loop.for %i = 0 to %rows step 1 iter_args(%acc = %zero) -> (f32) {{
          %off = loop.offset {COLS} * %i + %j
          %v = loop.load %a[%off] : memref<?x{COLS}xf32> -> f32
          %acc2 = arith.addf %acc, %v : f32
          loop.yield %acc2 : f32
        }}
        loop.store %s, %o[%j] : f32, memref<{COLS}xf32>
      }}
      %vs = loop.vfor %j, %lanes = 0 to %elems step {w} iter_args(%acc = %zv) -> ({vec}) {{
        %v = loop.vload %a[%j] lanes(%lanes) : memref<?x{COLS}xf32> -> {vec}
        %acc2 = arith.addf %acc, %v : {vec}
        loop.yield %acc2 : {vec}
      }}
      %r = loop.reduce "add" %vs : {vec} -> f32
      %c0 = arith.constant 0 : index
      loop.store %r, %t[%c0] : f32, memref<1xf32>
    }}
    func.return %2, %sums, %total : memref<?x{COLS}xf32>, memref<{COLS}xf32>, memref<1xf32>
  }}
}}
"""


def _build(isa: str) -> tuple[CpuExecutable, ModuleOp]:
    module = Parser(make_context(), _program(isa)).parse_module()
    module.verify()
    executable = CpuBackend().build(module, CompileOptions(), CompileReport(backend="cpu"))
    return executable, module


def test_one_build_serves_every_size_of_the_range(isa: str) -> None:
    executable, _ = _build(isa)
    for n in SIZES:
        x = torch.randn(n, COLS, generator=torch.Generator().manual_seed(n))
        out, sums, total = executable.run([x])
        assert out.shape == (n, COLS)
        torch.testing.assert_close(out, x * 2 + 1, rtol=0, atol=0)
        torch.testing.assert_close(sums, x.sum(0), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(total[0], x.sum(), rtol=1e-5, atol=1e-4)


def test_the_arena_holds_the_top_of_the_range() -> None:
    executable, module = _build("scalar")
    # three [?, 19] buffers, two live at once at most, and the two static ones
    row = COLS * 4
    assert executable.abi.plan.arena_bytes >= 2 * HIGH * row
    assert "loop.alloc(%n) offset" in str(module)


@pytest.mark.parametrize("n", [0, HIGH + 1, 1000])
def test_a_size_outside_the_range_is_an_input_error(n: int) -> None:
    executable, _ = _build("scalar")
    with pytest.raises(InputError, match=rf"input 0 \('\w+'\) has size {n} at dim 0, outside the range \[1, 40\]"):
        executable.run([torch.randn(n, COLS)])


def test_a_wrong_static_dim_is_still_an_input_error() -> None:
    executable, _ = _build("scalar")
    with pytest.raises(InputError):
        executable.run([torch.randn(4, COLS + 1)])
