"""The value DAG of a kernel body: what one output element is, as a function of indices.

A lowering describes a tensor by a function from index expressions to a :class:`Value`
(as Inductor's ``inner_fn``).  Calling the functions of a chain of element-wise ops
with the consumer's indices inlines the whole chain into one DAG: that is kernel
fusion.  Nodes are immutable; code generation numbers equal nodes once (CSE).

Node kinds: :class:`Const`, :class:`Load` (a buffer element at subscripts),
:class:`IndexValue` (an index expression used as a number, e.g. ``arange``),
:class:`Unary`, :class:`Binary`, :class:`Fma`, :class:`Compare`, :class:`Select`, :class:`Cast` and
:class:`ReduceRef` (the result of a :class:`Reduction` at an output index).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ziggurat.backends.cpu.lowering.index import IndexExpr, Var

_serial = itertools.count()


class LoweringBug(AssertionError):
    """An internal invariant of the CPU lowering does not hold (never bad user input)."""


class Value:
    """Base of the DAG nodes; ``dtype`` is the torch dtype of the element."""

    __slots__ = ("_vars", "dtype", "uid")

    def __init__(self, dtype: torch.dtype) -> None:
        self.dtype = dtype
        self.uid = next(_serial)
        self._vars: frozenset[Var] | None = None

    def children(self) -> tuple[Value, ...]:
        return ()

    def own_indices(self) -> tuple[IndexExpr, ...]:
        """Index expressions this node itself reads (not its children's)."""
        return ()

    def index_vars(self) -> frozenset[Var]:
        """Every loop variable this value depends on."""
        if self._vars is None:
            out: set[Var] = set()
            for e in self.own_indices():
                out |= e.vars()
            for c in self.children():
                out |= c.index_vars()
            self._vars = frozenset(out)
        return self._vars

    def __repr__(self) -> str:
        return f"{type(self).__name__}#{self.uid}"


class Const(Value):
    __slots__ = ("value",)

    def __init__(self, value: bool | int | float, dtype: torch.dtype) -> None:
        super().__init__(dtype)
        if dtype == torch.bool:
            value = bool(value)
        elif dtype == torch.float32:
            value = round_to_float32(float(value))
        elif dtype.is_floating_point:
            value = float(value)
        else:
            value = int(value)
        self.value = value


def round_to_float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (as torch converts a Python scalar): a float32
    constant cast to float64 must carry the float32 value, not the Python double."""
    from ziggurat.backends.cpu.vecmath.builder import f32_round

    return f32_round(value)


# -- buffers and guarded loads ------------------------------------------------------


@dataclass(eq=False)
class Buffer:
    """A dense row-major buffer of the compiled graph.

    ``role``: ``input`` (a graph input, ``index`` = its position), ``constant`` (a
    weight, ``tensor`` holds it), ``temp`` (an intermediate, planned into the arena) or
    ``output`` (a graph output, allocated fresh per call)."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    role: str = "temp"
    index: int = -1
    tensor: torch.Tensor | None = None
    value_attr: Any = None
    ssa: Any = field(default=None, repr=False)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


_guard_depth = 0


@contextlib.contextmanager
def guarded_loads() -> Iterator[None]:
    """Loads built inside this context may address outside their buffer (padding, pooling
    windows, concatenation): every subscript that cannot be proven in range gets a
    run-time check, and the load yields its ``other`` value there.  Outside it, an
    unprovable subscript is a lowering bug (:class:`LoweringBug`)."""
    global _guard_depth
    _guard_depth += 1
    try:
        yield
    finally:
        _guard_depth -= 1


class Load(Value):
    """``buffer[subscripts]``; ``guards`` lists the dims whose subscript is checked at run
    time (the load yields ``other`` when one is out of range)."""

    __slots__ = ("buffer", "guards", "other", "subs")

    def __init__(self, buffer: Buffer, subs: Sequence[IndexExpr], other: bool | int | float = 0) -> None:
        super().__init__(buffer.dtype)
        if len(subs) != len(buffer.shape):
            raise LoweringBug(f"load of {buffer.name}{list(buffer.shape)} with {len(subs)} subscripts")
        self.buffer = buffer
        self.subs = tuple(IndexExpr.of(s) for s in subs)
        guards: list[int] = []
        for d, (s, n) in enumerate(zip(self.subs, buffer.shape, strict=True)):
            lo, hi = s.range()
            if lo < 0 or hi >= n:
                if not _guard_depth:
                    raise LoweringBug(
                        f"subscript {d} of {buffer.name}{list(buffer.shape)} ranges over [{lo}, {hi}]: "
                        "an out-of-bounds access outside guarded_loads()"
                    )
                guards.append(d)
        self.guards = tuple(guards)
        self.other = other

    def own_indices(self) -> tuple[IndexExpr, ...]:
        return self.subs


class IndexValue(Value):
    """An index expression used as an ``int64`` (or converted) value."""

    __slots__ = ("expr",)

    def __init__(self, expr: IndexExpr, dtype: torch.dtype = torch.int64) -> None:
        super().__init__(dtype)
        self.expr = IndexExpr.of(expr)

    def own_indices(self) -> tuple[IndexExpr, ...]:
        return (self.expr,)


class Unary(Value):
    """An element-wise function ``kind`` (see ``backends/cpu/codegen/unary.py`` for the kinds)."""

    __slots__ = ("kind", "params", "x")

    def __init__(self, kind: str, x: Value, dtype: torch.dtype | None = None,
                 params: Sequence[tuple[str, float]] = ()) -> None:
        super().__init__(dtype or x.dtype)
        self.kind = kind
        self.x = x
        self.params = tuple(params)

    def children(self) -> tuple[Value, ...]:
        return (self.x,)


BINARY_OPS = ("add", "sub", "mul", "div", "floordiv", "mod", "fmod", "max", "min", "pow", "and", "or",
              "xor", "shl", "shr", "atan2", "copysign", "fmax", "fmin")


class Binary(Value):
    """``a <op> b`` on equal dtypes (the lowering casts first); ``div`` is true division on
    floats, ``floordiv``/``mod`` follow Python (and torch) floor semantics."""

    __slots__ = ("a", "b", "op")

    def __init__(self, op: str, a: Value, b: Value) -> None:
        if op not in BINARY_OPS:
            raise LoweringBug(f"unknown binary op {op}")
        if a.dtype != b.dtype:
            raise LoweringBug(f"binary {op} on {a.dtype} and {b.dtype}")
        super().__init__(a.dtype)
        self.op = op
        self.a = a
        self.b = b

    def children(self) -> tuple[Value, ...]:
        return (self.a, self.b)


class Fma(Value):
    """``a * b + c`` rounded once (``llvm.fma``): eager's vectorized kernels where the compiler
    contracts ``x * alpha + beta`` (batch and instance norm's transform)."""

    __slots__ = ("a", "b", "c")

    def __init__(self, a: Value, b: Value, c: Value) -> None:
        if not (a.dtype == b.dtype == c.dtype) or not a.dtype.is_floating_point:
            raise LoweringBug(f"fma on {a.dtype}, {b.dtype} and {c.dtype}")
        super().__init__(a.dtype)
        self.a = a
        self.b = b
        self.c = c

    def children(self) -> tuple[Value, ...]:
        return (self.a, self.b, self.c)


COMPARE_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


class Compare(Value):
    __slots__ = ("a", "b", "pred")

    def __init__(self, pred: str, a: Value, b: Value) -> None:
        if a.dtype != b.dtype:
            raise LoweringBug(f"compare {pred} on {a.dtype} and {b.dtype}")
        super().__init__(torch.bool)
        self.pred = pred
        self.a = a
        self.b = b

    def children(self) -> tuple[Value, ...]:
        return (self.a, self.b)


class Select(Value):
    __slots__ = ("a", "b", "cond")

    def __init__(self, cond: Value, a: Value, b: Value) -> None:
        if cond.dtype != torch.bool or a.dtype != b.dtype:
            raise LoweringBug(f"select({cond.dtype}, {a.dtype}, {b.dtype})")
        super().__init__(a.dtype)
        self.cond = cond
        self.a = a
        self.b = b

    def children(self) -> tuple[Value, ...]:
        return (self.cond, self.a, self.b)


class Cast(Value):
    __slots__ = ("x",)

    def __init__(self, x: Value, dtype: torch.dtype) -> None:
        super().__init__(dtype)
        self.x = x

    def children(self) -> tuple[Value, ...]:
        return (self.x,)


class Assert(Value):
    """``x``, once the run-time condition ``ok`` holds (else the run reports ``site``)."""

    __slots__ = ("ok", "site", "x")

    def __init__(self, x: Value, ok: Value, site: int) -> None:
        super().__init__(x.dtype)
        self.x = x
        self.ok = ok
        self.site = site

    def children(self) -> tuple[Value, ...]:
        return (self.x, self.ok)


# -- reductions ------------------------------------------------------------------------

REDUCTION_KINDS = ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "shift_max")

