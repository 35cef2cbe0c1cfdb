"""A bf16 GEMM compiled on its own and called on torch tensors (tests and benchmarks)."""

from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Any

import torch
from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import JitLibrary, compile_ir
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_bf16 import emit_bf16_gemm, entry_symbol
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.gemm_callable import generator_digest
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.backends.cpu.kernels.pack_bf16 import packed_elements, padded_k


class Bf16GemmKernel:
    def __init__(self, spec: Bf16GemmSpec, lib: JitLibrary) -> None:
        self.spec = spec
        self.lib = lib
        self._fn = lib.ctypes_function(entry_symbol(spec), None, [ctypes.c_void_p] * 6)

    def __call__(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None,
                 other: torch.Tensor | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
        """``b``: the packed panels, or with ``b_packed=False`` the run-time matrix (its storage
        read through the spec's ``ldb`` and batch stride).  Batch strides are the spec's."""
        s = self.spec
        last = (s.batch - 1)
        a_row = padded_k(s.k) if s.a_padded else s.k
        _expect(a, "a", torch.bfloat16, last * s.batch_stride_a + (s.m - 1) * self.lda + a_row)
        if s.b_packed:
            _expect(b, "b", torch.bfloat16, last * s.batch_stride_b + packed_elements(s.k, s.n))
        elif s.b_conv is not None:  # the padded image: channels x phases x plane
            plane, _, kh, kw, _, _, sh, sw = s.b_conv
            _expect(b, "b", torch.bfloat16, last * s.batch_stride_b + s.k // (kh * kw) * sh * sw * plane)
        else:
            rows, cols = (s.n, s.k) if s.b_transposed else (s.k, s.n)
            _expect(b, "b", torch.bfloat16, last * s.batch_stride_b + (rows - 1) * (s.ldb or cols) + cols)
        if s.bias:
            if bias is None:
                raise ValueError("the spec has a bias; pass bias=")
            _expect(bias, "bias", torch.float32, s.m if s.bias_rows else s.n)
        if s.binary is not None:
            if other is None:
                raise ValueError("the spec has a binary op; pass other=")
            _expect(other, "other", torch.bfloat16 if s.other_bf16 else torch.float32, 1)
        dtype = torch.bfloat16 if s.out_bf16 else torch.float32
        if out is None and s.batch == 1:
            out = torch.empty(s.m, self.ldc, dtype=dtype)[:, : s.n]
        elif out is None:
            out = torch.empty(last * s.batch_stride_c + (s.m - 1) * self.ldc + s.n, dtype=dtype)
        self._fn(a.data_ptr(), b.data_ptr(), out.data_ptr(),
                 bias.data_ptr() if bias is not None else None, other.data_ptr() if other is not None else None, None)
        return out

    @property
    def lda(self) -> int:
        return self.spec.lda if self.spec.lda is not None else self.spec.k

    @property
    def ldc(self) -> int:
        return self.spec.ldc if self.spec.ldc is not None else self.spec.n

    def matrix(self, out: torch.Tensor, batch: int = 0) -> torch.Tensor:
        """``out``'s product ``batch`` as an ``[m, n]`` view."""
        s = self.spec
        return torch.as_strided(out, (s.m, s.n), (self.ldc, 1), out.storage_offset() + batch * s.batch_stride_c)


def _expect(t: Any, what: str, dtype: torch.dtype, min_numel: int) -> None:
    if not isinstance(t, torch.Tensor) or t.dtype != dtype or t.device.type != "cpu":
        raise ValueError(f"bf16 gemm operand {what}: expected a cpu {dtype} tensor")
    if t.untyped_storage().nbytes() - t.storage_offset() * t.element_size() < min_numel * t.element_size():
        raise ValueError(f"bf16 gemm operand {what}: fewer than {min_numel} elements")


@lru_cache(maxsize=64)
def bf16_gemm_callable(spec: Bf16GemmSpec) -> Bf16GemmKernel:
    if spec.kernel == "amx":
        granted, why = amx.request_tile_permission()
        if not granted:
            raise GemmSpecError(f"an AMX bf16 GEMM cannot run in this process: {why}")

    def build() -> str:
        module = ir.Module(name=spec.symbol)
        emit_bf16_gemm(module, spec)
        return str(module)

    key = f"bf16-gemm/{spec!r}/generator={generator_digest()}"
    if spec.unary_table:  # the table holds torch's answers
        key += f"/torch={torch.__version__}"
    return Bf16GemmKernel(spec, compile_ir(build, Isa.AVX512, key_source=key))
