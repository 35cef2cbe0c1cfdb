"""Nested emission scopes of one kernel: where each value's op goes.

A :class:`Scope` is one loop body (or the kernel body).  A value is emitted in the
outermost scope in which every loop variable it depends on is bound, so loop-invariant
work (a row's reduction, a broadcast scalar, index arithmetic) sits outside the inner
loops in the IR itself.  Each scope memoizes what was emitted in it (CSE), and sees its
ancestors' values.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Block, Operation, SSAValue

from ziggurat.backends.cpu.lowering.index import Var


@dataclass(eq=False)
class VectorLanes:
    """The vector loop a scope is in: its variable, width and valid-lane count value."""

    var: Var
    width: int
    lanes: SSAValue


@dataclass(eq=False)
class Scope:
    block: Block
    parent: Scope | None = None
    #: variables bound by this scope's loop (empty for the kernel body)
    binds: tuple[Var, ...] = ()
    ivs: dict[Var, SSAValue] = field(default_factory=dict[Var, SSAValue])
    vector: VectorLanes | None = None
    #: ops are inserted before this op (the child loop being emitted), or before the terminator
    anchor: Operation | None = None
    memo: dict[Any, SSAValue] = field(default_factory=dict[Any, SSAValue])
    depth: int = 0

    def chain(self) -> Iterator[Scope]:
        s: Scope | None = self
        while s is not None:
            yield s
            s = s.parent

    def lookup(self, key: Any) -> SSAValue | None:
        for s in self.chain():
            hit = s.memo.get(key)
            if hit is not None:
                return hit
        return None

    def iv(self, var: Var) -> SSAValue:
        for s in self.chain():
            if var in s.ivs:
                return s.ivs[var]
        raise KeyError(f"loop variable {var!r} is not bound here")

    def bound(self) -> set[Var]:
        out: set[Var] = set()
        for s in self.chain():
            out |= set(s.binds)
        return out

    def insert(self, op: Operation) -> Operation:
        if self.anchor is not None:
            self.block.insert_op_before(op, self.anchor)
        elif self.block.last_op is not None and self.block.last_op.has_trait(_is_terminator()):
            self.block.insert_op_before(op, self.block.last_op)
        else:
            self.block.add_op(op)
        return op

    def target_for(self, deps: frozenset[Var] | set[Var]) -> Scope:
        """The outermost scope (from self outwards) in which every var of ``deps`` is bound:
        the innermost one binding any of them, or the root when there are none."""
        last = self
        for s in self.chain():
            if any(v in deps for v in s.binds):
                return s
            last = s
        return last

    @contextmanager
    def child_anchor(self, op: Operation) -> Iterator[None]:
        old = self.anchor
        self.anchor = op
        try:
            yield
        finally:
            self.anchor = old


def _is_terminator() -> type:
    from xdsl.traits import IsTerminator

    return IsTerminator
