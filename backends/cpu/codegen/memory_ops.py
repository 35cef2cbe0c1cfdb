"""Loads, stores, gathers and index arithmetic of the loop level as LLVM IR.

Masked accesses use ``llvm.masked.load``/``store``/``gather`` with the lane mask of a
tail iteration (a constant) and/or a guard mask: masked-off lanes are never accessed.
"""

from __future__ import annotations

from math import prod
from typing import cast

from llvmlite import ir
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.codegen.arith_ops import splat
from ziggurat.backends.cpu.codegen.emitter import FunctionEmitter, handles
from ziggurat.backends.cpu.codegen.types import CodegenError, llvm_type, scalar_type, storage_type
from ziggurat.backends.cpu.llvm_ir import F64, I1, I8, I32, I64, VOID, intrinsic_suffix, masked_store, single_lane, value_type
from ziggurat.backends.cpu.threads import entry_alloca
from ziggurat.dialects import loop


def _elem_ptr(em: FunctionEmitter, base: ir.Value, offset: ir.Value) -> ir.Value:
    return em.b.gep(base, [offset])


def _lane_mask(em: FunctionEmitter, lanes_op: object, width: int) -> ir.Value | None:
    """Constant mask of the first ``lanes`` lanes (None when all lanes are valid)."""
    if lanes_op is None:
        return None
    lanes = em.get(lanes_op)  # type: ignore[arg-type]
    mty = ir.VectorType(I1, width)
    if isinstance(lanes, ir.Constant):
        n = int(lanes.constant)
        if n >= width:
            return None
        return ir.Constant(mty, [1 if i < n else 0 for i in range(width)])
    iota = ir.Constant(ir.VectorType(I64, width), list(range(width)))
    return em.b.icmp_signed("<", iota, splat(em.b, lanes, ir.VectorType(I64, width)))


def _combine_masks(em: FunctionEmitter, a: ir.Value | None, c: ir.Value | None) -> ir.Value | None:
    if a is None:
        return c
    if c is None:
        return a
    return em.b.and_(a, c)


def _is_bool(elem: ir.Type) -> bool:
    return isinstance(elem, ir.IntType) and elem.width == 1


@handles(loop.OffsetOp)
def _offset(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.OffsetOp)
    acc: ir.Value | None = None
    for v, c in zip(op.indices, op.coefficients, strict=True):
        term = em.get(v)
        if c != 1:
            term = llvm_ir.mul(em.b, term, I64(c))
        acc = term if acc is None else llvm_ir.add(em.b, acc, term)
    if acc is None:
        acc = I64(op.const)
    elif op.const:
        acc = llvm_ir.add(em.b, acc, I64(op.const))
    em.set(op.result, acc)


@handles(loop.VIndexOp)
def _vindex(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.VIndexOp)
    ty = llvm_type(op.result.type)
    assert isinstance(ty, ir.VectorType)
    step = int(op.step.value.data)
    base = splat(em.b, em.get(op.base), ty)
    lanes = ir.Constant(ty, [step * i for i in range(ty.count)])
    if op.scale is not None:  # a run-time stride: step * scale * l
        lanes = llvm_ir.mul(em.b, lanes, splat(em.b, em.get(op.scale), ty))
    em.set(op.result, llvm_ir.add(em.b, base, lanes))


@handles(loop.LoadOp)
def _load(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.LoadOp)
    ptr = _elem_ptr(em, em.get(op.buffer), em.get(op.offset))
    elem = scalar_type(op.result.type)
    value = em.b.load(ptr)
    if _is_bool(elem):
        value = em.b.icmp_unsigned("!=", value, I8(0))
    em.set(op.result, value)


@handles(loop.StoreOp)
def _store(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.StoreOp)
    ptr = _elem_ptr(em, em.get(op.buffer), em.get(op.offset))
    value = em.get(op.value)
    if value_type(value) == I1:
        value = em.b.zext(value, I8)
    em.b.store(value, ptr)


