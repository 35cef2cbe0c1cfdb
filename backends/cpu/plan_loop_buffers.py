"""``plan-loop-buffers``: place every intermediate buffer of a loop-level ``@forward`` in one arena.

    ziggurat-opt model.mlir -p 'convert-torch-to-loop,plan-loop-buffers'

Writes ``loop.alloc offset N`` (and ``loop.to_buffer ... offset N``) and the peak arena
size ``loop.arena_bytes`` on the function: buffers are reused once dead (liveness by op
position, best fit, 64-byte aligned; see ``backends/cpu/memory_plan.py``).  The cpu
backend runs the same planning when it builds a module.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat.dialects.loop import loop_functions


@dataclass(frozen=True)
class PlanLoopBuffers(ModulePass):
    name = "plan-loop-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.backends.cpu.memory_plan import annotate, plan_memory

        for fn in loop_functions(op):
            annotate(fn, plan_memory(fn))
