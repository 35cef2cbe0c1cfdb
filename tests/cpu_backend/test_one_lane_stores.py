"""A masked store of one lane writes that lane only (``llvm_ir.masked_store``).

LLVM 22 turns ``llvm.masked.store`` of a truncated vector under a constant one-lane mask into a
store of the element before its truncation: 4 bytes for a bf16 lane (the rounding's
``trunc <16 x i32> to <16 x i16>``) or an int8 one.  A row whose last vector holds one lane then
wrote over the next row's first value, where that was written first: a ``cat`` along the last
dim of bf16 casts (each piece its own loop nest), and the bf16 split of a float16 GEMM's A
(fuzz seed 204, program 32).  Each test here failed before the fix.
"""

from __future__ import annotations

import ctypes

import pytest
import torch
from llvmlite import ir

import ziggurat
from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.isa import Isa, host_supports
from ziggurat.backends.cpu.jit import compile_ir

pytestmark = pytest.mark.skipif(not host_supports(Isa.AVX512), reason="the cases are AVX-512 code")


@pytest.mark.parametrize("narrow", [16, 8])
@pytest.mark.parametrize("lane", [0, 5, 15])
def test_one_lane_of_a_truncated_vector(narrow: int, lane: int) -> None:
    """``store(src, dst)``: 16 int32 read, truncated, lane ``lane`` stored; the rest of ``dst``
    keeps its sentinel bytes."""
    module = ir.Module("one_lane")
    i32v, narrow_v = ir.VectorType(ir.IntType(32), 16), ir.VectorType(ir.IntType(narrow), 16)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i32v.as_pointer(), narrow_v.as_pointer()]), "store")
    b = ir.IRBuilder(fn.append_basic_block())
    value = b.trunc(b.load(fn.args[0], align=4), narrow_v)
    mask = ir.Constant(ir.VectorType(ir.IntType(1), 16), [int(i == lane) for i in range(16)])
    llvm_ir.masked_store(b, value, fn.args[1], mask, narrow // 8)
    b.ret_void()
    store = compile_ir(str(module), Isa.AVX512, cache=None).ctypes_function("store", None, [ctypes.c_void_p] * 2)
    src = torch.arange(0x1234, 0x1234 + 16, dtype=torch.int32)
    dtype = torch.int16 if narrow == 16 else torch.int8
    dst = torch.full((20,), 0x55, dtype=dtype)
    store(src.data_ptr(), dst.data_ptr())
    expected = torch.full((20,), 0x55, dtype=dtype)
    expected[lane] = src[lane].to(dtype)
    assert torch.equal(dst, expected), f"stored {dst.tolist()}"


class CatOfCasts(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.to(torch.bfloat16), (x * 3).to(torch.bfloat16)], -1)


class CatOfCleanedCasts(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([torch.nan_to_num(x * 2, nan=0.0).bfloat16(), torch.nan_to_num(x * 3, nan=0.0).bfloat16()], -1)


@pytest.mark.parametrize("width", [1, 17, 33])
@pytest.mark.parametrize("model", [CatOfCasts, CatOfCleanedCasts], ids=lambda m: m.__name__)
def test_rows_of_one_lane_tails(model: type[torch.nn.Module], width: int) -> None:
    x = torch.randint(-50, 50, (7, width), dtype=torch.int32)
    if model is CatOfCleanedCasts:
        x = x.float() * 1.37
    compiled = ziggurat.compile(model(), [x], backend="cpu", isa="avx512")
    assert not compiled.report.fallback_ops
    expected = model()(x)
    assert torch.equal(compiled(x).view(torch.int16), expected.view(torch.int16))
