"""One ``ComputeNode`` as one ``loop.kernel``.

Loop structure over the output variables ``i0..in-1`` (outermost first):

* the outer variables form one ``loop.parallel`` (when there is enough work for the
  thread team), up to the first one a computed-in-kernel reduction is placed after;
* the last variable is a ``loop.vfor`` (vector loop, masked tail) when the kernel is
  vectorized over its output, else a ``loop.for``;
* reductions are emitted where their output index is bound (see ``placement.py``);
  a reduction over the whole row (softmax, norms) vectorizes over its own variables.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, SSAValue

from ziggurat.backends.cpu.loopgen.borders import border_pieces
from ziggurat.backends.cpu.loopgen.emitter import KernelEmitter, lane_step
from ziggurat.backends.cpu.loopgen.loops import open_for, open_parallel, open_vfor
from ziggurat.backends.cpu.loopgen.merge import merge_loops, merge_narrow_inner
from ziggurat.backends.cpu.loopgen.reductions import emit_reduction, trace_body
from ziggurat.backends.cpu.loopgen.scope import Scope
from ziggurat.backends.cpu.loopgen.types import memref
from ziggurat.backends.cpu.loopgen.vectorize import vector_blockers
from ziggurat.backends.cpu.lowering.index import IndexExpr, Var, flat_index, loop_vars
from ziggurat.backends.cpu.lowering.nodes import ComputeNode
from ziggurat.backends.cpu.lowering.placement import ref_level, top_level_refs
from ziggurat.backends.cpu.lowering.tensors import begin_trace
from ziggurat.backends.cpu.lowering.values import Buffer, Load, ReduceRef, Value, walk
from ziggurat.backends.cpu.threads import PARALLEL_MIN_ELEMENTS
from ziggurat.dialects import loop
from ziggurat.dialects.loop.loops import TASK_ELEMENTS_ATTR


@dataclass(frozen=True)
class KernelOptions:
    isa: str
    width: int
    threads: int
    #: schedule as one build serves every size of a range (``convert-kernel-to-loop``'s
    #: ``range_schedule``): a loop nest with parallel work is a ``loop.parallel`` whatever its
    #: size, carrying its elements per task (``loop.task_elements``) for the run-time choice
    #: of a serial run, and no vector loop is chunked over the team
    range_schedule: bool = False


class KernelBuffers:
    """The kernel's block arguments, created on first use (inputs before the output)."""

    def __init__(self, block: Block, out: Buffer) -> None:
        self.block = block
        self.ins: list[Buffer] = []
        self.map: dict[Buffer, SSAValue] = {out: block.args[0]}
        self.block.args[0].name_hint = "out"

    def __contains__(self, buf: object) -> bool:
        return True

    def __getitem__(self, buf: Buffer) -> SSAValue:
        hit = self.map.get(buf)
        if hit is None:
            hit = self.block.insert_arg(memref(buf.shape, buf.dtype), len(self.ins))
            hit.name_hint = _hint(buf)
            self.ins.append(buf)
            self.map[buf] = hit
        return hit


def _hint(buf: Buffer) -> str:
    name = "".join(c if c.isalnum() else "_" for c in buf.name)
    return name if name and not name[0].isdigit() else "b" + name


