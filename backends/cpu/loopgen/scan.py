"""A ``ScanNode`` (cumsum, cumprod, cummax, logcumsumexp) as one ``loop.kernel``.

The scanned dimension is a serial ``loop.for`` carrying the running value; when it is
not the last dimension, the kernel is vectorized over the last one (one running value
per lane).  A scan along the last dimension is scalar.
"""

from __future__ import annotations

import contextlib

import torch
from xdsl.dialects import arith
from xdsl.ir import Block, Region, SSAValue

from ziggurat.backends.cpu.loopgen.emitter import KernelEmitter, make_cmp, make_select
from ziggurat.backends.cpu.loopgen.kernel import KernelBuffers, KernelOptions
from ziggurat.backends.cpu.loopgen.loops import close, open_for, open_parallel, open_vfor
from ziggurat.backends.cpu.loopgen.reductions import combine
from ziggurat.backends.cpu.loopgen.scope import Scope
from ziggurat.backends.cpu.loopgen.types import memref, value_type
from ziggurat.backends.cpu.loopgen.vectorize import vector_blockers
from ziggurat.backends.cpu.lowering.index import IndexExpr, Var, flat_index
from ziggurat.backends.cpu.lowering.nodes import ScanNode
from ziggurat.backends.cpu.lowering.ops import identity
from ziggurat.backends.cpu.lowering.tensors import begin_trace
from ziggurat.backends.cpu.lowering.values import Buffer, Cast
from ziggurat.backends.cpu.threads import PARALLEL_MIN_ELEMENTS
from ziggurat.dialects import loop


def _logaddexp(scope: Scope, em: KernelEmitter, acc: SSAValue, x: SSAValue) -> SSAValue:
    """Eager's step (``_log_add_exp_helper``): ``log1p(exp(min - max)) + max`` with NaN
    propagating through min and max, except where ``x`` and the running value are the same
    infinity (``inf - inf`` would be NaN): that infinity."""
    def put(op):  # type: ignore[no-untyped-def]
        scope.insert(op)
        return op.results[0]

    mx = put(arith.MaximumfOp(acc, x))
    mn = put(arith.MinimumfOp(acc, x))
    d = put(arith.SubfOp(mn, mx))
    e = put(loop.UnaryOp("exp", d))
    lp = put(loop.UnaryOp("log1p", e))
    s = put(arith.AddfOp(lp, mx))
    inf = em.const(scope, float("inf"), acc.type)
    same = put(make_cmp("oeq", acc, x))
    infinite = put(make_cmp("oeq", put(loop.UnaryOp("abs", x)), inf))
    return put(make_select(put(arith.AndIOp(same, infinite)), x, s))


def emit_scan(node: ScanNode, options: KernelOptions, out_ssa: SSAValue,
              operand_of: dict[Buffer, SSAValue]) -> loop.KernelOp | None:
    shape = node.out.shape
    if any(n == 0 for n in shape):
        return None
    begin_trace()
    vars_ = [Var(f"i{d}", n) for d, n in enumerate(shape)]
    dim_var = vars_[node.dim]
    root = node.src.load([IndexExpr.of(v) for v in vars_])
    out_dt = node.out.dtype
    # torch accumulates float32 scans in float64 (its CPU accumulate type)
    acc_dt = torch.float64 if out_dt == torch.float32 and node.kind in ("sum", "prod", "logaddexp") else out_dt
    if root.dtype != acc_dt:
        root = Cast(root, acc_dt)
    others = [v for v in vars_ if v is not dim_var]
    vectorize = (options.width > 1 and node.dim != len(shape) - 1 and not vector_blockers(root)
                 and node.kind != "logaddexp")
    vec_var = others[-1] if vectorize and others else None
    serial = [v for v in others if v is not vec_var]

    block = Block(arg_types=[memref(shape, node.out.dtype)])
    buffers = KernelBuffers(block, node.out)
    em = KernelEmitter(buffers, options.width, masked_vectors=options.range_schedule)  # type: ignore[arg-type]
    total = 1
    for n in shape:
        total *= n
    with contextlib.ExitStack() as stack:
        scope = Scope(block)
        if serial and options.threads > 1 and total >= PARALLEL_MIN_ELEMENTS:
            op, child = open_parallel(scope, serial)
            stack.enter_context(scope.child_anchor(op))
            scope = child
        else:
            for v in serial:
                op, child = open_for(scope, v)
                stack.enter_context(scope.child_anchor(op))
                scope = child
        if vec_var is not None:
            op, child = open_vfor(scope, vec_var, options.width, masked=em.masked_vectors)
            stack.enter_context(scope.child_anchor(op))
            scope = child
        width = options.width if vec_var is not None else None
        init = em.const(scope, identity(node.kind if node.kind != "logaddexp" else "max", acc_dt),
                        value_type(acc_dt, width))
        for_op, body = open_for(scope, dim_var, [init])
        stack.enter_context(scope.child_anchor(for_op))
        acc = body.block.args[-1]
        x = em.emit(root, body, want_vector=width is not None)
        if node.kind == "logaddexp":
            new = _logaddexp(body, em, acc, x)
        else:
            new = combine(em, body, node.kind, acc_dt, acc, x)
        offset = em.index(flat_index([IndexExpr.of(v) for v in vars_], shape), body)
        out = block.args[-1]
        stored = em.cast_ssa(new, acc_dt, out_dt, body, width is not None)
        if width is not None:
            lanes = body.vector.lanes if body.vector is not None else None
            body.insert(loop.VStoreOp(stored, out, offset, lanes))
        else:
            body.insert(loop.StoreOp(stored, out, offset))
        close(body, [new])
    ins = [operand_of[b] for b in buffers.ins]
    return loop.KernelOp(node.name, ins, [out_ssa], isa=options.isa, vector_width=options.width if vectorize else 1,
                         vectorized=vec_var is not None, origins=",".join(node.origins), body=Region(block))


__all__ = ["emit_scan", "torch"]
