"""``convert-torch-to-loop``: the torch/fused level of ``@forward`` -> the ``loop`` level, through
the ``kernel`` level: ``convert-fused-to-kernel``, ``kernel-fuse``, ``kernel-layout``,
``convert-kernel-to-loop``.

    ziggurat-opt model.mlir -p 'convert-torch-to-loop{isa=avx2 threads=2}'

Every op with a native lowering (``backends/cpu/lowering``) becomes kernels over
buffers: element-wise chains and the reductions they feed are fused into one
``loop.kernel``, views become index arithmetic, GEMM-shaped ops ``loop.gemm`` calls.
Ops without one stay as torch ops between ``loop.to_tensor``/``loop.to_buffer``
(run through torch at run time, with a logged warning), or with ``fallback=false`` the
pass raises one ``UnsupportedOpsError`` listing all of them with schema and location.

Options: ``isa`` = auto | avx512 | avx2 | scalar (vector width 16 / 8 / 1 f32 lanes),
``threads`` (0 = every available core), ``prepack`` (pack constant GEMM/conv weights
into the kernels' blocked layout at compile time), ``fallback``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.cpu.convert_kernel_to_loop import ConvertKernelToLoop


@dataclass(frozen=True)
class ConvertTorchToLoop(ConvertKernelToLoop):
    """The four passes in one, with ``convert-kernel-to-loop``'s options."""

    name = "convert-torch-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.backends.cpu.convert_fused_to_kernel import ConvertFusedToKernel
        from ziggurat.backends.cpu.kernel_fuse import KernelFuse
        from ziggurat.backends.cpu.kernel_layout import KernelLayout

        ConvertFusedToKernel().apply(ctx, op)
        KernelFuse().apply(ctx, op)
        KernelLayout().apply(ctx, op)
        super().apply(ctx, op)