def _prefer_reduction_vectors(refs: Sequence[ReduceRef], last: Var, width: int) -> bool:
    """Vectorize inside the reductions (per output element) rather than across outputs?"""
    if last.extent < 4:
        return True
    for ref in refs:
        vars_, body, _ = trace_body(ref)
        if not vars_ or vars_[-1].extent < max(4, width // 2):
            return False
        contiguous_r = contiguous_o = 0
        for node in walk(body):
            if isinstance(node, Load):
                flat = flat_index(node.subs, node.buffer.shape)
                contiguous_r += flat.coeff(vars_[-1]) == 1
                contiguous_o += flat.coeff(last) == 1
        if contiguous_r < contiguous_o or contiguous_r == 0:
            return False
    return True


def _domains(node: ComputeNode, options: KernelOptions) -> list[tuple[list[Var], list[IndexExpr]]]:
    """The loop variables and output index of each loop nest: one over the whole output, one
    per piece of a piecewise element function (the dim's index offset by the piece's start,
    so the element function reads that piece's source alone), or one per block of a border
    split (:func:`border_pieces`)."""
    shape = node.out.shape
    pieces = node.pieces
    if pieces is None or len(pieces.sizes) < 2:
        split = None if options.range_schedule else border_pieces(node, options.width)
        if split is None:
            return [loop_vars(shape, "i")]
        dims = sorted(split)
        domains = []
        for block in itertools.product(*(split[d] for d in dims)):
            piece_shape = list(shape)
            for d, (_, size) in zip(dims, block, strict=True):
                piece_shape[d] = size
            vars_, index = loop_vars(piece_shape, "i")
            for d, (start, _) in zip(dims, block, strict=True):
                index[d] = index[d] + start
            domains.append((vars_, index))
        return domains
    domains: list[tuple[list[Var], list[IndexExpr]]] = []
    for start, size in zip(pieces.starts, pieces.sizes, strict=True):
        if size == 0:
            continue
        piece_shape = list(shape)
        piece_shape[pieces.dim] = size
        inner = max((d for d, n in enumerate(piece_shape) if n > 1), default=len(shape))
        if any(n > 1 for n in shape[inner + 1:]):
            # the piece's innermost loop would not be the output's unit-stride dim (a piece one
            # wide in the last dim): the vector loop and its stores assume it is
            return [loop_vars(shape, "i")]
        vars_, index = loop_vars(piece_shape, "i")
        index[pieces.dim] = index[pieces.dim] + start
        domains.append((vars_, index))
    return domains


def emit_compute(node: ComputeNode, options: KernelOptions, out_ssa: SSAValue,
                 operand_of: dict[Buffer, SSAValue]) -> loop.KernelOp | None:
    shape = node.out.shape
    if any(n == 0 for n in shape):
        return None
    domains = _domains(node, options)

    def traced(domain: tuple[list[Var], list[IndexExpr]]) -> tuple[list[Var], list[IndexExpr], Value]:
        begin_trace()
        vars_, index, root = merge_loops(list(domain[0]), list(domain[1]), node.fn, lambda idx: [flat_index(idx, shape)])
        if len(domains) == 1 and not options.range_schedule:  # (a range build's sampled sizes
            # must give one loop structure; a narrow dim's merge follows its size)
            vars_, index, root = merge_narrow_inner(vars_, index, root, node.fn, options.width)
        return vars_, index, root

    first = traced(domains[0])
    vectorize = options.width > 1 and not vector_blockers(first[2])
    if vectorize and any(vector_blockers(traced(domain)[2]) for domain in domains[1:]):
        vectorize = False
    width = options.width if vectorize else 1

    block = Block(arg_types=[memref(shape, node.out.dtype)])
    buffers = KernelBuffers(block, node.out)

    def reduce(em: KernelEmitter, ref: ReduceRef, scope: Scope) -> SSAValue:
        return emit_reduction(em, ref, scope, vectorize)

    em = KernelEmitter(buffers, options.width, reduce, masked_vectors=options.range_schedule)  # type: ignore[arg-type]
    root_scope = Scope(block)
    out = block.args[-1]
    for domain in domains:
        # one nest: the trace above; several: each traced again for its own nest
        vars_, index, root = first if len(domains) == 1 else traced(domain)
        _emit_domain(em, root_scope, node, options, vectorize, vars_, index, root, out)

    ins = [operand_of[b] for b in buffers.ins]
    kernel = loop.KernelOp(node.name, ins, [out_ssa], isa=options.isa, vector_width=width,
                           vectorized=vectorize and _has_vector_loop(block), origins=",".join(node.origins),
                           body=_region(block))
    return kernel


def _emit_domain(em: KernelEmitter, root_scope: Scope, node: ComputeNode, options: KernelOptions,
                 vectorize: bool, vars_: list[Var], index: list[IndexExpr], root: Value, out: SSAValue) -> None:
    """The loop nest(s) computing the output elements ``index`` spans over ``vars_``."""
    shape = node.out.shape
    refs = top_level_refs(root)
    levels = [ref_level(r, vars_) for r in refs]
    n = len(vars_)
    full_refs = [r for r, lvl in zip(refs, levels, strict=True) if lvl == n and n > 0]
    vec_var: Var | None = None
    if vectorize and n > 0:
        if not (full_refs and _prefer_reduction_vectors(full_refs, vars_[-1], options.width)):
            vec_var = vars_[-1] if vars_[-1].extent > 1 or not full_refs else None
    serial_vars = vars_[:-1] if vec_var is not None else vars_
    positive = [lvl for lvl in levels if lvl]
    par_count = min([len(serial_vars)] + positive)
    par_vars = serial_vars[:par_count]
    work = 1
    for v in par_vars:
        work *= v.extent
    total = 1
    for v in vars_:
        total *= v.extent
    parallel = options.threads > 1 and work >= 2 and (options.range_schedule or total >= PARALLEL_MIN_ELEMENTS)
    range_total = total if options.range_schedule else 0

    chunk = _chunking(options, vec_var, work, total, bool(refs))
    tile = _transpose_tile(root, vec_var, serial_vars, options.width, options.range_schedule) \
        if chunk is None and not refs else None
    if tile is not None:
        # A transposing read: run the tiled variable inside the vector loop, so the W lines
        # one gather touches are reused by the next W - 1 gathers (adjacent elements).
        assert vec_var is not None
        blk, lane = Var(tile.name + "b", tile.extent // options.width), Var(tile.name, options.width)
        tiled = [e.substitute({tile: IndexExpr.of(blk) * options.width + IndexExpr.of(lane)}) for e in index]
        outer = [blk if v is tile else v for v in serial_vars]
        npar = len(par_vars) if parallel else 0
        inner = [lane]
        if npar < len(outer) and outer[-1] is blk:
            # ... and the blocks inside the vector loop too (a serial innermost tile): a vector
            # of W source rows streams through all its blocks before the next, so W rows are
            # read at a time, not all of them, which defeats the hardware prefetcher when the
            # source is cold (a 1x96x56x56 NCHW -> NHWC copy from memory: 0.39 -> 0.28 ms,
            # 2x64x28x28 0.15 -> 0.12 ms; the same in cache; ConvNeXt's input)
            outer, inner = outer[:-1], [blk, lane]
        begin_trace()
        _emit_nest(em, root_scope, outer[:npar], outer[npar:], vec_var, options.width, node.fn(tiled), tiled,
                   shape, out, inner=inner, range_total=range_total)
        rem = tile.extent % options.width
        if rem:  # the tiled variable's last elements, gathered row by row (ResNet's 14x14 planes)
            last = Var(tile.name, rem)
            rem_index = [e.substitute({tile: IndexExpr.of(last) + tile.extent - rem}) for e in index]
            rest = [last if v is tile else v for v in serial_vars]
            begin_trace()
            _emit_nest(em, root_scope, rest[:npar], rest[npar:], vec_var, options.width, node.fn(rem_index),
                       rem_index, shape, out, range_total=range_total)
    elif chunk is None:
        _emit_nest(em, root_scope, par_vars if parallel else [], serial_vars[len(par_vars) if parallel else 0:],
                   vec_var, options.width, root, index, shape, out, range_total=range_total)
    else:
        assert vec_var is not None
        size, count = chunk
        q = Var("chunk", count)
        inner = Var(vec_var.name, size)
        main_index = [e.substitute({vec_var: IndexExpr.of(q) * size + IndexExpr.of(inner)}) for e in index]
        begin_trace()
        _emit_nest(em, root_scope, [*serial_vars, q], [], inner, options.width, node.fn(main_index), main_index,
                   shape, out)
        rem = vec_var.extent - size * count
        if rem:
            last = Var(vec_var.name, rem)
            rem_index = [e.substitute({vec_var: IndexExpr.of(last) + size * count}) for e in index]
            begin_trace()
            _emit_nest(em, root_scope, [], serial_vars, last, options.width, node.fn(rem_index), rem_index,
                       shape, out)


def _chunking(options: KernelOptions, vec_var: Var | None, work: int, total: int,
              has_reductions: bool) -> tuple[int, int] | None:
    """(chunk size, chunk count) to split a long vector loop over the thread team when the
    outer loops give it too little parallel work (a flat element-wise kernel)."""
    if vec_var is None or has_reductions or options.threads < 2 or total < PARALLEL_MIN_ELEMENTS \
            or options.range_schedule:
        return None
    if work >= 2 * options.threads:
        return None
    parts = max(2, 4 * options.threads // max(work, 1))
    size = -(-vec_var.extent // parts)
    size = max(-(-size // options.width) * options.width, 4 * options.width)
    count = vec_var.extent // size
    if count < 2:
        return None
    return size, count


def _transpose_tile(root: Value, vec_var: Var | None, serial_vars: Sequence[Var], width: int,
                    range_schedule: bool = False) -> Var | None:
    """The serial variable to tile inside the vector loop, for a kernel that gathers along
    ``vec_var`` from a buffer that is contiguous along that variable (a transpose), or None.

    Row by row such a gather touches ``width`` cache lines per vector and uses one element of
    each; with a power-of-two stride those lines share a few L1 sets and are evicted before
    the next row reads their neighbours (a 512x512 transpose ran 4.5x slower than eager).

    A variable of at least ``2 * width`` that is no multiple of ``width`` is tiled too, its
    last ``extent % width`` elements in a nest of their own (a 14x14 plane's 196 pixels:
    12 tiles and 4 rows); not in a range schedule, whose sampled sizes must give one loop
    structure (a remainder nest at some sizes only would not)."""
    if vec_var is None or width == 1:
        return None
    for v in reversed(serial_vars):
        if v.extent < 2 * width or (v.extent % width and range_schedule):
            continue
        for node in walk(root):
            if isinstance(node, Load) and node.buffer.shape:
                flat = flat_index(node.subs, node.buffer.shape)
                if lane_step(flat, vec_var, width) not in (0, 1) and flat.coeff(v) == 1:
                    return v
    return None


def _emit_nest(em: KernelEmitter, root_scope: Scope, par_vars: Sequence[Var], serial_vars: Sequence[Var],
               vec_var: Var | None, width: int, root: Value, index: Sequence[IndexExpr], shape: Sequence[int],
               out: SSAValue, inner: Sequence[Var] = (), range_total: int = 0) -> None:
    """One loop nest: a ``loop.parallel`` over ``par_vars``, serial loops, the vector loop,
    optionally serial loops over ``inner`` inside it, and the store.  ``range_total``: the
    nest's elements, in a range schedule (``KernelOptions.range_schedule``)."""
    with contextlib.ExitStack() as stack:
        scope = root_scope
        if par_vars:
            op, child = open_parallel(scope, par_vars)
            if range_total:
                tasks = 1
                for v in par_vars:
                    tasks *= v.extent
                op.attributes[TASK_ELEMENTS_ATTR] = IntegerAttr(max(1, range_total // tasks), i64)
            stack.enter_context(scope.child_anchor(op))
            scope = child
        for v in serial_vars:
            op, child = open_for(scope, v)
            stack.enter_context(scope.child_anchor(op))
            scope = child
        if vec_var is not None:
            op, child = open_vfor(scope, vec_var, width, masked=em.masked_vectors)
            stack.enter_context(scope.child_anchor(op))
            scope = child
        for v in inner:
            op, child = open_for(scope, v)
            stack.enter_context(scope.child_anchor(op))
            scope = child
        value = em.emit(root, scope, want_vector=vec_var is not None)
        offset = em.index(flat_index(index, shape), scope)
        if vec_var is not None:
            lanes = scope.vector.lanes if scope.vector is not None else None
            scope.insert(loop.VStoreOp(value, out, offset, lanes))
        else:
            scope.insert(loop.StoreOp(value, out, offset))


def _has_vector_loop(block: Block) -> bool:
    for op in block.walk():
        if isinstance(op, loop.VForOp):
            return True
    return False


def _region(block: Block):  # -> Region
    from xdsl.ir import Region

    return Region(block)


