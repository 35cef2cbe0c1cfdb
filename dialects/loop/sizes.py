"""Run-time sizes of the loop level: what a size value is at a call, and its range.

A size is an ``index`` value of ``@forward`` defined by ``loop.dim`` (a dim of a graph input,
with its declared range), by ``loop.offset`` (an affine expression of sizes), by
``arith.muli`` of two sizes (``batch * seq``) or by an integer ``arith.constant``.  ``size_range`` bounds it over the declared ranges (what the
memory plan sizes a buffer for); ``evaluate_size`` computes it from a call's inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType
from xdsl.ir import SSAValue

from ziggurat.dialects.loop.graph import AllocOp, DimOp
from ziggurat.dialects.loop.memory import OffsetOp


T = TypeVar("T")


class SizeError(ValueError):
    """A value used as a size is not one the loop level can compute."""


def fold_size(value: SSAValue, dim: Callable[[DimOp], T], const: Callable[[int], T],
              add_term: Callable[[T, T, int], T], mul: Callable[[T, T], T]) -> T:
    """A size interpreted over ``T``: a ``loop.dim`` is ``dim(op)``, an integer constant
    ``const(n)``, a ``loop.offset`` its constant then ``add_term(acc, term, coefficient)`` per
    term, an ``arith.muli`` ``mul(lhs, rhs)``.  The memory plan folds ranges, the runtime
    integers, the code generator LLVM values."""
    owner = value.owner
    if isinstance(owner, DimOp):
        return dim(owner)
    if isinstance(owner, OffsetOp):
        acc = const(owner.const)
        for term, coeff in zip(owner.indices, owner.coefficients, strict=True):
            acc = add_term(acc, fold_size(term, dim, const, add_term, mul), coeff)
        return acc
    if isinstance(owner, arith.MuliOp):
        return mul(fold_size(owner.lhs, dim, const, add_term, mul), fold_size(owner.rhs, dim, const, add_term, mul))
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return const(int(owner.value.value.data))
    raise SizeError(f"{value.name_hint or value} is not a run-time size (loop.dim, loop.offset, arith.muli or a "
                    "constant)")


def size_range(value: SSAValue) -> tuple[int, int]:
    """The least and greatest value of a size over its inputs' declared ranges."""
    def add_term(acc: tuple[int, int], term: tuple[int, int], c: int) -> tuple[int, int]:
        return acc[0] + min(c * term[0], c * term[1]), acc[1] + max(c * term[0], c * term[1])

    def mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)

    return fold_size(value, lambda d: d.bounds, lambda n: (n, n), add_term, mul)


def evaluate_size(value: SSAValue, dim_of: Callable[[DimOp], int]) -> int:
    """A size at a call; ``dim_of`` reads a ``loop.dim`` from the call's inputs."""
    return fold_size(value, dim_of, lambda n: n, lambda acc, term, c: acc + c * term, lambda a, b: a * b)


def largest_shape(buffer: SSAValue) -> list[int]:
    """A buffer's shape at the top of its run-time dims' ranges (static dims as they are)."""
    ty = buffer.type
    assert isinstance(ty, MemRefType)
    owner = buffer.owner
    if not isinstance(owner, AllocOp):
        if any(d == DYNAMIC_INDEX for d in ty.get_shape()):
            raise SizeError(f"buffer {buffer.name_hint or buffer} has run-time dims but no loop.alloc sizing them")
        return list(ty.get_shape())
    return [d if isinstance(d, int) else size_range(d)[1] for d in owner.shape()]
