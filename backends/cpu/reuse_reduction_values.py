"""``reuse-reduction-values``: a transcendental that a kernel computes per element in one
vector loop and again, identically, in a later loop over the same row is computed once,
kept in a row scratch (``loop.scratch``) and read back.

    ziggurat-opt model.mlir -p 'convert-torch-to-loop,reuse-reduction-values'

A softmax row is three loops: the max, the sum of ``exp(x - max)``, then the output
``exp(x - max) * (1 / sum)``.  The output loop recomputes every ``exp``; eager keeps them
(ATen's vectorized softmax writes the exponentials, then scales them).  Here the sum loop
also stores its ``exp`` vector into a scratch row, and the output loop loads it::

    %s = loop.scratch : memref<128xf32>
    %sum = loop.vfor %r, %lanes = 0 to 128 step 16 iter_args(...) {
      ... %e = loop.unary "exp"(%d) ...
      loop.vstore %e, %s[%r] lanes(%lanes)            // added
    }
    loop.vfor %i, %lanes2 = 0 to 128 step 16 {
      %e2 = loop.vload %s[%i] lanes(%lanes2)          // was: the loads, the sub, the exp
      ...
    }

The rewrite is exact: the value read back is the one the earlier loop computed from the same
loads by the same ops.  It applies where all of these hold (anything else is left alone):

* both loops are ``loop.vfor`` ops of one block, with the same static bounds and step, the
  later one without carried values or nested regions;
* the kept value is computed by pure ops (``arith``, ``vector.broadcast``, ``loop.unary``,
  ``loop.cmp``/``select``/``cast``, index arithmetic) and loads of buffers that the kernel
  never writes (a kernel's buffers do not alias: its function's arguments are ``noalias``),
  at the same offsets relative to each loop's induction variable;
* it contains a ``loop.unary`` that is not a cheap one (``abs``, ``neg``, rounding...);
* the row is at most :data:`~ziggurat.dialects.loop.memory.MAX_SCRATCH_BYTES`.

The CPU backend runs it on every build (``CpuBackend.build``), after a range build's symbolic
sizes are in place: a loop whose bound is a run-time size keeps its recomputation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp, VectorType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from ziggurat.dialects import loop
from ziggurat.dialects.loop.memory import MAX_SCRATCH_BYTES

#: ``loop.unary`` kinds a load from the scratch would not beat (one or two instructions).
CHEAP_UNARIES = frozenset({"abs", "neg", "relu", "floor", "ceil", "round", "trunc", "sign", "frac",
                           "logical_not", "bitwise_not", "square", "reciprocal", "sqrt", "rsqrt"})

#: Ops a kept value may be computed by, besides loads: pure, and without regions.
_PURE = (loop.UnaryOp, loop.CmpOp, loop.SelectOp, loop.CastOp, loop.OffsetOp, loop.VIndexOp,
         vector.BroadcastOp)
_LOADS = (loop.VLoadOp, loop.VGatherOp, loop.LoadOp)

#: At most this many values kept per pair of loops (each one a scratch row).
MAX_KEPT_PER_LOOP = 2


def _computes(op: Operation) -> bool:
    return isinstance(op, _PURE + _LOADS) or (op.dialect_name() == "arith" and not op.regions)


@dataclass
class _Match:
    """Which value of the earlier loop ``first`` each value of the later loop ``later`` equals."""

    first: loop.VForOp
    later: loop.VForOp
    written: frozenset[SSAValue]
    equal: dict[SSAValue, SSAValue | None] = field(default_factory=dict[SSAValue, "SSAValue | None"])

    def value(self, v: SSAValue) -> SSAValue | None:
        """The value of ``first`` equal to ``v`` of ``later`` at every iteration (None: none)."""
        if v in self.equal:
            return self.equal[v]
        self.equal[v] = None  # no cycles in SSA, but keep a failed lookup cheap
        found = self._find(v)
        self.equal[v] = found
        return found

    def _find(self, v: SSAValue) -> SSAValue | None:
        later_args = self.later.body.block.args
        if isinstance(v, BlockArgument) and v.owner is self.later.body.block:
            # the induction variable and the lane count; carried values match nothing
            return self.first.body.block.args[v.index] if v.index < 2 else None
        owner = v.owner
        if not isinstance(owner, Operation) or owner.parent_block() is not self.later.body.block:
            return v if v not in later_args else None  # defined outside both loops: itself
        if not _computes(owner) or (isinstance(owner, _LOADS) and owner.operands[0] in self.written):
            return None
        assert isinstance(v, OpResult)
        for candidate in self.first.body.block.ops:
            if candidate.name == owner.name and self._same(owner, candidate):
                return candidate.results[v.index]
        return None

    def _same(self, op: Operation, candidate: Operation) -> bool:
        if isinstance(op, loop.OffsetOp) and isinstance(candidate, loop.OffsetOp):
            return op.const == candidate.const and self._same_terms(op, candidate)
        if len(op.operands) != len(candidate.operands) or [r.type for r in op.results] != \
                [r.type for r in candidate.results] or op.properties != candidate.properties or \
                op.attributes != candidate.attributes:
            return False
        return all(self.value(a) is b for a, b in zip(op.operands, candidate.operands, strict=True))

    def _same_terms(self, op: loop.OffsetOp, candidate: loop.OffsetOp) -> bool:
        """The same affine sum, its terms in any order."""
        ours: dict[SSAValue, int] = {}
        for index, coeff in zip(op.indices, op.coefficients, strict=True):
            mapped = self.value(index)
            if mapped is None:
                return False
            ours[mapped] = ours.get(mapped, 0) + coeff
        theirs: dict[SSAValue, int] = {}
        for index, coeff in zip(candidate.indices, candidate.coefficients, strict=True):
            theirs[index] = theirs.get(index, 0) + coeff
        return ours == theirs and not op.attributes and not candidate.attributes


def _expensive(value: SSAValue, block: Block) -> bool:
    """``value`` (computed in ``block``) involves a transcendental computed in ``block``."""
    stack, seen = [value], set[SSAValue]()
    while stack:
        v = stack.pop()
        if v in seen or not isinstance(v.owner, Operation) or v.owner.parent_block() is not block:
            continue
        seen.add(v)
        op = v.owner
        if isinstance(op, loop.UnaryOp) and op.kind.data not in CHEAP_UNARIES:
            return True
        stack.extend(op.operands)
    return False


def _written(kernel: loop.KernelOp) -> frozenset[SSAValue]:
    return frozenset(op.buffer for op in kernel.body.walk() if isinstance(op, loop.VStoreOp | loop.StoreOp))


def _loop_pairs(block: Block) -> Iterator[tuple[loop.VForOp, loop.VForOp]]:
    loops = [op for op in block.ops if isinstance(op, loop.VForOp)]
    for j, later in enumerate(loops):
        if later.inits or any(op.regions for op in later.body.block.ops):
            continue
        for first in reversed(loops[:j]):
            if first.is_static and later.is_static and (first.lb, first.ub, first.stride) == \
                    (later.lb, later.ub, later.stride):
                yield first, later
                break


def _kept_values(match: _Match) -> list[tuple[SSAValue, SSAValue]]:
    """(value of ``later``, its equal in ``first``) to keep: the largest expensive matched
    values (a matched value that a matched value of ``later`` reads is not kept on its own)."""
    block = match.later.body.block
    matched = [r for op in block.ops if isinstance(op, _PURE) or op.dialect_name() == "arith"
               for r in op.results if isinstance(r.type, VectorType) and match.value(r) is not None]

    def only_in_matched(r: SSAValue) -> bool:
        return all(u.operation.results and match.value(u.operation.results[0]) is not None for u in r.uses)

    kept: list[tuple[SSAValue, SSAValue]] = []
    for r in matched:
        if only_in_matched(r) or not _expensive(r, block):
            continue
        found = match.value(r)
        assert found is not None
        kept.append((r, found))
    return kept[:MAX_KEPT_PER_LOOP]


def _scratch_type(value: SSAValue, rows: int) -> MemRefType | None:
    ty = value.type
    assert isinstance(ty, VectorType)
    elem = ty.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    bits = int(getattr(elem, "bitwidth", 0))  # pyright: ignore[reportUnknownArgumentType]
    if bits < 8 or rows * bits // 8 > MAX_SCRATCH_BYTES:
        return None
    return MemRefType(elem, [rows])  # pyright: ignore[reportUnknownArgumentType]


def _keep(first: loop.VForOp, later: loop.VForOp, value: SSAValue, equal: SSAValue) -> bool:
    ty = _scratch_type(value, first.ub)
    if ty is None:
        return False
    scratch = loop.ScratchOp(ty)
    block = first.parent_block()
    assert block is not None
    block.insert_op_before(scratch, first)
    # the earlier loop stores its value as soon as it is computed
    where = equal.owner
    assert isinstance(where, Operation)
    at = loop.OffsetOp([(first.iv, 1)])
    store = loop.VStoreOp(equal, scratch, at, first.lanes)
    first.body.block.insert_ops_after([at, store], where)
    # the later loop reads it back in place of its own computation
    width = value.type.get_shape()[0]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    at_later = loop.OffsetOp([(later.iv, 1)])
    load = loop.VLoadOp(scratch, at_later, int(width), later.lanes)  # pyright: ignore[reportUnknownArgumentType]
    body = later.body.block
    first_op = body.first_op
    assert first_op is not None
    body.insert_ops_before([at_later, load], first_op)
    value.replace_all_uses_with(load.result)
    return True


def _erase_dead(block: Block) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if _computes(op) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True


def reuse_reduction_values(fn: func.FuncOp) -> int:
    """Rewrite every kernel of the loop-level ``fn``; returns how many values are now kept."""
    kept = 0
    for kernel in [op for op in fn.walk() if isinstance(op, loop.KernelOp)]:
        if not kernel.is_vectorized:
            continue
        blocks = [b for op in kernel.body.walk() for r in op.regions for b in r.blocks]
        for block in [kernel.body.block, *blocks]:
            for first, later in list(_loop_pairs(block)):
                # a scratch row kept for an earlier pair is written too: never matched
                match = _Match(first, later, _written(kernel))
                pairs = _kept_values(match)
                done = sum(1 for value, equal in pairs if _keep(first, later, value, equal))
                if done:
                    _erase_dead(later.body.block)
                    kept += done
    return kept


@dataclass(frozen=True)
class ReuseReductionValues(ModulePass):
    name = "reuse-reduction-values"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in loop.loop_functions(op):
            reuse_reduction_values(fn)


__all__ = ["CHEAP_UNARIES", "ReuseReductionValues", "reuse_reduction_values"]
