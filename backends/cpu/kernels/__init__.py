"""Native CPU kernel library: prepacked-B GEMM microkernels and the weight
layouts they read.  Kernels are emitted into a caller's ``llvmlite.ir.Module``
(C ABI, static shapes) and can be compiled standalone for tests/benchmarks."""

from ziggurat.backends.cpu.kernels.gemm import emit_gemm, gemm_workspace_bytes
from ziggurat.backends.cpu.kernels.gemm_callable import GemmKernel, gemm_callable
from ziggurat.backends.cpu.kernels.gemm_plan import GemmPlan, make_plan
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpec, GemmSpecError
from ziggurat.backends.cpu.kernels.tiles import choose_nr
from ziggurat.dialects.fused.pack import (
    GemmPackedLayout,
    PackError,
    pack_conv_weight,
    pack_conv_weight_gemm,
    pack_gemm_b,
    pack_linear_weight,
    unpack_conv_weight,
    unpack_conv_weight_gemm,
    unpack_gemm_b,
    unpack_linear_weight,
)

__all__ = [
    "GemmKernel", "GemmPackedLayout", "GemmPlan", "GemmSpec", "GemmSpecError", "PackError",
    "choose_nr", "emit_gemm", "gemm_callable", "gemm_workspace_bytes", "make_plan",
    "pack_conv_weight", "pack_conv_weight_gemm", "pack_gemm_b", "pack_linear_weight",
    "unpack_conv_weight", "unpack_conv_weight_gemm", "unpack_gemm_b", "unpack_linear_weight",
]
