"""The ``loop`` dialect: Ziggurat's CPU level (see "The loop level" in README.md).

``@forward`` works on ``memref`` buffers, with static shapes or run-time dims (``?``, sized
by ``loop.dim``); every computation is a
``loop.kernel`` (loops, loads/stores with flat offsets, ``arith``/``math``/``vector``
ops on ``vector<16xf32>``/``vector<8xf32>`` or scalars) or a ``loop.gemm`` library call.
The code generator (``backends/cpu/codegen``) turns a module into one LLVM module with
one native entry per graph.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect

from ziggurat.dialects.loop.compute import REDUCE_KINDS, CastOp, CmpOp, LookupOp, ReduceOp, SelectOp, UnaryOp
from ziggurat.dialects.loop.graph import (
    AllocOp,
    ConstantOp,
    DimOp,
    GemmOp,
    KernelOp,
    ToBufferOp,
    ToTensorOp,
)
from ziggurat.dialects.loop.loops import ForOp, ParallelOp, VForOp, YieldOp
from ziggurat.dialects.loop.memory import (
    AssertOp,
    CheckIndexOp,
    LoadOp,
    OffsetOp,
    ScratchOp,
    StoreOp,
    VGatherOp,
    VIndexOp,
    VLoadOp,
    VStoreOp,
)

LOOP_OPS = (
    AllocOp, ConstantOp, DimOp, KernelOp, GemmOp, ToTensorOp, ToBufferOp,
    ParallelOp, ForOp, VForOp, YieldOp,
    OffsetOp, ScratchOp, LoadOp, StoreOp, VLoadOp, VStoreOp, VGatherOp, VIndexOp, CheckIndexOp, AssertOp,
    UnaryOp, LookupOp, ReduceOp, CmpOp, SelectOp, CastOp,
)

Loop = Dialect("loop", list(LOOP_OPS), [])


def loop_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions of ``module`` at the loop level (``convert-kernel-to-loop`` gave them a ``loop.isa``)."""
    return [fn for fn in module.ops if isinstance(fn, func.FuncOp) and "loop.isa" in fn.attributes]

__all__ = [
    "LOOP_OPS", "REDUCE_KINDS", "AllocOp", "AssertOp", "CastOp", "CmpOp", "SelectOp", "CheckIndexOp", "ConstantOp", "DimOp", "ForOp", "GemmOp", "KernelOp",
    "LoadOp", "LookupOp", "Loop", "loop_functions", "OffsetOp", "ParallelOp", "ReduceOp", "ScratchOp", "StoreOp", "ToBufferOp", "ToTensorOp",
    "UnaryOp", "VForOp", "VGatherOp", "VIndexOp", "VLoadOp", "VStoreOp", "YieldOp",
]
