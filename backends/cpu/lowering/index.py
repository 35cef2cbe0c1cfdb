"""Symbolic index expressions: how a kernel's loop variables address a buffer.

An :class:`IndexExpr` is ``sum(coeff * atom) + const`` where an atom is a loop
variable (:class:`Var`), ``expr // d`` or ``expr % d`` of another expression
(:class:`FloorDiv`, :class:`Mod`), or a data-dependent index (:class:`Indirect`: the
value of an integer tensor element, e.g. an embedding id).  Every atom has a static
range, so the range of any expression is known at compile time: that is how the
lowering proves that a load stays inside its buffer (or guards it when it may not,
e.g. in padding).

Construction simplifies the way Inductor's sympy-based indexing does for the common
view chains: ``(12*a + b) // 12 == a`` when ``0 <= b < 12``, ``(12*a + b) % 12 == b``,
and ``12*(x // 12) + x % 12 == x``, so a reshape of a reshape collapses back to plain
affine indexing and vectorizes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any, cast

_ids = itertools.count()


class Atom:
    """Base of the terms of an index expression."""

    __slots__ = ("_hash",)

    def range(self) -> tuple[int, int]:
        raise NotImplementedError

    def sort_key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def vars(self) -> set[Var]:
        raise NotImplementedError

    def substitute(self, mapping: Mapping[Var, IndexExpr]) -> IndexExpr:
        raise NotImplementedError


class Var(Atom):
    """A loop variable ranging over ``[0, extent)``."""

    __slots__ = ("extent", "id", "name")

    def __init__(self, name: str, extent: int) -> None:
        if extent < 1:
            raise ValueError(f"loop variable {name} needs a positive extent, got {extent}")
        self.name = name
        self.extent = extent
        self.id = next(_ids)
        self._hash = hash(("var", self.id))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        return self.name

    def range(self) -> tuple[int, int]:
        return (0, self.extent - 1)

    def sort_key(self) -> tuple[Any, ...]:
        return (0, self.id)

    def vars(self) -> set[Var]:
        return {self}

    def substitute(self, mapping: Mapping[Var, IndexExpr]) -> IndexExpr:
        return mapping.get(self, IndexExpr.of(self))


class _Derived(Atom):
    __slots__ = ("d", "inner")

    KIND = 0

    def __init__(self, inner: IndexExpr, d: int) -> None:
        self.inner = inner
        self.d = d
        self._hash = hash((self.KIND, inner, d))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.inner == self.inner and other.d == self.d  # type: ignore[attr-defined]

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.inner.sort_key(), self.d)

    def vars(self) -> set[Var]:
        return self.inner.vars()


class FloorDiv(_Derived):
    """``inner // d`` (floor division, d > 0)."""

    KIND = 1

    def range(self) -> tuple[int, int]:
        lo, hi = self.inner.range()
        return (lo // self.d, hi // self.d)

    def substitute(self, mapping: Mapping[Var, IndexExpr]) -> IndexExpr:
        return self.inner.substitute(mapping) // self.d

    def __repr__(self) -> str:
        return f"({self.inner!r}) // {self.d}"


class Mod(_Derived):
    """``inner % d`` (floor modulo, d > 0)."""

    KIND = 2

    def range(self) -> tuple[int, int]:
        lo, hi = self.inner.range()
        if hi - lo + 1 < self.d and lo % self.d <= hi % self.d:
            return (lo % self.d, hi % self.d)
        return (0, self.d - 1)

    def substitute(self, mapping: Mapping[Var, IndexExpr]) -> IndexExpr:
        return self.inner.substitute(mapping) % self.d

    def __repr__(self) -> str:
        return f"({self.inner!r}) % {self.d}"


class Indirect(Atom):
    """A data-dependent index: the (integer) value ``node`` used to index a dimension of
    ``size``.  Code generation checks it at run time (``loop.check_index``), so its range
    is ``[0, size)``."""

    __slots__ = ("node", "size", "site")

    def __init__(self, node: Any, size: int, site: int) -> None:
        self.node = node
        self.size = size
        self.site = site
        self._hash = hash(("indirect", id(node), size, site))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Indirect) and other.node is self.node and other.size == self.size \
            and other.site == self.site

    def range(self) -> tuple[int, int]:
        return (0, self.size - 1)

    def sort_key(self) -> tuple[Any, ...]:
        return (3, id(self.node), self.size, self.site)

    def vars(self) -> set[Var]:
        return set(getattr(self.node, "index_vars", lambda: set())())

    def substitute(self, mapping: Mapping[Var, IndexExpr]) -> IndexExpr:
        node = self.node.substitute(mapping) if hasattr(self.node, "substitute") else self.node
        return IndexExpr.of(Indirect(node, self.size, self.site))

    def __repr__(self) -> str:
        return f"indirect<{self.size}>"


