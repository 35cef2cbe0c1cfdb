"""Emitting a reduction where a kernel reads it.

* In a scalar scope (no vector loop bound), the reduction loops over its variables with
  the last one as a ``loop.vfor`` carrying a vector accumulator, then a horizontal
  ``loop.reduce`` (a row max/sum of softmax, a layer-norm mean);
* inside a vector loop (the reduction's output index moves with the lanes: pooling
  windows, reductions over a non-contiguous dim), it loops serially over its
  variables with one accumulator lane per output element;
* ``argmax``/``argmin``, and kernels that are not vectorized, use scalar loops.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import VectorType, i64
from xdsl.ir import Operation, SSAValue

from ziggurat.backends.cpu.loopgen.emitter import KernelEmitter, make_cmp, make_select
from ziggurat.backends.cpu.loopgen.loops import close, open_for, open_vfor
from ziggurat.backends.cpu.loopgen.scope import Scope
from ziggurat.backends.cpu.loopgen.types import value_type
from ziggurat.backends.cpu.lowering.index import IndexExpr, Var, flat_index, loop_vars
from ziggurat.backends.cpu.lowering.ops import identity
from ziggurat.backends.cpu.lowering.values import ReduceRef, Value, guarded_loads
from ziggurat.dialects import loop

_HORIZONTAL = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "any": "or", "all": "and",
               "shift_max": "max_nonan"}


def trace_body(ref: ReduceRef) -> tuple[list[Var], Value, list[IndexExpr]]:
    red = ref.reduction
    from ziggurat.backends.cpu.loopgen.merge import merge_loops

    vars_, index = loop_vars(red.red_shape, "r")

    def trace(idx: Sequence[IndexExpr]) -> Value:
        with guarded_loads() if ref.guarded else contextlib.nullcontext():
            return red.body(ref.out, idx)

    vars_, index, body = merge_loops(vars_, index, trace)
    return vars_, body, index


def combine(em: KernelEmitter, scope: Scope, kind: str, dtype: torch.dtype, acc: SSAValue, val: SSAValue) -> SSAValue:
    if dtype.is_floating_point and kind in ("shift_max", "max", "min"):
        # Eager's step (max pooling's ``val > maxval || isnan(val)``): a tie keeps the running
        # value, NaN sticks.  The NaN test is on ``val`` only, so the running value's chain is
        # three instructions per step (a compare, a mask or, a masked move on AVX-512), not
        # llvm.maximum's six (a 3x3 max pool of 64x112x112 bf16: 0.66 -> 0.30 ms).
        better = make_cmp("olt" if kind == "min" else "ogt", val, acc)
        scope.insert(better)
        pick = make_select(better.results[0], val, acc)
        scope.insert(pick)
        if kind == "shift_max":
            # acc never holds NaN (it starts at -inf and takes only values ordered greater): one
            # vmaxps, and the lanes stay NaN-free for loop.reduce "max_nonan"
            return pick.results[0]
        nan = make_cmp("uno", val, val)
        scope.insert(nan)
        keep_nan = make_select(nan.results[0], val, pick.results[0])
        scope.insert(keep_nan)
        return keep_nan.results[0]
    if dtype.is_floating_point:
        ops = {"sum": arith.AddfOp, "prod": arith.MulfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp}
    elif dtype == torch.bool:
        ops = {"sum": arith.OrIOp, "any": arith.OrIOp, "max": arith.OrIOp, "prod": arith.AndIOp,
               "all": arith.AndIOp, "min": arith.AndIOp}
    else:
        ops = {"sum": arith.AddiOp, "prod": arith.MuliOp, "max": arith.MaxSIOp, "min": arith.MinSIOp}
    op: Operation = ops[kind](acc, val)
    scope.insert(op)
    return op.results[0]


def emit_reduction(em: KernelEmitter, ref: ReduceRef, scope: Scope, vectorize: bool) -> SSAValue:
    red = ref.reduction
    vars_, body, red_index = trace_body(ref)
    # lanes mode: the reduction's output index moves with the vector loop, so its value is a
    # vector (one reduction per lane) even where the body does not depend on that index
    lanes_mode = scope.vector is not None and scope.vector.var in ref.index_vars()
    if not vars_:  # a reduction over size-1 dims is its body
        if red.kind in ("argmax", "argmin"):
            return em.const(scope, 0, value_type(torch.int64, em.width if lanes_mode else None))
        return em.emit(body, scope, want_vector=lanes_mode)
    if red.kind in ("argmax", "argmin"):
        return _arg_reduction(em, ref, scope, vars_, body, red_index)
    inner_vector = (not lanes_mode and scope.vector is None and vectorize and vars_[-1].extent > 1)
    width = em.width if (lanes_mode or inner_vector) else None
    acc_ty = value_type(red.dtype, width)
    init = em.const(scope, identity(red.kind, red.dtype), acc_ty)
    size = 1
    for v in vars_:
        size *= v.extent
    # each accumulator (lane) adds this many values in sequence
    chain = size if width is None or lanes_mode else -(-size // width)
    compensated = red.kind == "sum" and red.dtype.is_floating_point and chain >= COMPENSATED_CHAIN
    nan_tracked = red.kind in ("max", "min") and red.dtype.is_floating_point
    inits = [init, em.const(scope, 0.0, acc_ty)] if compensated else [init, init] if nan_tracked else [init]

    loops: list[tuple[Operation, Scope]] = []
    current = scope
    carried: list[SSAValue] = inits
    for i, v in enumerate(vars_):
        last = i == len(vars_) - 1
        if last and inner_vector:
            op, child = open_vfor(current, v, em.width, carried, masked=em.masked_vectors)
        else:
            op, child = open_for(current, v, carried)
        loops.append((op, child))
        carried = list(child.block.args[-len(inits):])
        current = child
    with contextlib.ExitStack() as stack:
        for (op, _), (_, parent) in zip(loops, [(None, scope)] + loops[:-1]):
            stack.enter_context(parent.child_anchor(op))
        val = em.emit(body, current, want_vector=width is not None)
        if compensated:
            new = _kahan(current, carried[0], carried[1], val)
        elif nan_tracked:
            new = _nan_tracked_step(current, red.kind, carried[0], carried[1], val)
        else:
            new = [combine(em, current, red.kind, red.dtype, carried[0], val)]
    close(current, new)
    for (op, child), (outer_op, _) in zip(reversed(loops[:-1]), reversed(loops[1:])):
        close(child, list(outer_op.results))
    result = loops[0][0].results[0]
    if compensated:
        fix = arith.SubfOp(result, loops[0][0].results[1])
        scope.insert(fix)
        result = fix.result
    if nan_tracked:  # the last NaN seen, if any, else the extreme value
        last_nan = loops[0][0].results[1]
        result = _insert(scope, make_select(_insert(scope, make_cmp("uno", last_nan, last_nan)), last_nan, result))
    if inner_vector:
        r = loop.ReduceOp(_HORIZONTAL[red.kind], result)
        scope.insert(r)
        result = r.result
    return result


#: Float sums whose accumulators each add at least this many values in sequence use
#: compensated (Kahan) accumulation, which keeps long reductions (a softmax over a 50k
#: vocabulary, a mean over an image) as accurate as torch's cascade summation: 8,192
#: elements on 16 AVX-512 lanes, 512 in a scalar loop (fuzz seed 13, program 7754: a
#: layer_norm over 2,145 elements on the scalar ISA was 3.3 ulp off where eager is 1.3).
COMPENSATED_CHAIN = 512


def _nan_tracked_step(scope: Scope, kind: str, acc: SSAValue, last_nan: SSAValue, val: SSAValue) -> list[SSAValue]:
    """One step of a float max (min) as eager's ``val > maxval || isnan(val)``, on two chains:
    the extreme value, where a tie keeps the running value and NaN never enters (``val > acc ?
    val : acc``, one ``vmaxps``), and the last NaN seen (a masked move on ``val``'s own NaN
    test); the caller picks the NaN if there was one.  The same result as :func:`combine`'s
    single chain, whose compare, mask or and masked move per step made a 3x3 max pool wait on
    their latency (64x112x112 bf16, 1 thread: 0.29 -> 0.13 ms)."""
    better = _insert(scope, make_cmp("olt" if kind == "min" else "ogt", val, acc))
    pick = _insert(scope, make_select(better, val, acc))
    nan = _insert(scope, make_cmp("uno", val, val))
    return [pick, _insert(scope, make_select(nan, val, last_nan))]


def _kahan(scope: Scope, acc: SSAValue, comp: SSAValue, val: SSAValue) -> list[SSAValue]:
    """One compensated step: the running sum and the (negated) low-order bits it lost."""
    y = _insert(scope, arith.SubfOp(val, comp))
    t = _insert(scope, arith.AddfOp(acc, y))
    lost = _insert(scope, arith.SubfOp(t, acc))
    return [t, _insert(scope, arith.SubfOp(lost, y))]


def _arg_reduction(em: KernelEmitter, ref: ReduceRef, scope: Scope, vars_: list[Var], body: Value,
                   red_index: list[IndexExpr]) -> SSAValue:
    """Index of the first maximum (minimum); NaN counts as the maximum (and the minimum)."""
    red = ref.reduction
    vdtype = body.dtype
    lanes_mode = scope.vector is not None and scope.vector.var in ref.index_vars()
    width = em.width if lanes_mode else None
    best0 = em.const(scope, identity(red.kind, vdtype), value_type(vdtype, width))
    idx0 = em.const(scope, -1, VectorType(i64, [width]) if width else i64)
    loops: list[tuple[Operation, Scope]] = []
    current = scope
    best, idx = best0, idx0
    for v in vars_:
        op, child = open_for(current, v, [best, idx])
        loops.append((op, child))
        best, idx = child.block.args[-2], child.block.args[-1]
        current = child
    with contextlib.ExitStack() as stack:
        for (op, _), (_, parent) in zip(loops, [(None, scope)] + loops[:-1]):
            stack.enter_context(parent.child_anchor(op))
        val = em.emit(body, current, want_vector=width is not None)
        pos = em.index(flat_index(red_index, red.red_shape), current)
        pos64 = _insert(current, arith.IndexCastOp(pos, i64))
        if width:
            pos64 = em.broadcast(current, pos64)
        pred = "ogt" if red.kind == "argmax" else "olt"
        if vdtype.is_floating_point:
            better = _insert(current, make_cmp(pred, val, best))
            val_nan = _insert(current, make_cmp("uno", val, val))
            best_ok = _insert(current, make_cmp("ord", best, best))
            nan_first = _insert(current, arith.AndIOp(val_nan, best_ok))
            take = _insert(current, arith.OrIOp(better, nan_first))
        else:
            ipred = "sgt" if red.kind == "argmax" else "slt"
            if vdtype == torch.bool:
                ipred = "ugt" if red.kind == "argmax" else "ult"
            take = _insert(current, make_cmp(ipred, val, best))
        minus1 = em.const(current, -1, idx.type)
        first = _insert(current, make_cmp("eq", idx, minus1))
        take = _insert(current, arith.OrIOp(take, first))
        new_best = _insert(current, make_select(take, val, best))
        new_idx = _insert(current, make_select(take, pos64, idx))
    close(current, [new_best, new_idx])
    for (op, child), (outer_op, _) in zip(reversed(loops[:-1]), reversed(loops[1:])):
        close(child, [outer_op.results[0], outer_op.results[1]])
    return loops[0][0].results[1]


def _insert(scope: Scope, op: Operation) -> SSAValue:
    scope.insert(op)
    return op.results[0]
