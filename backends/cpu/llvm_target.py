"""``ziggurat-opt -t llvm-ir`` (and ``--emit=llvm``): a loop-level module as LLVM IR text.

    ziggurat-opt model.mlir -p 'convert-torch-to-loop{isa=avx2}' -t llvm-ir

Plans the arena (as the ``cpu`` backend does) and prints the LLVM module of
``@forward``: the kernels, the GEMM library code and the ``zig_forward_<k>`` entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.utils.target import Target

from ziggurat.ir.errors import ZigguratError


@dataclass(frozen=True)
class LlvmIrTarget(Target):
    name: ClassVar[str] = "llvm-ir"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from ziggurat.backends.cpu.backend import forward_of
        from ziggurat.backends.cpu.codegen.module import generate
        from ziggurat.backends.cpu.isa import parse_isa
        from ziggurat.backends.cpu.memory_plan import annotate, plan_memory

        fn = forward_of(module)
        isa_attr = fn.attributes.get("loop.isa")
        threads_attr = fn.attributes.get("loop.threads")
        if not isinstance(isa_attr, StringAttr) or not isinstance(threads_attr, IntegerAttr):
            raise ZigguratError("llvm-ir needs the loop level: run convert-torch-to-loop first (or --emit=llvm)",
                                op="llvm-ir")
        plan = plan_memory(fn)
        annotate(fn, plan)
        llvm_module, _ = generate(fn, plan, parse_isa(isa_attr.data, host=False), int(threads_attr.value.data))
        output.write(str(llvm_module))