ReductionBody = Callable[[Sequence[IndexExpr], Sequence[IndexExpr]], Value]


@dataclass(eq=False)
class Reduction:
    """``out[o] = reduce_{r} body(o, r)`` over the static ``red_shape``.

    ``argmax``/``argmin`` yield the flat (row-major) index within ``red_shape`` of the
    first extremal element (NaN counts as the maximum, as in torch).

    ``shift_max`` is the maximum of the non-NaN elements (-inf if there are none): the shift
    of a softmax or logsumexp, where a NaN element makes the sum of exponentials NaN anyway,
    so the maximum need not carry it (it then costs one ``vmaxps`` per vector instead of a
    NaN-propagating blend sequence)."""

    kind: str
    dtype: torch.dtype
    out_shape: tuple[int, ...]
    red_shape: tuple[int, ...]
    body: ReductionBody
    origins: tuple[str, ...] = ()
    uid: int = field(default_factory=lambda: next(_serial))

    def __post_init__(self) -> None:
        if self.kind not in REDUCTION_KINDS:
            raise LoweringBug(f"unknown reduction {self.kind}")


class ReduceRef(Value):
    """The value of ``reduction`` at output subscripts ``out``; ``guarded`` when built inside
    :func:`guarded_loads` (its body is then traced with guarded loads too)."""

    __slots__ = ("guarded", "out", "reduction")

    def __init__(self, reduction: Reduction, out: Sequence[IndexExpr]) -> None:
        super().__init__(reduction.dtype)
        self.reduction = reduction
        self.out = tuple(IndexExpr.of(o) for o in out)
        self.guarded = _guard_depth > 0

    def own_indices(self) -> tuple[IndexExpr, ...]:
        return self.out


def walk(root: Value) -> Iterator[Value]:
    """Every node reachable from ``root`` once, children before parents (not entering
    reductions' bodies)."""
    seen: set[int] = set()
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node.uid in seen:
            continue
        if expanded:
            seen.add(node.uid)
            yield node
            continue
        stack.append((node, True))
        for c in node.children():
            if c.uid not in seen:
                stack.append((c, False))
        for e in node.own_indices():
            for atom, _ in e.terms:
                inner = getattr(atom, "node", None)
                if isinstance(inner, Value) and inner.uid not in seen:
                    stack.append((inner, False))
