"""``convert-kernel-to-loop``: the ``kernel`` level -> the ``loop`` level.

    ziggurat-opt model.mlir -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout,convert-kernel-to-loop{isa=avx2}'

The kernels' bodies are generated as loops with vector bodies by the CPU lowering
(``backends/cpu/lowering``: lazy element functions, then ``loopgen``), which follows the
kernel level's decisions: a kernel result is written to memory where ``realize`` gives a
reason for it, in the order ``layout`` gives (contiguous where it gives none), and every
value inside a kernel is computed where it is read.  (Kernels that
``kernel-fuse`` has not seen, with no ``realize``, are lowered as ``convert-torch-to-loop``
alone would: the loop generation decides on its lazy values.)  (A lowering
that needs an operand in memory, a GEMM's or torch's, still writes it there, in the layout it
needs.)  A kernel whose lowering declines the instance runs through torch, reported as
``convert-torch-to-loop`` reports it.  Options as ``convert-torch-to-loop``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from ziggurat.dialects.kernel import KernelOp
from ziggurat.ir.errors import ZigguratError


def flatten_kernels(fn: func.FuncOp) -> tuple[dict[SSAValue, str], dict[SSAValue, str]]:
    """Move every kernel's body into ``fn`` in its place; returns, per value the bodies
    compute, why it is realized ("" for values computed where they are read), and, per
    kernel result, the order it is stored in (``layout``; absent where none was decided)."""
    realize: dict[SSAValue, str] = {}
    layouts: dict[SSAValue, str] = {}
    block = fn.body.block
    for kernel in [op for op in block.ops if isinstance(op, KernelOp)]:
        mapping: dict[SSAValue, SSAValue] = dict(zip(kernel.block.args, kernel.inputs, strict=True))
        for inner in kernel.computed_ops():
            copy = inner.clone(value_mapper=mapping)
            block.insert_op_before(copy, kernel)
            for result in copy.results:
                realize[result] = ""
        for value, out, reason, layout in zip(kernel.yielded(), kernel.outputs, kernel.realize_reasons(),
                                              kernel.layouts(), strict=True):
            mapped = mapping.get(value, value)
            mapped.name_hint = out.name_hint or mapped.name_hint
            if mapped in realize:
                realize[mapped] = reason
                if layout:
                    layouts[mapped] = layout
            out.replace_all_uses_with(mapped)
        kernel.detach()
        kernel.erase()
    return realize, layouts


@dataclass(frozen=True)
class ConvertKernelToLoop(ModulePass):
    name = "convert-kernel-to-loop"

    isa: str = "auto"
    threads: int = 0
    prepack: bool = True
    fallback: bool = True
    #: schedule for a build that serves a range of sizes (a dynamic-shape compile's sampled
    #: lowerings): parallel loops whatever their size, with their elements per task
    range_schedule: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.backends.cpu.isa import pass_isa
        from ziggurat.backends.cpu.lowering.context import LoweringOptions
        from ziggurat.backends.cpu.lowering.driver import lower_function
        from ziggurat.backends.cpu.threads import default_threads

        isa = pass_isa(self.isa, self.name)
        if self.threads < 0:
            raise ZigguratError(f"threads must be >= 0 (0: all cores), got {self.threads}", op=self.name)
        options = LoweringOptions(isa, self.threads or default_threads(), self.prepack, self.fallback,
                                  self.range_schedule)
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if "loop.isa" in fn.attributes or fn.body.block.first_op is None:
                continue
            level = fn.attributes.get("kernel.level")
            decided = isinstance(level, StringAttr) and level.data == "fused"
            realize, layouts = flatten_kernels(fn)
            fn.attributes.pop("kernel.level", None)
            result = lower_function(fn, options, realize if decided else None, layouts)
            op.body.block.insert_op_before(result.function, fn)
            fn.detach()
            fn.erase(safe_erase=False)