def _storage_vec(vty: ir.VectorType) -> ir.VectorType:
    return ir.VectorType(I8, vty.count) if _is_bool(vty.element) else vty


def _chunks(em: FunctionEmitter, sty: ir.VectorType) -> int:
    """How many register-sized parts a masked access of ``sty`` is emitted as: one, unless the
    vector is wider than the function's vector registers.

    LLVM 22 miscompiles a masked load that its type legalizer splits on AVX2 (``<8 x i64>`` in
    two ``vpmaskmovq`` halves): after the select folded into the load, a half whose mask is all
    false became a plain load of the memory there (seed-9 program 1031: ``constant_pad_nd`` of
    int64 gave garbage in the padding).  Accesses split here, one register each, are never split
    there."""
    bits = em.vector_bits
    if bits <= 0:
        return 1
    width = sty.element.width if isinstance(sty.element, ir.IntType) else (64 if sty.element == F64 else 32)
    total = width * sty.count
    parts = total // bits
    if total <= bits or total % bits or sty.count % parts or parts & (parts - 1):
        return 1  # (parts concatenate pairwise: a power of two)
    return parts


def _part(em: FunctionEmitter, vector: ir.Value, start: int, count: int) -> ir.Value:
    return em.b.shuffle_vector(vector, vector, ir.Constant(ir.VectorType(I32, count), list(range(start, start + count))))


def _masked_load(em: FunctionEmitter, ptr: ir.Value, sty: ir.VectorType, mask: ir.Value, align: int) -> ir.Value:
    parts = _chunks(em, sty)
    n = sty.count // parts
    pty = ir.VectorType(sty.element, n)
    fn = em.declare(f"llvm.masked.load.{intrinsic_suffix(pty)}.{intrinsic_suffix(pty.as_pointer())}", pty,
                    [pty.as_pointer(), I32, ir.VectorType(I1, n), pty])
    base = em.b.bitcast(ptr, sty.element.as_pointer())
    loaded: list[ir.Value] = []
    for k in range(parts):
        part_ptr = em.b.bitcast(em.b.gep(base, [I64(k * n)]), pty.as_pointer()) if parts > 1 else ptr
        part_mask = _part(em, mask, k * n, n) if parts > 1 else mask
        loaded.append(em.b.call(fn, [part_ptr, I32(align), part_mask, ir.Constant(pty, [0] * n)]))
    while len(loaded) > 1:  # concatenate pairwise
        loaded = [em.b.shuffle_vector(loaded[i], loaded[i + 1],
                                      ir.Constant(ir.VectorType(I32, 2 * _len_of(loaded[i])),
                                                  list(range(2 * _len_of(loaded[i])))))
                  for i in range(0, len(loaded), 2)]
    return loaded[0]


def _constant_part(mask: ir.Constant, start: int, count: int) -> ir.Constant:
    return ir.Constant(ir.VectorType(I1, count), list(mask.constant[start:start + count]))  # pyright: ignore[reportUnknownArgumentType]


def _len_of(v: ir.Value) -> int:
    ty = value_type(v)
    assert isinstance(ty, ir.VectorType)
    return ty.count


def _masked_store(em: FunctionEmitter, value: ir.Value, ptr: ir.Value, sty: ir.VectorType, mask: ir.Value,
                  align: int) -> None:
    parts = _chunks(em, sty)
    n = sty.count // parts
    pty = ir.VectorType(sty.element, n)
    fn = em.declare(f"llvm.masked.store.{intrinsic_suffix(pty)}.{intrinsic_suffix(pty.as_pointer())}", VOID,
                    [pty, pty.as_pointer(), I32, ir.VectorType(I1, n)])
    base = em.b.bitcast(ptr, sty.element.as_pointer())
    for k in range(parts):
        part_ptr = cast(ir.Value, em.b.bitcast(em.b.gep(base, [I64(k * n)]), pty.as_pointer())) if parts > 1 else ptr
        part_value = _part(em, value, k * n, n) if parts > 1 else value
        if parts == 1:
            part_mask = mask
        elif isinstance(mask, ir.Constant):
            part_mask = _constant_part(mask, k * n, n)
        else:
            part_mask = _part(em, mask, k * n, n)
        if single_lane(part_mask) is not None:  # LLVM 22 stores it too wide (``llvm_ir.masked_store``)
            masked_store(em.b, part_value, part_ptr, part_mask, align)
        else:
            em.b.call(fn, [part_value, part_ptr, I32(align), part_mask])


