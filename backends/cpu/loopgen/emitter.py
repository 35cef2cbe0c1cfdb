"""Emitting one kernel's element DAG as ``loop``/``arith`` ops, scalar or vector.

Inside a vector loop (``scope.vector``), a value that depends on the loop's variable is
emitted as a ``vector<W x T>`` (one lane per element); a value that does not is
emitted once as a scalar in an outer scope and broadcast.  A load whose offset moves
by 1 per lane is a ``loop.vload`` (masked by the tail's lane count and by padding
guards); by 0, a scalar load and broadcast; by anything else (strides, flips,
reshapes of transposes, indirect indices), a ``loop.vgather``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from xdsl.dialects import arith, math, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.backends.cpu.loopgen.scope import Scope
from ziggurat.backends.cpu.loopgen.types import INDEX, element, value_type
from ziggurat.backends.cpu.lowering.index import FloorDiv, IndexExpr, Indirect, Mod, Var, flat_index
from ziggurat.backends.cpu.lowering.values import (
    Assert,
    Binary,
    Buffer,
    Cast,
    Compare,
    Const,
    Fma,
    IndexValue,
    Load,
    LoweringBug,
    ReduceRef,
    Select,
    Unary,
    Value,
)
from ziggurat.dialects import loop

_FLOAT_CMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_INT_CMP = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_BOOL_CMP = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


class KernelEmitter:
    """Emits values into the scopes of one kernel (see the module doc)."""

    def __init__(self, buffers: dict[Buffer, SSAValue], width: int,
                 reduction_emitter: Callable[[KernelEmitter, ReduceRef, Scope], SSAValue] | None = None,
                 masked_vectors: bool = False) -> None:
        self.buffers = buffers
        self.width = width
        self.reduction_emitter = reduction_emitter
        #: every vector loop masks its lanes, whether or not its extent is a multiple of the
        #: width (a range schedule: the loop's code may not depend on the size; a full
        #: iteration's constant lanes fold the masks away)
        self.masked_vectors = masked_vectors

    # -- helpers -----------------------------------------------------------------------
    def put(self, scope: Scope, op: Operation, key: Any = None) -> SSAValue:
        if key is not None:
            hit = scope.lookup(key)
            if hit is not None:
                op.erase(safe_erase=False)
                return hit
        scope.insert(op)
        result = op.results[0]
        if key is not None:
            scope.memo[key] = result
        return result

    def is_vector(self, value: Value | IndexExpr, scope: Scope) -> bool:
        vec = scope.vector
        if vec is None:
            return False
        deps = value.index_vars() if isinstance(value, Value) else value.vars()
        return vec.var in deps

    def const(self, scope: Scope, value: bool | int | float, ty: Attribute) -> SSAValue:
        root = list(scope.chain())[-1]
        if isinstance(ty, VectorType):
            elem = ty.element_type  # pyright: ignore[reportUnknownMemberType]
            scalar = self.const(scope, value, elem)  # pyright: ignore[reportUnknownArgumentType]
            return self.put(root, vector.BroadcastOp(scalar, ty), ("bcast", scalar))
        if isinstance(ty, IndexType) or isinstance(ty, IntegerType):
            if isinstance(ty, IntegerType) and ty.width.data == 1:
                attr: Attribute = IntegerAttr(1 if value else 0, ty)
            else:
                attr = IntegerAttr(int(value), ty)
            return self.put(root, arith.ConstantOp(attr), ("const", ty, int(value)))
        if not isinstance(ty, AnyFloat):
            raise TypeError(f"loopgen constant of unsupported type {ty}")
        number = float(value)
        if isinstance(ty, BFloat16Type | Float16Type):
            # rounded to float32 first, as c10::BFloat16 and c10::Half convert a number (xDSL's
            # FloatAttr rounds straight to the type: 1 + 2**-8 + 2**-40 was bf16's 1.0078125,
            # eager's 1.0); past float32's range an infinity, as in c10
            number = float(torch.tensor(number, dtype=torch.float32))
        attr = FloatAttr(number, ty)
        return self.put(root, arith.ConstantOp(attr), ("const", ty, repr(number)))

    def broadcast(self, scope: Scope, scalar: SSAValue) -> SSAValue:
        """``scalar`` as a vector, emitted where ``scalar`` is defined (hoisted)."""
        ty = VectorType(scalar.type, [self.width])  # pyright: ignore[reportArgumentType]
        owner = self._scope_of(scope, scalar)
        return self.put(owner, vector.BroadcastOp(scalar, ty), ("bcast", scalar))

    def _scope_of(self, scope: Scope, value: SSAValue) -> Scope:
        """The scope (in ``scope``'s chain) whose block defines ``value``."""
        owner = value.owner
        block = owner if not isinstance(owner, Operation) else owner.parent_block()
        for s in scope.chain():
            if s.block is block:
                return s
        return scope

    # -- indices -------------------------------------------------------------------------
    def index(self, expr: IndexExpr, scope: Scope) -> SSAValue:
        """A scalar ``index`` (the first lane's value inside a vector loop)."""
        target = scope.target_for(expr.vars())
        key = ("index", expr)
        hit = target.lookup(key)
        if hit is not None:
            return hit
        terms: list[tuple[SSAValue, int]] = []
        for atom, c in expr.terms:
            if isinstance(atom, Var):
                terms.append((target.iv(atom), c))
            else:
                terms.append((self._atom(atom, target), c))
        if len(terms) == 1 and terms[0][1] == 1 and expr.const == 0:
            result = terms[0][0]
            target.memo[key] = result
            return result
        return self.put(target, loop.OffsetOp(terms, expr.const), key)

    def _atom(self, atom: Any, scope: Scope) -> SSAValue:
        if isinstance(atom, FloorDiv | Mod):
            inner = self.index(atom.inner, scope)
            lo, _ = atom.inner.range()
            return self._divrem(scope, inner, atom.d, isinstance(atom, FloorDiv), lo >= 0)
        if isinstance(atom, Indirect):
            value = self.emit(atom.node, scope)
            if value.type != i64:
                value = self.put(scope, _int_cast(value, i64, atom.node.dtype), ("icast", value, i64))
            return self.put(scope, loop.CheckIndexOp(value, atom.size, atom.site), ("check", value, atom.size, atom.site))
        raise LoweringBug(f"unknown index atom {atom!r}")

    def _divrem_i32(self, scope: Scope, inner: SSAValue, d: int, quotient: bool) -> SSAValue:
        """``inner // d`` or ``inner % d`` of a non-negative ``vector<W x i64>`` below 2^31, in
        i32 lanes: x86 has no vector 64-bit multiply-high, so LLVM turns an i64 division by a
        constant into W scalar multiplies; in i32 lanes it is two ``vpmuludq`` and a shuffle
        (an NCHW -> padded-NHWC copy of a 3-channel image: ``j // 3``, ``j % 3`` per lane)."""
        v32, v64 = VectorType(i32, [self.width]), VectorType(i64, [self.width])
        narrow = self.put(scope, make_cast("trunci", inner, v32), ("trunc", inner, v32))
        dc = self.const(scope, d, v32)
        op: Operation = arith.DivUIOp(narrow, dc) if quotient else arith.RemUIOp(narrow, dc)
        r = self.put(scope, op, (type(op).__name__, narrow, dc))
        return self.put(scope, make_cast("extui", r, v64), ("zext", r, v64))

    def _divrem(self, scope: Scope, inner: SSAValue, d: int, quotient: bool, nonneg: bool) -> SSAValue:
        """Floor ``inner // d`` or ``inner % d`` of an index or a ``vector<W x i64>``."""
        dc = self.const(scope, d, inner.type)
        if quotient:
            op: Operation = arith.DivUIOp(inner, dc) if nonneg else arith.FloorDivSIOp(inner, dc)
            return self.put(scope, op, (type(op).__name__, inner, dc))
        if nonneg:
            return self.put(scope, arith.RemUIOp(inner, dc), ("remui", inner, dc))
        q = self.put(scope, arith.FloorDivSIOp(inner, dc), ("floordiv", inner, dc))
        qd = self.put(scope, arith.MuliOp(q, dc), ("muli", q, dc))
        return self.put(scope, arith.SubiOp(inner, qd), ("subi", inner, qd))

    def index_vector(self, expr: IndexExpr, scope: Scope) -> SSAValue:
        """``vector<W x i64>`` of the expression's value in every lane of the vector loop."""
        vec = scope.vector
        assert vec is not None
        target = scope.target_for(expr.vars())
        key = ("vindex", expr)
        hit = target.lookup(key)
        if hit is not None:
            return hit
        c = expr.coeff(vec.var)
        if c is not None:
            base = self.index(expr, target)
            return self.put(target, loop.VIndexOp(base, c, self.width), key)
        # non-affine in the vector variable: build it lane-wise
        vty = VectorType(i64, [self.width])
        scalar_part = IndexExpr.of(expr.const)
        parts: list[SSAValue] = []
        for atom, k in expr.terms:
            if vec.var not in atom.vars():
                scalar_part = scalar_part + IndexExpr.of(atom) * k
                continue
            if isinstance(atom, Var):
                lane = self.index_vector(IndexExpr.of(atom) * k, target)
                parts.append(lane)
                continue
            if isinstance(atom, FloorDiv | Mod):
                inner = self.index_vector(atom.inner, target)
                lo, hi = atom.inner.range()
                if lo >= 0 and hi + self.width < 2 ** 31 and atom.d > 0:
                    val = self._divrem_i32(target, inner, atom.d, isinstance(atom, FloorDiv))
                else:
                    val = self._divrem(target, inner, atom.d, isinstance(atom, FloorDiv), lo >= 0)
            elif isinstance(atom, Indirect):
                raw = self.emit(atom.node, target, want_vector=True)
                if raw.type != vty:
                    raw = self.put(target, _int_cast(raw, vty, atom.node.dtype), ("icast", raw, vty))
                lanes = vec.lanes
                val = self.put(target, loop.CheckIndexOp(raw, atom.size, atom.site, lanes),
                               ("check", raw, atom.size, atom.site))
            else:
                raise LoweringBug(f"unknown index atom {atom!r}")
            if k != 1:
                kc = self.const(target, k, vty)
                val = self.put(target, arith.MuliOp(val, kc), ("muli", val, kc))
            parts.append(val)
        s = self.index(scalar_part, target)
        s64 = self.put(target, arith.IndexCastOp(s, i64), ("index_cast", s, i64))
        acc = self.broadcast(target, s64)
        for p in parts:
            acc = self.put(target, arith.AddiOp(acc, p), ("addi", acc, p))
        target.memo[key] = acc
        return acc

    # -- values --------------------------------------------------------------------------
    def emit(self, value: Value, scope: Scope, want_vector: bool = False) -> SSAValue:
        target = scope.target_for(value.index_vars())
        vec = self.is_vector(value, target)
        if isinstance(value, ReduceRef):
            key: tuple[object, ...] = ("reduce", value.reduction.uid, value.out)
        else:
            key = ("value", value.uid)
        result = target.lookup(key)
        if result is None:
            result = self._emit(value, target, vec)
            target.memo[key] = result
        if want_vector and not vec:
            return self.broadcast(scope, result)
        return result

    def _emit(self, value: Value, scope: Scope, vec: bool) -> SSAValue:
        ty = value_type(value.dtype, self.width if vec else None)
        if isinstance(value, Const):
            return self.const(scope, value.value, ty)
        if isinstance(value, IndexValue):
            if vec:
                return self.index_vector(value.expr, scope)
            idx = self.index(value.expr, scope)
            return self.put(scope, arith.IndexCastOp(idx, i64), ("index_cast", idx, i64))
        if isinstance(value, Load):
            return self._load(value, scope, vec)
        if isinstance(value, Assert):
            ok = self.emit(value.ok, scope, want_vector=vec)
            lanes = scope.vector.lanes if vec and scope.vector is not None else None
            scope.insert(loop.AssertOp(ok, value.site, lanes))
            return self.emit(value.x, scope, want_vector=vec)
        if isinstance(value, ReduceRef):
            if self.reduction_emitter is None:
                raise LoweringBug("a reduction outside a kernel that can compute it")
            return self.reduction_emitter(self, value, scope)
        operands = [self.emit(c, scope, want_vector=vec) for c in value.children()]
        if isinstance(value, Unary):
            op: Operation = loop.UnaryOp(value.kind, operands[0], dict(value.params), ty)
            return self.put(scope, op, ("unary", value.kind, value.params, operands[0], ty))
        if isinstance(value, Binary):
            return self._binary(value, operands[0], operands[1], scope)
        if isinstance(value, Fma):
            a, b, c = operands
            return self.put(scope, math.FmaOp(a, b, c), ("fma", a, b, c))
        if isinstance(value, Compare):
            a, b = operands
            dtype = value.a.dtype
            if dtype.is_floating_point:
                op = make_cmp(_FLOAT_CMP[value.pred], a, b)
            else:
                op = make_cmp((_BOOL_CMP if dtype == torch.bool else _INT_CMP)[value.pred], a, b)
            return self.put(scope, op, ("cmp", value.pred, a, b))
        if isinstance(value, Select):
            c, a, b = operands
            return self.put(scope, make_select(c, a, b), ("select", c, a, b))
        if isinstance(value, Cast):
            return self.cast_ssa(operands[0], value.x.dtype, value.dtype, scope, vec)
        raise LoweringBug(f"cannot emit {type(value).__name__}")

    def _binary(self, value: Binary, a: SSAValue, b: SSAValue, scope: Scope) -> SSAValue:
        dtype = value.dtype
        op_name = value.op
        if dtype.is_floating_point:
            ctor: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
                "add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
                "max": arith.MaximumfOp, "min": arith.MinimumfOp, "fmax": arith.MaxnumfOp,
                "fmin": arith.MinnumfOp, "copysign": math.CopySignOp,
            }
        elif dtype == torch.bool:
            ctor = {"add": arith.OrIOp, "or": arith.OrIOp, "max": arith.OrIOp, "mul": arith.AndIOp,
                    "and": arith.AndIOp, "min": arith.AndIOp, "xor": arith.XOrIOp, "sub": arith.XOrIOp}
        else:
            ctor = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "max": arith.MaxSIOp,
                    "min": arith.MinSIOp, "and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp,
                    "shl": arith.ShLIOp, "shr": arith.ShRSIOp}
            if op_name in ("floordiv", "mod", "div"):
                return self._int_division(op_name, a, b, scope)
        make = ctor.get(op_name)
        if make is None:
            raise LoweringBug(f"binary {op_name} on {dtype} reaches code generation")
        return self.put(scope, make(a, b), ("binary", op_name, a, b))

    def _int_division(self, kind: str, a: SSAValue, b: SSAValue, scope: Scope) -> SSAValue:
        """Floor division / floor modulo of integers.  The two divisors x86's ``idiv`` traps on
        never reach it: a zero divisor divides by 1 instead (a run-time check reports it), and
        ``-1`` divides by 1 and negates (``INT_MIN // -1`` wraps to ``INT_MIN`` as in torch;
        the remainder by -1 is 0)."""
        zero = self.const(scope, 0, a.type)
        one = self.const(scope, 1, a.type)
        minus_one = self.const(scope, -1, a.type)
        is_zero = self.put(scope, make_cmp("eq", b, zero), ("cmp", "eq", b, zero))
        is_m1 = self.put(scope, make_cmp("eq", b, minus_one), ("cmp", "eq", b, minus_one))
        trap = self.put(scope, arith.OrIOp(is_zero, is_m1), ("binary", "or", is_zero, is_m1))
        safe = self.put(scope, make_select(trap, one, b), ("select", trap, one, b))
        if kind in ("floordiv", "div"):
            q = self.put(scope, arith.FloorDivSIOp(a, safe), ("floordivsi", a, safe))
            neg = self.put(scope, arith.SubiOp(zero, a), ("binary", "sub", zero, a))
            return self.put(scope, make_select(is_m1, neg, q), ("select", is_m1, neg, q))
        r = self.put(scope, arith.RemSIOp(a, safe), ("remsi", a, safe))
        r_neg = self.put(scope, make_cmp("slt", r, zero), ("cmp", "slt", r, zero))
        b_neg = self.put(scope, make_cmp("slt", safe, zero), ("cmp", "slt", safe, zero))
        r_nz = self.put(scope, make_cmp("ne", r, zero), ("cmp", "ne", r, zero))
        differ = self.put(scope, arith.XOrIOp(r_neg, b_neg), ("binary", "xor", r_neg, b_neg))
        fix = self.put(scope, arith.AndIOp(differ, r_nz), ("binary", "and", differ, r_nz))
        shifted = self.put(scope, arith.AddiOp(r, safe), ("binary", "add", r, safe))
        return self.put(scope, make_select(fix, shifted, r), ("select", fix, shifted, r))

    def cast_ssa(self, x: SSAValue, src: torch.dtype, dst: torch.dtype, scope: Scope, vec: bool) -> SSAValue:
        if src == dst:
            return x
        ty = value_type(dst, self.width if vec else None)
        key = ("cast", x, ty)
        if dst == torch.bool:
            zero = self.const(scope, 0, x.type)
            op: Operation = make_cmp("une", x, zero) if src.is_floating_point else make_cmp("ne", x, zero)
            return self.put(scope, op, key)
        if src.is_floating_point and dst.is_floating_point:
            op = make_cast("extf" if dst.itemsize > src.itemsize else "truncf", x, ty)
        elif src.is_floating_point and dst == torch.uint8:
            # integers of [0, 255] only (``driver.is_quantized_integers_cast``): through int32
            wide = self._float_to_int(x, torch.int32, value_type(torch.int32, self.width if vec else None), scope)
            op = _int_cast(wide, ty, torch.int32)
        elif src.is_floating_point:
            return self._float_to_int(x, dst, ty, scope)
        elif dst.is_floating_point:
            op = make_cast("uitofp" if src == torch.bool else "sitofp", x, ty)
        else:
            op = _int_cast(x, ty, src)
        return self.put(scope, op, key)

    def _float_to_int(self, x: SSAValue, dst: torch.dtype, ty: Attribute, scope: Scope) -> SSAValue:
        """Truncation toward zero, defined for every input: LLVM's ``fptosi`` is poison outside
        the integer's range (NaN, infinities, 1e19 -> int64), and a poison value reaching a
        bounds check lets LLVM drop the check.  Out of range gives the integer minimum, as x86's
        ``cvtt*`` instructions and therefore eager on this host do."""
        bits = dst.itemsize * 8
        lo = self.const(scope, -(2.0 ** (bits - 1)), x.type)
        hi = self.const(scope, 2.0 ** (bits - 1), x.type)
        ge = self.put(scope, make_cmp("oge", x, lo), ("cmp", "oge", x, lo))
        lt = self.put(scope, make_cmp("olt", x, hi), ("cmp", "olt", x, hi))
        ok = self.put(scope, arith.AndIOp(ge, lt), ("binary", "and", ge, lt))
        raw = self.put(scope, make_cast("fptosi", x, ty), ("fptosi", x, ty))
        lowest = self.const(scope, -(2 ** (bits - 1)), ty)
        return self.put(scope, make_select(ok, raw, lowest), ("select", ok, raw, lowest))

    # -- loads ---------------------------------------------------------------------------
    def buffer(self, buf: Buffer) -> SSAValue:
        try:
            return self.buffers[buf]
        except KeyError:
            raise LoweringBug(f"kernel reads {buf.name}, which is not among its operands") from None

    def _guard(self, load: Load, scope: Scope, vec: bool) -> SSAValue | None:
        """i1 (or vector<W x i1>) condition that every guarded subscript is in range."""
        cond: SSAValue | None = None
        for d in load.guards:
            s = load.subs[d]
            n = load.buffer.shape[d]
            lo, hi = s.range()
            lane = vec and self.is_vector(s, scope)
            if lane:
                val = self.index_vector(s, scope)
                ty: Attribute = val.type
            else:
                val = self.index(s, scope)
                ty = INDEX
            for pred, bound, needed in (("sge", 0, lo < 0), ("slt", n, hi >= n)):
                if not needed:
                    continue
                c = self.const(scope, bound, ty)
                t = scope.target_for(s.vars())
                part = self.put(t, make_cmp(pred, val, c), ("cmp", pred, val, c))
                if vec and not lane:
                    part = self.broadcast(scope, part)
                cond = part if cond is None else self.put(scope, arith.AndIOp(cond, part), ("binary", "and", cond, part))
        return cond

    def _load(self, load: Load, scope: Scope, vec: bool) -> SSAValue:
        buf = self.buffer(load.buffer)
        flat = flat_index(load.subs, load.buffer.shape)
        cond = self._guard(load, scope, vec)
        if not vec:
            offset = self.index(flat, scope)
            if cond is not None:
                zero = self.const(scope, 0, INDEX)
                offset = self.put(scope, make_select(cond, offset, zero), ("select", cond, offset, zero))
            result = self.put(scope, loop.LoadOp(buf, offset), ("load", buf, offset))
            if cond is not None:
                other = self.const(scope, load.other, result.type)
                result = self.put(scope, make_select(cond, result, other), ("select", cond, result, other))
            return result
        vecinfo = scope.vector
        assert vecinfo is not None
        step = lane_step(flat, vecinfo.var, self.width)
        lanes = vecinfo.lanes if _needs_lanes(vecinfo) else None
        if step == 1:
            offset = self.index(flat, scope)
            op: Operation = loop.VLoadOp(buf, offset, self.width, lanes, cond)
            key = ("vload", buf, offset, lanes, cond)
        else:
            offsets = self.index_vector(flat, scope)
            op = loop.VGatherOp(buf, offsets, lanes, cond)
            key = ("vgather", buf, offsets, lanes, cond)
        result = self.put(scope, op, key)
        if cond is not None and load.other != 0:
            other = self.const(scope, load.other, result.type)
            result = self.put(scope, make_select(cond, result, other), ("select", cond, result, other))
        return result


