"""Static memory plan of the loop-level ``@forward``: every intermediate buffer gets an
offset in one arena, reused once the buffer is dead.

Liveness is by op position: a buffer lives from the first op that writes it (kernel,
GEMM, torch fallback result) to the last op that reads it (a torch op reads the buffers
behind its ``loop.to_tensor`` operands, and so does the ``loop.to_buffer`` copying its
result out, which may be a view of them).  Buffers are placed greedily, best fit, in
order of definition, 64-byte aligned; two buffers live at the same op never overlap
(so a kernel never writes over its own inputs).  A buffer with run-time dims gets the
room it needs at the top of their ranges.  Graph inputs, outputs and weights are not in
the arena.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.ir import Operation, SSAValue

from ziggurat.backends.cpu.codegen.types import element_bytes
from ziggurat.dialects import loop
from ziggurat.dialects.loop.sizes import largest_shape

ALIGN = 64


@dataclass
class MemoryPlan:
    offsets: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    arena_bytes: int = 0
    #: total bytes of all intermediate buffers without reuse (for the report)
    unplanned_bytes: int = 0


def buffer_bytes(value: SSAValue) -> int:
    """Bytes of a buffer; one with run-time dims at the top of their ranges."""
    ty = value.type
    assert isinstance(ty, MemRefType)
    n = 1
    for d in largest_shape(value):
        n *= d
    return n * element_bytes(ty.element_type)  # pyright: ignore[reportUnknownArgumentType]


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def reads_writes(op: Operation) -> tuple[list[SSAValue], list[SSAValue]]:
    """Buffers an op of ``@forward`` reads and writes."""
    if isinstance(op, loop.KernelOp):
        return list(op.ins), list(op.outs)
    if isinstance(op, loop.GemmOp):
        reads = [op.a, op.b] + ([op.bias] if op.bias else []) + ([op.other] if op.other else [])
        return reads, [op.c]
    if isinstance(op, loop.ToBufferOp):
        # the torch op's result may be a view of its operands' buffers (a slice, an alias):
        # they stay live until it is copied out, so the copy never lands on its own source
        source = op.tensor.owner
        return (_torch_reads(source) if isinstance(source, Operation) else []), [op.result]
    return _torch_reads(op), []


def _torch_reads(op: Operation) -> list[SSAValue]:
    """The buffers behind the operands of a torch op (its ``loop.to_tensor`` operands)."""
    reads: list[SSAValue] = []
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, loop.ToTensorOp):
            reads.append(owner.buffer)
        elif isinstance(v.type, MemRefType):
            reads.append(v)
    return reads


def plan_memory(fn: func.FuncOp) -> MemoryPlan:
    ops = list(fn.body.block.ops)
    returned: set[SSAValue] = set()
    last = ops[-1] if ops else None
    if isinstance(last, func.ReturnOp):
        returned = set(last.arguments)
    start: dict[SSAValue, int] = {}
    end: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        reads, writes = reads_writes(op)
        for v in writes:
            if isinstance(v.owner, loop.AllocOp | loop.ToBufferOp) and v not in returned:
                start.setdefault(v, i)
                end[v] = max(end.get(v, i), i)
        for v in reads:
            if v in start:
                end[v] = max(end[v], i)
    plan = MemoryPlan()
    free: list[tuple[int, int]] = []  # (offset, size)
    active: list[SSAValue] = []
    top = 0
    order = sorted(start, key=lambda v: start[v])
    k = 0
    for i in range(len(ops)):
        for v in [a for a in active if end[a] < i]:
            active.remove(v)
            free.append((plan.offsets[v], _align(buffer_bytes(v))))
            free = _merge(free)
        while k < len(order) and start[order[k]] == i:
            v = order[k]
            k += 1
            size = _align(buffer_bytes(v))
            plan.unplanned_bytes += size
            best = None
            for j, (off, sz) in enumerate(free):
                if sz >= size and (best is None or sz < free[best][1]):
                    best = j
            tail = next((j for j, (off, sz) in enumerate(free) if off + sz == top), None)
            if best is not None:
                off, sz = free.pop(best)
                plan.offsets[v] = off
                if sz > size:
                    free = _merge(free + [(off + size, sz - size)])
            elif tail is not None:
                off, _ = free.pop(tail)
                plan.offsets[v] = off
                top = off + size
            else:
                plan.offsets[v] = top
                top += size
            active.append(v)
    plan.arena_bytes = top
    return plan


def _merge(blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    blocks.sort()
    out: list[tuple[int, int]] = []
    for off, sz in blocks:
        if out and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + sz)
        else:
            out.append((off, sz))
    return out


def annotate(fn: func.FuncOp, plan: MemoryPlan) -> None:
    """Write the plan into the IR: ``loop.alloc offset N`` and ``loop.arena_bytes``."""
    for v, off in plan.offsets.items():
        owner = v.owner
        if isinstance(owner, loop.AllocOp | loop.ToBufferOp):
            owner.offset = IntegerAttr(off, i64)
    fn.attributes["loop.arena_bytes"] = IntegerAttr(plan.arena_bytes, i64)
