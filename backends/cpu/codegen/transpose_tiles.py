"""Transposing reads as tiles: ``W`` row loads and an in-register transpose instead of ``W`` gathers.

A kernel that transposes (``NCHW -> NHWC``, a ``permute`` copied out) reads along its vector
dimension with a stride; ``loopgen/kernel.py`` tiles it so that a ``loop.for`` of ``W``
iterations inside the vector loop reads, one gather per iteration, the ``W x W`` tile of
elements ``base + k + step * l`` (iteration ``k``, lane ``l``).  Here that loop is emitted
unrolled, and each such gather is replaced by column ``k`` of the tile: the ``W`` rows
``base + step * l + [0, W)`` are loaded contiguously (a lane past the vector loop's valid
lanes loads nothing and reads as 0, as the gather's masked-off lane does) and transposed by
``log2(W)`` stages of interleaving shuffles.  The same elements are read, and the same values
result.  Measured, 1 thread (``x.permute(...).contiguous()``): ``1x96x56x56`` NCHW to NHWC
(ConvNeXt's input) 0.112 -> 0.034 ms, back 0.086 -> 0.031 ms, in bf16 0.095 -> 0.026 ms;
``512x512`` 0.107 -> 0.090 ms.  A tiled variable that is no multiple of ``W`` keeps its last
rows in a nest of their own, gathered (``loopgen/kernel.py``; a 14x14 plane's 196 pixels,
``1x512x14x14`` bf16 to NHWC: 0.062 -> 0.020 ms).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.codegen.emitter import FunctionEmitter
from ziggurat.backends.cpu.codegen.types import llvm_type
from ziggurat.backends.cpu.llvm_ir import I1, I32, I64, intrinsic_suffix, splat
from ziggurat.dialects import loop

#: loops whose body has more ops are not unrolled (the tile saves W gathers; the unrolled
#: body costs W copies of the code)
MAX_BODY_OPS = 48


def tile_gathers(op: loop.ForOp) -> list[loop.VGatherOp]:
    """The gathers of ``op`` that read a transposed tile, when ``op`` is a ``loop.for`` from 0
    to ``W`` by 1 with no carried values and its body is small; else []."""
    ub = op.upper_bound
    if op.lb != 0 or op.stride != 1 or not isinstance(ub, int) or ub < 2 or ub & (ub - 1) or op.inits:
        return []
    block = op.body.block
    ops = list(block.ops)
    if len(ops) > MAX_BODY_OPS or any(o.regions for o in ops):  # straight-line bodies only
        return []
    return [g for g in ops if isinstance(g, loop.VGatherOp) and _reads_tile(g, block, ub)]


def _reads_tile(g: loop.VGatherOp, block: Block, width: int) -> bool:
    vty = llvm_type(g.result.type)
    if not isinstance(vty, ir.VectorType) or vty.count != width or vty.element == I1 or g.mask is not None:
        return False
    if g.lanes is not None and not _outside(g.lanes, block):
        return False
    index = g.offsets.owner
    if not isinstance(index, loop.VIndexOp) or index.scale is not None or index.parent_block() is not block:
        return False
    if int(index.step.value.data) < width:  # rows would overlap: the span gather's case
        return False
    offset = index.base.owner
    if not isinstance(offset, loop.OffsetOp) or offset.parent_block() is not block:
        return False
    iv = block.args[0]
    terms = list(zip(offset.indices, offset.coefficients, strict=True))
    if [c for v, c in terms if v is iv] != [1]:
        return False
    return all(_outside(v, block) for v, _ in terms if v is not iv)


def _outside(value: SSAValue, block: Block) -> bool:
    """Whether ``value`` is defined outside ``block`` (so it is known before the loop)."""
    if isinstance(value, BlockArgument):
        return value.block is not block
    owner = value.owner
    return not (isinstance(owner, Operation) and owner.parent_block() is block)


def emit_unrolled(em: FunctionEmitter, op: loop.ForOp, gathers: list[loop.VGatherOp]) -> None:
    """``op``'s ``W`` iterations one after the other, each gather of ``gathers`` given its
    column of the tile loaded and transposed before them."""
    width = op.upper_bound
    assert isinstance(width, int)
    block = op.body.block
    columns = {g: _tile_columns(em, g, block, width) for g in gathers}
    for k in range(width):
        em.set(block.args[0], I64(k))
        em.tiles = {g: cols[k] for g, cols in columns.items()}
        em.emit_block(block)
    em.tiles = {}


def _tile_columns(em: FunctionEmitter, g: loop.VGatherOp, block: Block, width: int) -> list[ir.Value]:
    b = em.b
    vty = llvm_type(g.result.type)
    assert isinstance(vty, ir.VectorType)
    index = g.offsets.owner
    offset = index.base.owner  # pyright: ignore[reportAttributeAccessIssue]  (checked by _reads_tile)
    assert isinstance(index, loop.VIndexOp) and isinstance(offset, loop.OffsetOp)
    step = int(index.step.value.data)
    base: ir.Value = I64(offset.const)
    for v, c in zip(offset.indices, offset.coefficients, strict=True):
        if v is block.args[0]:
            continue
        term = em.get(v)
        base = llvm_ir.add(b, base, term if c == 1 else llvm_ir.mul(b, term, I64(c)))
    buffer = em.get(g.buffer)
    lanes = em.get(g.lanes) if g.lanes is not None else None
    align = max(1, vty.element.width // 8) if isinstance(vty.element, ir.IntType) else (
        8 if vty.element == ir.DoubleType() else 4)
    load = em.declare(f"llvm.masked.load.{intrinsic_suffix(vty)}.{intrinsic_suffix(vty.as_pointer())}", vty,
                      [vty.as_pointer(), I32, ir.VectorType(I1, width), vty])
    rows: list[ir.Value] = []
    for lane in range(width):
        ptr = b.bitcast(b.gep(buffer, [llvm_ir.add(b, base, I64(step * lane))]), vty.as_pointer())
        if lanes is None or (isinstance(lanes, ir.Constant) and int(lanes.constant) >= width):
            rows.append(b.load(ptr, align=align))
        else:  # a lane past the valid ones reads nothing
            on = b.icmp_signed("<", I64(lane), lanes)
            mask = splat(b, on, ir.VectorType(I1, width))
            rows.append(b.call(load, [ptr, I32(align), mask, ir.Constant(vty, None)]))
    return transpose(b, rows)


def transpose(b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
    """The columns of the square matrix whose rows are ``rows`` (``W`` vectors of ``W`` lanes,
    ``W`` a power of two): ``log2(W)`` stages of ``out[2i], out[2i+1] = interleave(in[i],
    in[i + W/2])`` (low halves, high halves)."""
    width = len(rows)
    half = width // 2
    low = ir.Constant(ir.VectorType(I32, width), [j // 2 + (width if j % 2 else 0) for j in range(width)])
    high = ir.Constant(ir.VectorType(I32, width), [half + j // 2 + (width if j % 2 else 0) for j in range(width)])
    stages = width.bit_length() - 1
    for _ in range(stages):
        nxt: list[ir.Value] = []
        for i in range(half):
            nxt.append(b.shuffle_vector(rows[i], rows[i + half], low))
            nxt.append(b.shuffle_vector(rows[i], rows[i + half], high))
        rows = nxt
    return rows
