"""The arena plan: buffers alive at the same op never overlap, and dead ones are reused."""

from __future__ import annotations

import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.models import ConvBNNet, randomize_bn
from ziggurat.backends.cpu.backend import forward_of
from ziggurat.backends.cpu.memory_plan import buffer_bytes, plan_memory, reads_writes


def test_live_buffers_never_overlap() -> None:
    torch.manual_seed(0)
    compiled = compile_cpu(randomize_bn(ConvBNNet(channels=16)), (torch.randn(2, 3, 20, 20),))
    fn = forward_of(compiled.module_ir)
    plan = plan_memory(fn)
    ops = list(fn.body.block.ops)
    live: dict[object, tuple[int, int]] = {}
    first: dict[object, int] = {}
    last: dict[object, int] = {}
    for i, op in enumerate(ops):
        reads, writes = reads_writes(op)
        for v in writes:
            if v in plan.offsets:
                first.setdefault(v, i)
                last[v] = max(last.get(v, i), i)
        for v in reads:
            if v in plan.offsets:
                last[v] = max(last.get(v, i), i)
    for v, off in plan.offsets.items():
        live[v] = (off, off + buffer_bytes(v))
        assert off % 64 == 0
        assert off + buffer_bytes(v) <= plan.arena_bytes
    values = list(plan.offsets)
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            if first[a] <= last[b] and first[b] <= last[a]:
                (a0, a1), (b0, b1) = live[a], live[b]
                assert a1 <= b0 or b1 <= a0, "two live buffers share arena bytes"
    assert plan.arena_bytes < plan.unplanned_bytes
    assert compiled.report.stats["arena bytes (peak)"] == plan.arena_bytes
