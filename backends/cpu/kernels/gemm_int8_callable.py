"""An int8 GEMM compiled on its own and called on torch tensors (tests and benchmarks)."""

from __future__ import annotations

import ctypes
from functools import lru_cache

import torch
from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import JitLibrary, compile_ir
from ziggurat.backends.cpu.kernels.gemm_callable import generator_digest
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec, emit_int8_gemm
from ziggurat.dialects.fused.pack_int8 import packed_operand_bytes


class Int8GemmKernel:
    def __init__(self, spec: Int8GemmSpec, lib: JitLibrary) -> None:
        self.spec = spec
        self.lib = lib
        self._fn = lib.ctypes_function(spec.symbol, None, [ctypes.c_void_p] * 6)

    def __call__(self, a: torch.Tensor, b_packed: torch.Tensor, bias: torch.Tensor | None = None,
                 other: torch.Tensor | None = None) -> torch.Tensor:
        """``b_packed``: the whole ``KN32n4k`` operand (``pack_quantized_linear``)."""
        s = self.spec
        lda = s.lda or s.k
        ldc = s.ldc or s.n
        a_dtype = torch.uint8 if s.a_u8 else torch.float32
        if s.a_conv is None:
            _expect(a, "a", a_dtype, (s.m - 1) * lda + s.k)
        else:  # the NHWC (or NCHW) input
            h, w, c, *_, oh, ow = s.a_conv
            _expect(a, "a", a_dtype, s.m // (oh * ow) * h * w * c)
        _expect(b_packed, "b_packed", torch.int8, packed_operand_bytes(s.k, s.n))
        if s.bias:
            if bias is None:
                raise ValueError("the spec has a bias; pass bias=")
            _expect(bias, "bias", torch.float32, s.n)
        if s.binary is not None:
            if other is None:
                raise ValueError("the spec has a binary op; pass other=")
            _expect(other, "other", torch.uint8 if s.other_quantization is not None else torch.float32, 1)
        out = torch.empty(s.m, ldc, dtype=torch.uint8 if s.store_u8 else torch.float32)[:, : s.n]
        workspace = torch.empty(s.workspace_bytes, dtype=torch.uint8)
        self._fn(a.data_ptr(), b_packed.data_ptr(), out.data_ptr(), bias.data_ptr() if bias is not None else None,
                 other.data_ptr() if other is not None else None, workspace.data_ptr())
        return out


def _expect(t: object, what: str, dtype: torch.dtype, min_numel: int) -> None:
    if not isinstance(t, torch.Tensor) or t.dtype != dtype or t.device.type != "cpu" or not t.is_contiguous():
        raise ValueError(f"int8 gemm operand {what}: expected a contiguous cpu {dtype} tensor")
    if t.numel() < min_numel:
        raise ValueError(f"int8 gemm operand {what}: fewer than {min_numel} elements")


@lru_cache(maxsize=64)
def int8_gemm_callable(spec: Int8GemmSpec) -> Int8GemmKernel:
    def build() -> str:
        module = ir.Module(name=spec.symbol)
        emit_int8_gemm(module, spec)
        return str(module)

    key = f"int8-gemm/{spec!r}/generator={generator_digest()}"
    return Int8GemmKernel(spec, compile_ir(build, Isa.AVX512, key_source=key))

