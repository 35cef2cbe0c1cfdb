"""``loop.for``, ``loop.vfor`` and ``loop.parallel`` as LLVM control flow.

* ``loop.for``: a counted loop with one phi per carried value.
* ``loop.vfor``: the full iterations as such a loop with ``%lanes`` bound to the
  constant vector width, then the tail iteration (if any) emitted once more with
  ``%lanes`` bound to the constant tail length; its carried vectors keep their old
  lanes past the tail (a select with the constant lane mask).  With a run-time upper bound
  the split is computed at run time and the tail is a branch taken when it has lanes
  (``%lanes`` and the mask are run-time values).
* ``loop.parallel``: the body is outlined and run over the flattened iteration space by
  ``threads.emit_parallel_for`` (libgomp); values used inside are captured, and so are
  run-time bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import ir
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.codegen.arith_ops import splat
from ziggurat.backends.cpu.codegen.emitter import FunctionEmitter, handles
from ziggurat.backends.cpu.codegen.transpose_tiles import emit_unrolled, tile_gathers
from ziggurat.backends.cpu.llvm_ir import I1, I64, instr, value_type
from ziggurat.backends.cpu.threads import PARALLEL_MIN_ELEMENTS, emit_parallel_for
from ziggurat.dialects import loop
from ziggurat.dialects.loop.loops import TASK_ELEMENTS_ATTR


def _counted_loop(em: FunctionEmitter, block: Block, ivs_map: int, lb: int, ub: int | ir.Value, step: int,
                  inits: Sequence[ir.Value], extra: Sequence[tuple[SSAValue, ir.Value]] = ()) -> list[ir.Value]:
    """Emit ``for iv in range(lb, ub, step)`` over ``block`` (``ub`` an integer or a run-time
    ``i64``); returns the final carried values."""
    b = em.b
    fn = b.function
    if isinstance(ub, int) and ub <= lb:
        return list(inits)
    upper = I64(ub) if isinstance(ub, int) else ub
    pre = b.block
    header = fn.append_basic_block("loop.header")
    body = fn.append_basic_block("loop.body")
    exit_ = fn.append_basic_block("loop.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(I64, name="iv")
    iv.add_incoming(I64(lb), pre)
    phis = []
    for init in inits:
        phi = b.phi(value_type(init))
        phi.add_incoming(init, pre)
        phis.append(phi)
    b.cbranch(b.icmp_signed("<", iv, upper), body, exit_)
    b.position_at_end(body)
    args = block.args
    em.set(args[0], iv)
    for arg, value in extra:
        em.set(arg, value)
    for arg, phi in zip(args[ivs_map:], phis, strict=True):
        em.set(arg, phi)
    yielded = em.emit_block(block)
    latch = b.block
    nxt = b.add(iv, I64(step))
    iv.add_incoming(nxt, latch)
    for phi, y in zip(phis, yielded, strict=True):
        phi.add_incoming(y, latch)
    back_edge = b.branch(header)
    if _wraps_an_index(block):
        llvm_ir.disable_loop_vectorizer(b.module, back_edge)
    b.position_at_end(exit_)
    return list(phis)


def _wraps_an_index(block: Block) -> bool:
    """Whether the loop body takes an index modulo a size (``roll``, wrapping gathers).

    LLVM 22's loop vectorizer miscompiles such a loop when it indexes with two masks of the
    same induction (``(i + 7) % 128`` and ``(i + 7) % 16``): its run-time check covers the
    wider mask's wrap only, so the narrower index is read as contiguous across its wrap (fuzz
    seed 13, program 6700: ``roll(log_softmax(x, 0))`` on the scalar ISA).  Our own vector
    code handles these loops with gathers; LLVM's vectorizer is kept off them."""
    return any(isinstance(op, arith.RemUIOp | arith.RemSIOp)
               or (isinstance(op, arith.AndIOp) and isinstance(op.result.type, IndexType))
               for op in block.walk())


@handles(loop.ForOp)
def _for(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.ForOp)
    gathers = tile_gathers(op)
    if gathers:  # a transposing read's tile loop: unrolled, its gathers read as a transposed tile
        emit_unrolled(em, op, gathers)
        return
    inits = [em.get(v) for v in op.inits]
    ub = op.upper_bound
    results = _counted_loop(em, op.body.block, 1, op.lb, ub if isinstance(ub, int) else em.get(ub),
                            op.stride, inits)
    for res, value in zip(op.res, results, strict=True):
        em.set(res, value)


@handles(loop.VForOp)
def _vfor(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.VForOp)
    if not op.is_static:
        _vfor_runtime(em, op)
        return
    width = op.stride
    full_end = op.lb + op.full_iterations * width
    block = op.body.block
    values = [em.get(v) for v in op.inits]
    if op.full_iterations:
        values = _counted_loop(em, block, 2, op.lb, full_end, width, values,
                               extra=[(op.lanes, I64(width))])
    if op.tail:
        tail = op.tail
        values = _tail_iteration(em, block, I64(full_end), I64(tail), values, lambda count: ir.Constant(
            ir.VectorType(I1, count), [1 if i < tail else 0 for i in range(count)]))
    for res, value in zip(op.res, values, strict=True):
        em.set(res, value)


def _tail_iteration(em: FunctionEmitter, block: Block, start: ir.Value, lanes: ir.Value, values: list[ir.Value],
                    mask_of: Callable[[int], ir.Value]) -> list[ir.Value]:
    """The body once more at ``start`` with ``lanes`` valid lanes; carried vectors keep their
    old lanes past them (``mask_of(lanes of the vector)``: true on the valid lanes)."""
    args = block.args
    em.set(args[0], start)
    em.set(args[1], lanes)
    for arg, value in zip(args[2:], values, strict=True):
        em.set(arg, value)
    yielded = em.emit_block(block)
    merged: list[ir.Value] = []
    for old, new in zip(values, yielded, strict=True):
        new_ty = value_type(new)
        if isinstance(new_ty, ir.VectorType):
            merged.append(instr(em.b.select(mask_of(new_ty.count), new, old)))
        else:
            merged.append(new)
    return merged


