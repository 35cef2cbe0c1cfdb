"""Sizes as polynomials of the shape symbols, and their exact fit from sampled values.

A range build (``backends/cpu/symbolize.py``) sees an integer of the loop level take a
value at each sampled point of the ranges; :func:`fit_polys` finds the polynomial with
integer coefficients through them: ``c * batch + d`` for most sizes, ``batch * seq`` for
the rows of a linear layer over ``[batch, seq, hidden]``, ``seq * seq`` for a stride of
attention's scores.  Each symbol appears with degree at most 2 (what a tensor of ``seq x seq``
blocks needs); the points must be a grid (every combination of the sizes given per symbol),
where such a polynomial is unique.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

#: a monomial: one exponent per symbol
Exponents = tuple[int, ...]


@dataclass(frozen=True)
class SizePoly:
    """``sum(coefficient * prod(symbol_i ** e_i))`` over ``terms``, each a nonzero
    coefficient of a distinct monomial, sorted by monomial."""

    terms: tuple[tuple[Exponents, int], ...]
    symbols: int

    @staticmethod
    def of(coeffs: Mapping[Exponents, int], symbols: int) -> SizePoly:
        return SizePoly(tuple(sorted((e, c) for e, c in coeffs.items() if c)), symbols)

    @staticmethod
    def symbol(i: int, symbols: int) -> SizePoly:
        return SizePoly.of({tuple(int(j == i) for j in range(symbols)): 1}, symbols)

    @property
    def const(self) -> int:
        return dict(self.terms).get((0,) * self.symbols, 0)

    @property
    def unit_symbol(self) -> int | None:
        """``i`` where this is symbol ``i`` itself."""
        if len(self.terms) != 1:
            return None
        exps, coeff = self.terms[0]
        return exps.index(1) if coeff == 1 and sorted(exps) == [0] * (self.symbols - 1) + [1] else None

    @property
    def monomials(self) -> list[tuple[Exponents, int]]:
        """The non-constant terms."""
        return [(e, c) for e, c in self.terms if any(e)]

    def at(self, values: Sequence[int]) -> int:
        total = 0
        for exps, coeff in self.terms:
            term = coeff
            for v, e in zip(values, exps, strict=True):
                term *= v ** e
            total += term
        return total

    def bounds(self, lows: Sequence[int], highs: Sequence[int]) -> tuple[int, int]:
        """Bounds of the value over the box of sizes (positive sizes): each term's own least and
        greatest value, summed; exact for the polynomials sizes are (no term decreasing)."""
        low = high = 0
        for exps, coeff in self.terms:
            a = b = coeff
            for lo, hi, e in zip(lows, highs, exps, strict=True):
                a, b = a * lo ** e, b * hi ** e
            low, high = low + min(a, b), high + max(a, b)
        return low, high

    def text(self, names: Sequence[str]) -> str:
        """``3*batch*seq^2 - batch + 7``: higher degrees first."""
        out = ""
        for exps, coeff in sorted(self.terms, key=lambda t: (-sum(t[0]), t[0])):
            factors = [n if e == 1 else f"{n}^{e}" for n, e in zip(names, exps, strict=True) if e]
            size = abs(coeff)
            term = "*".join(([] if size == 1 and factors else [str(size)]) + factors)
            out += (" - " if coeff < 0 else " + ") + term if out else ("-" if coeff < 0 else "") + term
        return out or "0"


def grid_basis(sizes: Sequence[Sequence[int]]) -> tuple[list[list[int]], list[Exponents]]:
    """The grid of points with ``sizes[i]`` for symbol ``i`` (distinct sizes) and the monomials
    a polynomial through it has: symbol ``i`` up to degree ``len(sizes[i]) - 1``."""
    points = [list(p) for p in itertools.product(*sizes)]
    basis = [tuple(e) for e in itertools.product(*(range(len(s)) for s in sizes))]
    return points, basis


def fit_polys(points: Sequence[Sequence[int]], basis: Sequence[Exponents],
              columns: Sequence[Sequence[int]]) -> list[SizePoly | None]:
    """Per column of values (one per point): the polynomial over ``basis`` with integer
    coefficients through those values at ``points`` (as many points as monomials, a grid of
    :func:`grid_basis`), or None where its coefficients are not whole.  One elimination
    serves every column."""
    n = len(basis)
    assert len(points) == n and all(len(c) == n for c in columns)
    rows = [[Fraction(_monomial(p, e)) for e in basis] + [Fraction(c[i]) for c in columns]
            for i, p in enumerate(points)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            raise ValueError("the points do not determine the polynomial")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col][col]
        rows[col] = [x / head for x in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                f = rows[r][col]
                rows[r] = [x - f * y for x, y in zip(rows[r], rows[col], strict=True)]
    symbols = len(basis[0]) if basis else 0
    out: list[SizePoly | None] = []
    for j in range(len(columns)):
        coeffs = [rows[i][n + j] for i in range(n)]
        out.append(None if any(c.denominator != 1 for c in coeffs)
                   else SizePoly.of({e: int(c) for e, c in zip(basis, coeffs, strict=True)}, symbols))
    return out


def _monomial(point: Sequence[int], exps: Exponents) -> int:
    out = 1
    for v, e in zip(point, exps, strict=True):
        out *= v ** e
    return out


__all__ = ["Exponents", "SizePoly", "fit_polys", "grid_basis"]
