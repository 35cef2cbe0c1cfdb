"""An int8 GEMM compiled on its own and called on torch tensors (tests and benchmarks)."""

from __future__ import annotations

import ctypes
import threading
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
        self._fn = lib.ctypes_function(spec.entry_symbol, None, [ctypes.c_void_p] * 6 + [ctypes.c_int64] * spec.m_runtime)
        self._local = threading.local()

    def _workspace(self) -> torch.Tensor:
        """One workspace per thread, as the float32 kernel's (``gemm_callable``), kept between calls
        as the compiled module's arena is (a run-time-m kernel's is sized for its largest m); the
        cached kernel may be called from several threads at once."""
        ws = getattr(self._local, "ws", None)
        if ws is None:
            ws = torch.empty(self.spec.workspace_bytes, dtype=torch.uint8)
            self._local.ws = ws
        return ws

    def __call__(self, a: torch.Tensor, b_packed: torch.Tensor, bias: torch.Tensor | None = None,
                 other: torch.Tensor | None = None, m: int | None = None,
                 out: torch.Tensor | None = None) -> torch.Tensor:
        """``b_packed``: the whole ``KN32n4k`` operand (``pack_quantized_linear``); ``m``: the
        rows of this call (``m_runtime``: at most the spec's); ``out``: a contiguous buffer of
        at least ``m`` rows of ``ldc`` to write into (the rows past ``m`` are the kernel's not to
        touch)."""
        s = self.spec
        if (m is not None) != s.m_runtime:
            raise ValueError("pass m= exactly when the spec has m_runtime")
        rows = s.m if m is None else m
        if not 1 <= rows <= s.m or (s.a_conv is not None and rows % (s.a_conv[11] * s.a_conv[12])):
            raise ValueError(f"m={rows} is not a size this spec takes")
        lda = s.lda or s.k
        ldc = s.ldc or s.n
        a_dtype = torch.uint8 if s.a_u8 else torch.float32
        if s.a_conv is None:
            _expect(a, "a", a_dtype, (rows - 1) * lda + s.k)
        else:  # the NHWC (or NCHW) input
            h, w, c, *_, oh, ow = s.a_conv
            _expect(a, "a", a_dtype, rows // (oh * ow) * h * w * c)
        _expect(b_packed, "b_packed", torch.int8, packed_operand_bytes(s.k, s.n))
        if s.bias:
            if bias is None:
                raise ValueError("the spec has a bias; pass bias=")
            _expect(bias, "bias", torch.float32, s.n)
        if s.binary is not None:
            if other is None:
                raise ValueError("the spec has a binary op; pass other=")
            _expect(other, "other", torch.uint8 if s.other_quantization is not None else torch.float32, 1)
        out_dtype = torch.uint8 if s.store_u8 else torch.float32
        if out is None:
            out = torch.empty(rows, ldc, dtype=out_dtype)
        elif out.dim() != 2 or out.shape[0] < rows or out.shape[1] != ldc:
            raise ValueError(f"int8 gemm out: expected at least {rows} rows of {ldc}")
        _expect(out, "out", out_dtype, rows * ldc)
        self._fn(a.data_ptr(), b_packed.data_ptr(), out.data_ptr(), bias.data_ptr() if bias is not None else None,
                 other.data_ptr() if other is not None else None, self._workspace().data_ptr(),
                 *([rows] if m is not None else []))
        return out[:rows, : s.n]


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