def lane_step(flat: IndexExpr, var: Var, width: int) -> int | None:
    """How far ``flat`` moves per lane of a vector loop over ``var`` (which starts every
    vector at a multiple of ``width``), or None when that is not one constant.

    Besides affine terms this sees through ``(var + r) // d`` and ``(var + r) % d`` with
    ``width | d`` and ``r`` a multiple of ``width``: inside one vector such a quotient is
    uniform and such a remainder moves by 1, so the head merge of attention
    (``[heads, seq, dh] -> [seq, heads * dh]``, index ``(j // dh) * seq * dh + j % dh``)
    is a plain vector load instead of a gather."""
    step = 0
    for atom, c in flat.terms:
        if atom is var:
            step += c
        elif var in atom.vars():
            if not isinstance(atom, FloorDiv | Mod) or atom.d % width != 0 or atom.inner.coeff(var) != 1:
                return None
            rest = atom.inner.without(var)
            if rest.const % width != 0 or any(k % width != 0 for _, k in rest.terms):
                return None
            step += c if isinstance(atom, Mod) else 0
    return step


_ARITH_CASTS: dict[str, Any] = {
    "sitofp": arith.SIToFPOp, "uitofp": arith.UIToFPOp, "fptosi": arith.FPToSIOp, "extsi": arith.ExtSIOp,
    "extui": arith.ExtUIOp, "trunci": arith.TruncIOp, "extf": arith.ExtFOp, "truncf": arith.TruncFOp,
}


