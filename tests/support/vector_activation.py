"""A vecmath activation compiled on its own and applied to a float32 tensor: what a GEMM's
fused (staged) epilogue must match bit for bit, the activation being a function of each value."""

from __future__ import annotations

import ctypes
from functools import lru_cache

import torch
from llvmlite import ir

from ziggurat.backends.cpu import vecmath
from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import JitLibrary, compile_ir

_LANES = 16


@lru_cache(maxsize=None)
def _activation_library(kind: str) -> JitLibrary:
    """``void act(float *x, int64 vectors)``: ``kind`` in place, 16 lanes at a time."""
    f32, i64 = ir.FloatType(), ir.IntType(64)
    vec = ir.VectorType(f32, _LANES)
    module = ir.Module(name=f"act_{kind}")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [f32.as_pointer(), i64]), "act")
    entry, body, done = fn.append_basic_block("entry"), fn.append_basic_block("body"), fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.branch(body)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    at = b.bitcast(b.gep(fn.args[0], [b.mul(i, ir.Constant(i64, _LANES))]), vec.as_pointer())
    b.store(vecmath.apply_unary(b, kind, b.load(at, align=4), {}), at, align=4)
    nxt = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[1]), body, done)
    b.position_at_end(done)
    b.ret_void()
    return compile_ir(str(module), Isa.AVX512, cache=None)


def activated(kind: str, x: torch.Tensor) -> torch.Tensor:
    """``kind`` applied to a float32 tensor by the AVX-512 vecmath kernel."""
    flat = x.contiguous().view(-1)
    padded = torch.zeros(-(-flat.numel() // _LANES) * _LANES)
    padded[: flat.numel()] = flat
    fn = _activation_library(kind).ctypes_function("act", None, [ctypes.c_void_p, ctypes.c_int64])
    fn(padded.data_ptr(), padded.numel() // _LANES)
    return padded[: flat.numel()].view(x.shape)
