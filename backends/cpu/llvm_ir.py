"""llvmlite helpers shared by the CPU backend's code generators (``codegen/``, ``kernels/``,
``vecmath/``, ``threads.py``): the LLVM types they use, typed forms of the ``IRBuilder``
instructions, and a few building blocks (element pointers, counted loops, conditional updates,
function declarations, prefetches).

llvmlite builds ``IRBuilder.add``/``mul``/``fadd``/... with ``functools.wraps`` decorators
around bodies that hold only a docstring, so a type checker sees them return ``None``.  Each
wrapper here (``add``, ``fmul``, ``udiv``...) emits exactly that one instruction and states
what the builder really returns: the new instruction, an ``ir.Value``.  The helpers that fold
Python ints instead of always emitting an instruction say so in their names (``mul_const``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import cast

from llvmlite import ir

F32 = ir.FloatType()
F64 = ir.DoubleType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32P = F32.as_pointer()
I8P = I8.as_pointer()
I64P = I64.as_pointer()
VOID = ir.VoidType()


def instr(x: object) -> ir.Value:
    """The instruction an llvmlite builder method returns (its decorated methods infer as
    ``None`` for a type checker)."""
    return cast(ir.Value, x)


def value_type(v: ir.Value) -> ir.Type:
    """``v.type``: every llvmlite value has one; the ``ir.Value`` base class does not declare it."""
    return cast(ir.Type, getattr(v, "type"))


# -- one instruction each ------------------------------------------------------------------


def add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.add(x, y))


def sub(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.sub(x, y))


def mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.mul(x, y))


def udiv(b: ir.IRBuilder, x: ir.Value, y: ir.Value, name: str = "") -> ir.Value:
    return instr(b.udiv(x, y, name=name))


def urem(b: ir.IRBuilder, x: ir.Value, y: ir.Value, name: str = "") -> ir.Value:
    return instr(b.urem(x, y, name=name))


def and_(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.and_(x, y))


def or_(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.or_(x, y))


def shl(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.shl(x, y))


def fadd(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.fadd(x, y))


def fsub(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.fsub(x, y))


def fmul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.fmul(x, y))


def fdiv(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return instr(b.fdiv(x, y))


def zext(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    return instr(b.zext(x, ty))


def trunc(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    return instr(b.trunc(x, ty))


# -- i64 index arithmetic --------------------------------------------------------------------


def i64(v: int | ir.Value) -> ir.Value:
    """``v`` as an i64 value (a Python int becomes a constant)."""
    return ir.Constant(I64, v) if isinstance(v, int) else v


def mul_const(b: ir.IRBuilder, a: int | ir.Value, k: int) -> int | ir.Value:
    """``a * k`` for a compile-time ``k``, folded where it can be: a Python int when ``a`` is
    one, ``0`` for ``k == 0``, ``a`` itself for ``k == 1``; otherwise one i64 ``mul``."""
    if isinstance(a, int):
        return a * k
    if k == 0:
        return 0
    if k == 1:
        return a
    return mul(b, a, i64(k))


def gep(b: ir.IRBuilder, ptr: ir.Value, offset: int | ir.Value, name: str = "") -> ir.Value:
    """``ptr + offset`` elements (``offset`` 0 returns ``ptr``)."""
    if isinstance(offset, int) and offset == 0:
        return ptr
    return b.gep(ptr, [i64(offset)], name=name)


# -- control flow ----------------------------------------------------------------------------


@contextmanager
def for_range(
    b: ir.IRBuilder, start: int | ir.Value, stop: int | ir.Value, step: int = 1, name: str = "i"
) -> Iterator[ir.Value]:
    """``for i in range(start, stop, step)`` (``step > 0``); yields ``i`` (i64).

    The body is emitted inside the ``with`` block; it may create blocks.
    """
    if step <= 0:
        raise ValueError("for_range: step must be positive")
    pre = b.block
    fn = b.function
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    start_v, stop_v = i64(start), i64(stop)
    if isinstance(start, int) and isinstance(stop, int):
        if start >= stop:
            b.branch(done)
        else:
            b.branch(body)
    else:
        b.cbranch(b.icmp_signed("<", start_v, stop_v), body, done)
    b.position_at_end(body)
    iv = b.phi(I64, name=name)
    iv.add_incoming(start_v, pre)
    yield iv
    nxt = b.add(iv, i64(step), name=f"{name}.next")
    iv.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, stop_v), body, done)
    b.position_at_end(done)


def counted_loop(
    b: ir.IRBuilder, start: int, stop: int, inits: Sequence[ir.Value],
    body: Callable[[list[ir.Value], ir.Value], list[ir.Value]], name: str = "i",
) -> list[ir.Value]:
    """``for i in range(start, stop)`` (``start < stop``: at least one iteration) carrying
    ``inits`` through ``body(values, i) -> values``; returns the last iteration's values (they
    dominate the exit, so no exit phis are needed)."""
    if not start < stop:
        raise ValueError(f"counted_loop: empty range [{start}, {stop})")
    pre = b.block
    loop = b.function.append_basic_block(f"{name}.body")
    done = b.function.append_basic_block(f"{name}.done")
    b.branch(loop)
    b.position_at_end(loop)
    iv = b.phi(I64, name=name)
    iv.add_incoming(i64(start), pre)
    phis = []
    for init in inits:
        phi = b.phi(value_type(init))
        phi.add_incoming(init, pre)
        phis.append(phi)
    new = body(list(phis), iv)
    latch = b.block
    for phi, value in zip(phis, new, strict=True):
        phi.add_incoming(value, latch)
    nxt = b.add(iv, i64(1), name=f"{name}.next")
    iv.add_incoming(nxt, latch)
    b.cbranch(b.icmp_signed("<", nxt, i64(stop)), loop, done)
    b.position_at_end(done)
    return new


def if_update(
    b: ir.IRBuilder,
    cond: ir.Value,
    values: Sequence[ir.Value],
    update: Callable[[list[ir.Value]], list[ir.Value]],
    name: str = "upd",
) -> list[ir.Value]:
    """``values = update(values) if cond else values`` with phi merging."""
    fn = b.function
    pre = b.block
    then = fn.append_basic_block(f"{name}.then")
    merge = fn.append_basic_block(f"{name}.merge")
    b.cbranch(cond, then, merge)
    b.position_at_end(then)
    new = update(list(values))
    then_end = b.block
    b.branch(merge)
    b.position_at_end(merge)
    out: list[ir.Value] = []
    for old, nv in zip(values, new, strict=True):
        phi = b.phi(value_type(old))
        phi.add_incoming(old, pre)
        phi.add_incoming(nv, then_end)
        out.append(phi)
    return out


# -- declarations ----------------------------------------------------------------------------


def intrinsic_suffix(t: ir.Type) -> str:
    """How an overloaded LLVM intrinsic's name spells the type ``t``: ``f32``, ``f64``, ``i64``,
    ``v16f32``, ``p0v8f32`` (typed pointers)..."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{intrinsic_suffix(t.element)}"
    if isinstance(t, ir.PointerType):
        # typed pointers (from as_pointer) only; their class (_TypedPointerType) is private
        return "p0" + intrinsic_suffix(t.pointee)  # pyright: ignore[reportAttributeAccessIssue]
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    if isinstance(t, ir.FloatType):
        return "f32"
    if isinstance(t, ir.DoubleType):
        return "f64"
    raise TypeError(f"no intrinsic suffix for {t}")


