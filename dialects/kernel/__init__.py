"""The ``kernel`` dialect: the CPU backend's kernels, on tensors, before loops exist.

Between ``fused`` (graph ops) and ``loop`` (loops over buffers with vector bodies), this is
the level where the CPU backend decides what becomes one kernel and what is written to
memory.  ``convert-fused-to-kernel`` wraps every torch/fused op in the kernel op of its kind,
``kernel-fuse`` merges producers into their readers and records why each kept result is
realized, ``kernel-layout`` records the order results are stored in, and
``convert-kernel-to-loop`` generates the loops.  ``ziggurat-opt --emit=kernel`` prints it::

    %1 = kernel.pointwise ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) {group = "k0",
           indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                            affine_map<(d0, d1) -> (d0, d1)>], realize = ["graph output"]} -> tensor<4x8xf32> {
    ^bb0(%x1 : tensor<4x8xf32>, %b1 : tensor<8xf32>):
      %s = torch.aten.add.Tensor %x1, %b1 {alpha = 1 : i64} : (...) -> tensor<4x8xf32>
      %r = torch.aten.relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
      kernel.yield %r : tensor<4x8xf32>
    }
"""

from __future__ import annotations

from xdsl.ir import Dialect

from ziggurat.dialects.kernel.ops import (
    KERNEL_OPS,
    CompositeOp,
    ConvOp,
    FallbackOp,
    GatherOp,
    GemmOp,
    KernelOp,
    PointwiseOp,
    ReductionOp,
    ScanOp,
    YieldOp,
)
from ziggurat.dialects.kernel.specs import ConvSpecAttr, GemmSpecAttr

Kernel = Dialect("kernel", [*KERNEL_OPS, YieldOp], [GemmSpecAttr, ConvSpecAttr])

__all__ = [
    "KERNEL_OPS",
    "CompositeOp",
    "ConvOp",
    "ConvSpecAttr",
    "FallbackOp",
    "GatherOp",
    "GemmOp",
    "GemmSpecAttr",
    "Kernel",
    "KernelOp",
    "PointwiseOp",
    "ReductionOp",
    "ScanOp",
    "YieldOp",
]