@handles(loop.ScratchOp)
def _scratch(em: FunctionEmitter, op: Operation) -> None:
    """A static ``alloca`` at the top of the entry block of the function being emitted: once
    per call, not per loop iteration; inside a ``loop.parallel`` that is the outlined body,
    so each thread has its own."""
    assert isinstance(op, loop.ScratchOp)
    ty = op.result.type
    assert isinstance(ty, MemRefType)
    elem = storage_type(ty.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    count = prod(ty.get_shape())  # pyright: ignore[reportUnknownArgumentType]
    slot = entry_alloca(em.b, ir.ArrayType(elem, count), name="scratch")
    slot.align = 64  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's __init__ sets None
    em.set(op.result, cast(ir.Value, em.b.bitcast(slot, elem.as_pointer())))


@handles(loop.VLoadOp)
def _vload(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.VLoadOp)
    vty = llvm_type(op.result.type)
    assert isinstance(vty, ir.VectorType)
    sty = _storage_vec(vty)
    ptr = em.b.bitcast(_elem_ptr(em, em.get(op.buffer), em.get(op.offset)), sty.as_pointer())
    mask = _combine_masks(em, _lane_mask(em, op.lanes, vty.count), em.get(op.mask) if op.mask else None)
    align = max(1, sty.element.width // 8) if isinstance(sty.element, ir.IntType) else (8 if sty.element == F64 else 4)
    if mask is None:
        value = em.b.load(ptr, align=align)
    else:
        value = _masked_load(em, cast(ir.Value, ptr), sty, mask, align)
    if sty is not vty:
        value = em.b.icmp_unsigned("!=", value, ir.Constant(sty, [0] * sty.count))
    em.set(op.result, value)


@handles(loop.VStoreOp)
def _vstore(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.VStoreOp)
    value = em.get(op.value)
    vty = value_type(value)
    assert isinstance(vty, ir.VectorType)
    sty = _storage_vec(vty)
    if sty is not vty:
        value = em.b.zext(value, sty)
    ptr = em.b.bitcast(_elem_ptr(em, em.get(op.buffer), em.get(op.offset)), sty.as_pointer())
    mask = _lane_mask(em, op.lanes, vty.count)
    align = max(1, sty.element.width // 8) if isinstance(sty.element, ir.IntType) else (8 if sty.element == F64 else 4)
    if mask is None:
        em.b.store(value, ptr, align=align)
    else:
        _masked_store(em, cast(ir.Value, value), cast(ir.Value, ptr), sty, mask, align)


def _element_count(buffer: SSAValue) -> int:
    """Elements of a memref operand (loop-level buffers are statically shaped)."""
    ty = buffer.type
    return prod(ty.get_shape()) if isinstance(ty, MemRefType) else 2 ** 63


def _vector_gep(em: FunctionEmitter, base: ir.Value, idx: ir.Value, pty: ir.VectorType) -> ir.Value:
    """``getelementptr T, T* base, <W x i32> idx``: a vector of pointers (llvmlite's builder
    only forms scalar GEPs, so the instruction's result type is set here)."""
    instr = ir.instructions.GEPInstr(em.b.block, base, [idx], inbounds=False, name="",
                                     source_etype=base.type.pointee)  # pyright: ignore[reportAttributeAccessIssue]
    instr.type = pty
    em.b._insert(instr)  # pyright: ignore[reportPrivateUsage]
    return instr


#: a gather of lanes ``step`` elements apart, up to this step, is one masked load of the span
#: and a shuffle (a pooling window or a strided slice read along the vectorized dim)
MAX_SPAN_STEP = 4


def _span_step(em: FunctionEmitter, op: loop.VGatherOp, sty: ir.VectorType) -> int | None:
    """The lane step of a gather whose offsets are ``loop.vindex base step s`` with a small
    ``s``, where a masked load of the span is one instruction per register (AVX-512 masks
    every element width; AVX2 only 32/64-bit elements)."""
    owner = op.offsets.owner
    if not isinstance(owner, loop.VIndexOp) or owner.scale is not None:
        return None
    step = int(owner.step.value.data)
    width = sty.element.width if isinstance(sty.element, ir.IntType) else (64 if sty.element == F64 else 32)
    if not 2 <= step <= MAX_SPAN_STEP or (em.vector_bits < 512 and width < 32):
        return None
    return step


def _span_gather(em: FunctionEmitter, op: loop.VGatherOp, sty: ir.VectorType, step: int, mask: ir.Value | None,
                 esize: int) -> ir.Value:
    """Lanes ``base + step*l``: the ``step*W`` elements from ``base`` loaded with only the
    lanes' elements enabled (the others, and masked-off lanes, are never read), then picked."""
    owner = op.offsets.owner
    assert isinstance(owner, loop.VIndexOp)
    count = sty.count
    wide = ir.VectorType(sty.element, step * count)
    lane_mask = mask if mask is not None else ir.Constant(ir.VectorType(I1, count), [1] * count)
    off = ir.Constant(ir.VectorType(I1, count), [0] * count)
    spread = em.b.shuffle_vector(lane_mask, off, ir.Constant(ir.VectorType(I32, step * count),
                                                            [j // step if j % step == 0 else count for j in range(step * count)]))
    ptr = em.b.bitcast(_elem_ptr(em, em.get(op.buffer), em.get(owner.base)), wide.as_pointer())
    loaded = _masked_load(em, cast(ir.Value, ptr), wide, cast(ir.Value, spread), esize)
    return em.b.shuffle_vector(loaded, loaded, ir.Constant(ir.VectorType(I32, count), [step * l for l in range(count)]))


@handles(loop.VGatherOp)
def _vgather(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.VGatherOp)
    tile = em.tiles.get(op)
    if tile is not None:  # a column of a transposed tile (transpose_tiles.py)
        em.set(op.result, tile)
        return
    vty = llvm_type(op.result.type)
    assert isinstance(vty, ir.VectorType)
    sty = _storage_vec(vty)
    base = em.get(op.buffer)
    esize = max(1, sty.element.width // 8) if isinstance(sty.element, ir.IntType) else (8 if sty.element == F64 else 4)
    step = _span_step(em, op, sty)
    if step is not None:
        mask = _combine_masks(em, _lane_mask(em, op.lanes, vty.count), em.get(op.mask) if op.mask else None)
        value = _span_gather(em, op, sty, step, mask, esize)
        if sty is not vty:
            value = em.b.icmp_unsigned("!=", value, ir.Constant(sty, [0] * sty.count))
        em.set(op.result, value)
        return
    offsets = em.get(op.offsets)
    pty = ir.VectorType(sty.element.as_pointer(), vty.count)
    if _element_count(op.buffer) < 2 ** 31:
        # One base pointer plus 32-bit lane indices: x86 selects one vgatherdps per 16
        # lanes instead of two vgatherqps on 64-bit addresses.  (Indices of masked-off
        # lanes may be garbage; truncating them is harmless.)
        idx = llvm_ir.trunc(em.b, offsets, ir.VectorType(I32, vty.count))
        ptrs = _vector_gep(em, base, idx, pty)  # base is a pointer to sty's elements
    else:
        ity = ir.VectorType(I64, vty.count)
        base_int: ir.Value = em.b.ptrtoint(base, I64)  # pyright: ignore[reportAssignmentType]  # llvmlite: decorated IRBuilder ops infer as None
        addr = em.b.add(splat(em.b, base_int, ity), em.b.mul(offsets, ir.Constant(ity, [esize] * vty.count)))
        ptrs = em.b.inttoptr(addr, pty)
    mask = _combine_masks(em, _lane_mask(em, op.lanes, vty.count), em.get(op.mask) if op.mask else None)
    if mask is None:
        mask = ir.Constant(ir.VectorType(I1, vty.count), [1] * vty.count)
    fn = em.declare(f"llvm.masked.gather.{intrinsic_suffix(sty)}.{intrinsic_suffix(pty)}", sty, [pty, I32, value_type(mask), sty])
    value = em.b.call(fn, [ptrs, I32(esize), mask, ir.Constant(sty, [0] * sty.count)])
    if sty is not vty:
        value = em.b.icmp_unsigned("!=", value, ir.Constant(sty, [0] * sty.count))
    em.set(op.result, value)


@handles(loop.CheckIndexOp)
def _check_index(em: FunctionEmitter, op: Operation) -> None:
    """Wrap one negative index, record the site of an out-of-range one, read element 0 instead."""
    assert isinstance(op, loop.CheckIndexOp)
    b = em.b
    v = em.get(op.value)
    size = int(op.size.value.data)
    site = int(op.site.value.data)
    v_ty = value_type(v)
    vec = isinstance(v_ty, ir.VectorType)
    count = v_ty.count if isinstance(v_ty, ir.VectorType) else 1
    ety = v_ty.element if isinstance(v_ty, ir.VectorType) else v_ty
    ty = ir.VectorType(I64, count) if vec else I64
    if ety != I64:
        v = b.sext(v, ty)

    def c(x: int) -> ir.Constant:
        return ir.Constant(ty, [x] * count) if vec else ir.Constant(ty, x)

    # the dimension's size: the op's, or a run-time size (a range build)
    bound: ir.Value = c(size) if op.bound is None else (
        splat(b, em.get(op.bound), ty) if isinstance(ty, ir.VectorType) else em.get(op.bound))
    neg = b.icmp_signed("<", v, c(0))
    w = b.select(neg, b.add(v, bound), v)
    ok = b.and_(b.icmp_signed(">=", w, c(0)), b.icmp_signed("<", w, bound))
    bool_ty = ir.VectorType(I1, count) if vec else I1  # the type of ok
    bad = b.xor(ok, ir.Constant(bool_ty, [1] * count) if vec else ir.Constant(I1, 1))
    if vec:
        mask = _lane_mask(em, op.lanes, count)
        if mask is not None:
            bad = b.and_(bad, mask)
        fn = em.declare(f"llvm.vector.reduce.or.v{count}i1", I1, [bool_ty])
        any_bad = b.call(fn, [bad])
    else:
        any_bad = bad
    with b.if_then(any_bad, likely=False):
        b.store(I64(site), em.status)
    em.set(op.result, b.select(ok, w, c(0)))


__all__ = ["CodegenError"]


@handles(loop.AssertOp)
def _assert(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.AssertOp)
    b = em.b
    ok = em.get(op.cond)
    ok_ty = value_type(ok)
    if isinstance(ok_ty, ir.VectorType):
        bad = b.xor(ok, ir.Constant(ok_ty, [1] * ok_ty.count))
        mask = _lane_mask(em, op.lanes, ok_ty.count)
        if mask is not None:
            bad = b.and_(bad, mask)
        fn = em.declare(f"llvm.vector.reduce.or.v{ok_ty.count}i1", I1, [ok_ty])
        any_bad = b.call(fn, [bad])
    else:
        any_bad = b.xor(ok, ir.Constant(I1, 1))
    with b.if_then(any_bad, likely=False):
        b.store(I64(int(op.site.value.data)), em.status)