def make_cmp(pred: str, a: SSAValue, b: SSAValue) -> Operation:
    """A comparison: ``arith.cmpf``/``cmpi`` on scalars, ``loop.cmp`` on vectors."""
    if isinstance(a.type, VectorType):
        return loop.CmpOp(pred, a, b)
    if isinstance(a.type, IntegerType | IndexType):
        return arith.CmpiOp(a, b, pred)
    return arith.CmpfOp(a, b, pred)


def make_select(c: SSAValue, a: SSAValue, b: SSAValue) -> Operation:
    """``arith.select`` on scalars, ``loop.select`` on vectors."""
    if isinstance(a.type, VectorType):
        return loop.SelectOp(c, a, b)
    return arith.SelectOp(c, a, b)


def make_cast(kind: str, x: SSAValue, ty: Attribute) -> Operation:
    """An ``arith`` cast on scalars, ``loop.cast`` on vectors."""
    if isinstance(x.type, VectorType):
        return loop.CastOp(kind, x, ty)
    return _ARITH_CASTS[kind](x, ty)


def _needs_lanes(vec: Any) -> bool:
    return vec.lanes is not None


def _int_cast(x: SSAValue, ty: Attribute, src: torch.dtype) -> Operation:
    src_elem = x.type.element_type if isinstance(x.type, VectorType) else x.type  # pyright: ignore
    dst_elem = ty.element_type if isinstance(ty, VectorType) else ty  # pyright: ignore
    assert isinstance(src_elem, IntegerType) and isinstance(dst_elem, IntegerType)
    if dst_elem.width.data > src_elem.width.data:
        return make_cast("extui" if src == torch.bool else "extsi", x, ty)
    return make_cast("trunci", x, ty)


def element_type_of(dtype: torch.dtype) -> Attribute:
    return element(dtype)


__all__ = ["KernelEmitter", "DenseIntOrFPElementsAttr", "i1"]