def declare(module: ir.Module, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
    """The function ``name`` of ``module``, declared as ``ret(args)`` if the module lacks it
    (an existing declaration is returned as it is)."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name=name)
    assert isinstance(fn, ir.Function)
    return fn


def constant_global(module: ir.Module, name: str, ty: ir.Type, value: Callable[[], ir.Constant]) -> ir.GlobalVariable:
    """``module``'s internal, 64-byte aligned constant ``name`` of type ``ty``, initialized with
    ``value()`` when the module lacks it (an existing one is returned as it is)."""
    existing = module.globals.get(name)
    if isinstance(existing, ir.GlobalVariable):
        return existing
    g = ir.GlobalVariable(module, ty, name=name)
    g.linkage = "internal"
    g.global_constant = True
    g.initializer = value()  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's GlobalVariable.__init__ sets it to None
    g.align = 64  # pyright: ignore[reportAttributeAccessIssue]
    return g


@lru_cache(maxsize=64)
def bytes_constant(data: bytes) -> ir.Constant:
    """``data`` as an ``[N x i8]`` constant, formatted once: a 128 KB activation table takes
    26 ms to format, each time a module holding it is printed."""
    ty = ir.ArrayType(I8, len(data))
    return ir.FormattedConstant(ty, ir.Constant(ty, bytearray(data)).get_reference())


def masked_load(b: ir.IRBuilder, ptr: ir.Value, mask: ir.Value, vty: ir.VectorType, align: int) -> ir.Value:
    """``vty`` at ``ptr`` where ``mask`` is set (``llvm.masked.load``: the others read as 0, not read)."""
    suffix = intrinsic_suffix(vty)
    fn = declare(b.module, f"llvm.masked.load.{suffix}.p0{suffix}", vty,
                 [vty.as_pointer(), ir.IntType(32), value_type(mask), vty])
    return instr(b.call(fn, [instr(b.bitcast(ptr, vty.as_pointer())), ir.Constant(ir.IntType(32), align), mask,
                             ir.Constant(vty, None)]))


def single_lane(mask: ir.Value) -> int | None:
    """The one set lane of a constant mask, or None (not a constant, or not one lane)."""
    if not isinstance(mask, ir.Constant) or not isinstance(mask.constant, list):
        return None
    lanes = [i for i, v in enumerate(mask.constant) if (v.constant if isinstance(v, ir.Constant) else v)]
    return lanes[0] if len(lanes) == 1 else None


def masked_store(b: ir.IRBuilder, x: ir.Value, ptr: ir.Value, mask: ir.Value, align: int) -> None:
    """The lanes of ``x`` where ``mask`` is set at ``ptr`` (``llvm.masked.store``: the others untouched).

    A constant mask of one lane is a scalar store of that lane: LLVM 22 (llvmlite 0.50) turns
    ``llvm.masked.store`` of a truncated vector (``trunc <16 x i32> to <16 x i16>``: a bf16
    rounding, an int -> int8 cast) under a one-lane constant mask into a store of the element
    before its truncation, 4 bytes for 2 or 1, over the next elements (a 33-wide bf16 row's
    last lane wrote 0 over the next row's first value: ``cat`` of bf16 casts of int32 rows)."""
    vty = value_type(x)
    assert isinstance(vty, ir.VectorType)
    lane = single_lane(mask)
    if lane is not None:
        element = b.gep(b.bitcast(ptr, vty.element.as_pointer()), [ir.Constant(ir.IntType(64), lane)])
        b.store(b.extract_element(x, ir.Constant(ir.IntType(32), lane)), element, align=align)
        return
    suffix = intrinsic_suffix(vty)
    fn = declare(b.module, f"llvm.masked.store.{suffix}.p0{suffix}", ir.VoidType(),
                 [vty, vty.as_pointer(), ir.IntType(32), value_type(mask)])
    b.call(fn, [x, instr(b.bitcast(ptr, vty.as_pointer())), ir.Constant(ir.IntType(32), align), mask])


def prefetch(module: ir.Module, b: ir.IRBuilder, ptr: ir.Value, *, write: bool = False, locality: int = 3) -> None:
    """``llvm.prefetch`` of the line at ``ptr`` for reading or writing; locality 3 = all cache
    levels (``prefetcht0``), 2 = L2 (``prefetcht1``)."""
    fn = declare(module, "llvm.prefetch.p0i8", VOID, [I8P, I32, I32, I32])
    b.call(fn, [b.bitcast(ptr, I8P), I32(1 if write else 0), I32(locality), I32(1)])


def splat(b: ir.IRBuilder, x: ir.Value, ty: ir.VectorType) -> ir.Value:
    """The scalar ``x`` in every lane of ``ty`` (an insert and a zero shuffle)."""
    undef = ir.Constant(ty, ir.Undefined)
    v = instr(b.insert_element(undef, x, I32(0)))
    return instr(b.shuffle_vector(v, undef, ir.Constant(ir.VectorType(I32, ty.count), [0] * ty.count)))


def splat_constant(ty: ir.Type, value: int | float) -> ir.Constant:
    """``value`` as a constant of ``ty``: every lane of a vector type, or the scalar."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)


class NamedType(ir.Type):
    """An LLVM type llvmlite has no class for, spelled as LLVM spells it (``x86_amx``,
    ``<32 x bfloat>``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _to_string(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedType) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("NamedType", self.text))


class _LoopId(ir.MDValue):
    """A loop's ``!llvm.loop`` node: LLVM takes a node as a loop id only when its first operand
    is the node itself.  Identity equality: no two loops may share one."""

    def __init__(self, module: ir.Module, options: Sequence[ir.Value]) -> None:
        super().__init__(module, [], name=str(len(module.metadata)))  # pyright: ignore[reportArgumentType]
        self.operands = (self, *options)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def disable_loop_vectorizer(module: ir.Module, latch: ir.Instruction) -> None:
    """Mark the loop whose back edge is ``latch`` so LLVM's loop vectorizer leaves it alone."""
    option = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"), ir.Constant(I1, 0)])
    latch.set_metadata("llvm.loop", _LoopId(module, [option]))