def _vfor_runtime(em: FunctionEmitter, op: loop.VForOp) -> None:
    """A vector loop to a run-time bound: full iterations to ``lb + (n // step) * step``, then
    the tail iteration when ``n % step`` lanes remain (``n = ub - lb``, 0 when ``ub < lb``)."""
    b = em.b
    width = op.stride
    ub = em.get(op.upper_bound)  # pyright: ignore[reportArgumentType]  (a value: not static)
    lb = I64(op.lb)
    n = instr(b.select(instr(b.icmp_signed("<", ub, lb)), I64(0), llvm_ir.sub(b, ub, lb)))
    full_end = llvm_ir.add(b, lb, llvm_ir.mul(b, llvm_ir.udiv(b, n, I64(width)), I64(width)))
    tail = llvm_ir.sub(b, n, llvm_ir.sub(b, full_end, lb))
    block = op.body.block
    values = _counted_loop(em, block, 2, op.lb, full_end, width, [em.get(v) for v in op.inits],
                           extra=[(op.lanes, I64(width))])

    def lane_mask(count: int) -> ir.Value:
        iota = ir.Constant(ir.VectorType(I64, count), list(range(count)))
        return instr(b.icmp_signed("<", iota, splat(b, tail, ir.VectorType(I64, count))))

    results = llvm_ir.if_update(b, instr(b.icmp_signed(">", tail, I64(0))), values,
                                lambda old: _tail_iteration(em, block, full_end, tail, old, lane_mask), "vfor.tail")
    for res, value in zip(op.res, results, strict=True):
        em.set(res, value)


def _free_values(op: Operation) -> list[SSAValue]:
    """Values used inside ``op``'s regions but defined outside them."""
    inside: set[SSAValue] = set()
    for inner in op.walk():
        for r in inner.regions:
            for blk in r.blocks:
                inside.update(blk.args)
        if inner is not op:
            inside.update(inner.results)
    free: list[SSAValue] = []
    seen: set[SSAValue] = set()
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v not in inside and v not in seen:
                seen.add(v)
                free.append(v)
    return free


@handles(loop.ParallelOp)
def _parallel(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.ParallelOp)
    bounds = op.bounds
    total: int | ir.Value = 1
    for n in bounds:
        if isinstance(n, int) and isinstance(total, int):
            total *= n
        else:
            total = llvm_ir.mul(em.b, I64(total) if isinstance(total, int) else total,
                                I64(n) if isinstance(n, int) else em.get(n))
    free = _free_values(op)
    free += [v for v in op.dynamic_bounds if v not in free]
    outer = {v: em.get(v) for v in free}
    # Constants are used as they are inside the outlined body: captured, they would arrive as
    # loads, and LLVM could no longer fold them (a lane division by a captured 3 became 16
    # scalar `div`s, 3.5x slower at 2 threads than the 1-thread loop).
    free = [v for v in free if not isinstance(outer[v], ir.Constant)]
    captures = [outer[v] for v in free] + [em.status]
    block = op.body.block

    def body(bb: ir.IRBuilder, begin: ir.Value, end: ir.Value, tid: ir.Value, caps: list[ir.Value]) -> None:
        saved_status = em.status
        with em.using(bb):
            for v, c in zip(free, caps[:-1], strict=True):
                em.set(v, c)
            em.status = caps[-1]
            pre = bb.block
            fn = bb.function
            header = fn.append_basic_block("par.header")
            body_bb = fn.append_basic_block("par.body")
            exit_ = fn.append_basic_block("par.exit")
            bb.branch(header)
            bb.position_at_end(header)
            t = bb.phi(I64, name="task")
            t.add_incoming(begin, pre)
            bb.cbranch(bb.icmp_signed("<", t, end), body_bb, exit_)
            bb.position_at_end(body_bb)
            rem: ir.Value = t
            for arg, n in reversed(list(zip(block.args, bounds, strict=True))):
                if isinstance(n, int):
                    em.set(arg, llvm_ir.urem(bb, rem, I64(n)) if n > 1 else I64(0))
                    rem = llvm_ir.udiv(bb, rem, I64(n)) if n > 1 else rem
                else:
                    size = em.get(n)
                    em.set(arg, llvm_ir.urem(bb, rem, size))
                    rem = llvm_ir.udiv(bb, rem, size)
            em.emit_block(block)
            t.add_incoming(bb.add(t, I64(1)), bb.block)
            bb.branch(header)
            bb.position_at_end(exit_)
        em.status = saved_status

    # A range build's loop (``loop.task_elements``): share the work as a static build of this
    # size would, from PARALLEL_MIN_ELEMENTS elements on (at run time where the size is).
    serial_when = None
    threads = em.threads
    task = op.attributes.get(TASK_ELEMENTS_ATTR)
    if isinstance(task, IntegerAttr) and isinstance(total, int):
        threads = 1 if total * int(task.value.data) < PARALLEL_MIN_ELEMENTS else threads
    elif isinstance(task, IntegerAttr) and not isinstance(total, int):
        work = llvm_ir.mul(em.b, total, I64(int(task.value.data)))
        serial_when = instr(em.b.icmp_signed("<", work, I64(PARALLEL_MIN_ELEMENTS)))
    emit_parallel_for(em.module, em.b, total, body, num_threads=threads, captures=captures,
                      name=f"{em.name}.par", serial_when=serial_when)
    for v, value in outer.items():
        em.set(v, value)