class IndexExpr:
    """``sum(coeff * atom) + const`` in canonical form (see the module doc)."""

    __slots__ = ("_hash", "const", "terms")

    def __init__(self, terms: Mapping[Atom, int] | Iterable[tuple[Atom, int]] = (), const: int = 0) -> None:
        # (a Mapping here is the Mapping[Atom, int] of the signature, not an iterable of pairs that is also one)
        items = cast(Mapping[Atom, int], terms).items() if isinstance(terms, Mapping) else terms
        merged: dict[Atom, int] = {}
        for atom, c in items:
            if c:
                merged[atom] = merged.get(atom, 0) + c
        merged = {a: c for a, c in merged.items() if c}
        merged, extra = _recombine(merged)
        self.terms: tuple[tuple[Atom, int], ...] = tuple(sorted(merged.items(), key=lambda t: t[0].sort_key()))
        self.const = int(const) + extra
        self._hash = hash((self.terms, self.const))

    # -- construction ------------------------------------------------------
    @staticmethod
    def of(value: IndexExpr | Atom | int) -> IndexExpr:
        if isinstance(value, IndexExpr):
            return value
        if isinstance(value, Atom):
            return IndexExpr({value: 1})
        return IndexExpr((), int(value))

    def __add__(self, other: IndexExpr | Atom | int) -> IndexExpr:
        o = IndexExpr.of(other)
        return IndexExpr(list(self.terms) + list(o.terms), self.const + o.const)

    __radd__ = __add__

    def __neg__(self) -> IndexExpr:
        return self * -1

    def __sub__(self, other: IndexExpr | Atom | int) -> IndexExpr:
        return self + (-IndexExpr.of(other))

    def __rsub__(self, other: IndexExpr | Atom | int) -> IndexExpr:
        return IndexExpr.of(other) - self

    def __mul__(self, k: int) -> IndexExpr:
        if not isinstance(k, int):
            raise TypeError(f"index expressions multiply by integers only, got {k!r}")
        return IndexExpr([(a, c * k) for a, c in self.terms], self.const * k)

    __rmul__ = __mul__

    def __floordiv__(self, d: int) -> IndexExpr:
        if d <= 0:
            raise ValueError(f"floor division by {d}")
        if d == 1:
            return self
        q, rest = self._split(d)
        if not rest.terms and rest.const == 0:
            return q
        lo, hi = rest.range()
        if lo // d == hi // d:
            return q + lo // d
        factored = rest._factor(d)
        if factored is not None:
            big, a = factored
            return q + big // (d // a)
        return q + IndexExpr({FloorDiv(rest, d): 1})

    def __mod__(self, d: int) -> IndexExpr:
        if d <= 0:
            raise ValueError(f"modulo by {d}")
        if d == 1:
            return IndexExpr.of(0)
        _, rest = self._split(d)
        lo, hi = rest.range()
        if lo // d == hi // d:
            return rest - (lo // d) * d
        factored = rest._factor(d)
        if factored is not None:
            big, a = factored
            small = rest - big * a
            return (big % (d // a)) * a + small
        return IndexExpr({Mod(rest, d): 1})

    def _factor(self, d: int) -> tuple[IndexExpr, int] | None:
        """``self == a*big + small`` with ``a | d``, ``1 < a < d`` and ``0 <= small < a``, so that
        ``self // d == big // (d/a)`` and ``self % d == a*(big % (d/a)) + small``."""
        for _, c in self.terms:
            a = math.gcd(d, c)
            if a <= 1 or a >= d:
                continue
            big_terms = [(t, k // a) for t, k in self.terms if k % a == 0]
            small_terms = [(t, k) for t, k in self.terms if k % a]
            small = IndexExpr(small_terms, self.const % a)
            lo, hi = small.range()
            if 0 <= lo and hi < a:
                return IndexExpr(big_terms, self.const // a), a
        return None

    def _split(self, d: int) -> tuple[IndexExpr, IndexExpr]:
        """``self == d * q + rest`` with every coefficient of ``rest`` not a multiple of d,
        and ``0 <= rest.const < d``."""
        q_terms = [(a, c // d) for a, c in self.terms if c % d == 0]
        r_terms = [(a, c) for a, c in self.terms if c % d]
        return IndexExpr(q_terms, self.const // d), IndexExpr(r_terms, self.const % d)

    # -- queries -----------------------------------------------------------
    def range(self) -> tuple[int, int]:
        lo = hi = self.const
        for atom, c in self.terms:
            a_lo, a_hi = atom.range()
            if c > 0:
                lo += c * a_lo
                hi += c * a_hi
            else:
                lo += c * a_hi
                hi += c * a_lo
        return lo, hi

    def vars(self) -> set[Var]:
        out: set[Var] = set()
        for atom, _ in self.terms:
            out |= atom.vars()
        return out

    def is_constant(self) -> bool:
        return not self.terms

    def coeff(self, var: Var) -> int | None:
        """The coefficient of ``var`` if the expression is affine in it (0 if absent); None
        when ``var`` appears inside a non-affine atom."""
        c = 0
        for atom, k in self.terms:
            if atom is var:
                c += k
            elif var in atom.vars():
                return None
        return c

    def without(self, var: Var) -> IndexExpr:
        """The expression with the (affine) term of ``var`` removed."""
        return IndexExpr([(a, c) for a, c in self.terms if a is not var], self.const)

    def substitute(self, mapping: Mapping[Var, IndexExpr]) -> IndexExpr:
        out = IndexExpr.of(self.const)
        for atom, c in self.terms:
            out = out + atom.substitute(mapping) * c
        return out

    def affine_terms(self) -> list[tuple[Atom, int]]:
        return list(self.terms)

    def sort_key(self) -> tuple[Any, ...]:
        return (tuple((a.sort_key(), c) for a, c in self.terms), self.const)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            return not self.terms and self.const == other
        return isinstance(other, IndexExpr) and self.terms == other.terms and self.const == other.const

    def __repr__(self) -> str:
        parts = [(f"{c}*{a!r}" if c != 1 else repr(a)) for a, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


def _recombine(terms: dict[Atom, int]) -> tuple[dict[Atom, int], int]:
    """Undo splits of one expression; returns the terms and the constant the recombined
    expressions carry:

    * ``c*d*(x // d) + c*(x % d)`` -> ``c*x``;
    * ``c*d*((x // d) % m) + c*(x % d)`` -> ``c*(x % (d*m))`` (floor semantics: write
      ``x = (s*m + t)*d + r``), so a reshape whose dims do not line up (``[15, 11, 13]`` read
      as ``[3, 715]``) collapses to the flat index instead of a division per element.
    """
    extra = 0
    while True:
        step = _recombine_once(terms)
        if step is None:
            return terms, extra
        terms, carried = step
        extra += carried


def _recombine_once(terms: dict[Atom, int]) -> tuple[dict[Atom, int], int] | None:
    for mod, c in terms.items():
        if not isinstance(mod, Mod):
            continue
        div = FloorDiv(mod.inner, mod.d)
        if terms.get(div) == c * mod.d:
            merged = IndexExpr.of(mod.inner) * c
            return _replace(terms, (mod, div), merged)
        for outer, k in terms.items():
            if (isinstance(outer, Mod) and k == c * mod.d and len(outer.inner.terms) == 1
                    and outer.inner.const == 0 and outer.inner.terms[0] == (div, 1)):
                return _replace(terms, (mod, outer), (mod.inner % (mod.d * outer.d)) * c)
    return None


def _replace(terms: dict[Atom, int], gone: tuple[Atom, Atom], merged: IndexExpr) -> tuple[dict[Atom, int], int]:
    out = {a: k for a, k in terms.items() if a not in gone}
    for atom, k in merged.terms:
        out[atom] = out.get(atom, 0) + k
    return {a: k for a, k in out.items() if k}, merged.const


def flat_index(subscripts: Iterable[IndexExpr], shape: Iterable[int]) -> IndexExpr:
    """Row-major flat offset of ``subscripts`` in a dense buffer of ``shape``."""
    subs = list(subscripts)
    dims = list(shape)
    offset = IndexExpr.of(0)
    stride = 1
    for s, n in zip(reversed(subs), reversed(dims), strict=True):
        offset = offset + s * stride
        stride *= n
    return offset


def unflatten(flat: IndexExpr, shape: Iterable[int]) -> list[IndexExpr]:
    """Subscripts of the row-major flat index ``flat`` in ``shape`` (the inverse of :func:`flat_index`)."""
    dims = list(shape)
    if 0 in dims:  # no element: no subscript is ever taken (and no modulo by 0 is built)
        return [IndexExpr.of(0) for _ in dims]
    out: list[IndexExpr] = []
    stride = 1
    for n in reversed(dims):
        out.append((flat // stride) % n if n != 1 else IndexExpr.of(0))
        stride *= n
    return list(reversed(out))


def loop_vars(shape: Iterable[int], prefix: str) -> tuple[list[Var], list[IndexExpr]]:
    """Loop variables over ``shape`` (none for dims of size 1) and the index they form."""
    vars_: list[Var] = []
    index: list[IndexExpr] = []
    for d, n in enumerate(shape):
        if n == 1:
            index.append(IndexExpr.of(0))
        else:
            v = Var(f"{prefix}{d}", n)
            vars_.append(v)
            index.append(IndexExpr.of(v))
    return vars_, index
