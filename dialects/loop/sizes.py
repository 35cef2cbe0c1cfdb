"""Run-time sizes of the loop level: what a size value is at a call, and its range.

A size is an ``index`` value of ``@forward`` defined by ``loop.dim`` (a dim of a graph input,
with its declared range), by ``loop.offset`` (an affine expression of sizes) or by an
integer ``arith.constant``.  ``size_range`` bounds it over the declared ranges (what the
memory plan sizes a buffer for); ``evaluate_size`` computes it from a call's inputs.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType
from xdsl.ir import SSAValue

from ziggurat.dialects.loop.graph import AllocOp, DimOp
from ziggurat.dialects.loop.memory import OffsetOp


class SizeError(ValueError):
    """A value used as a size is not one the loop level can compute."""


def _fold(value: SSAValue, leaf: Callable[[DimOp], tuple[int, int]]) -> tuple[int, int]:
    owner = value.owner
    if isinstance(owner, DimOp):
        return leaf(owner)
    if isinstance(owner, OffsetOp):
        low = high = owner.const
        for term, coeff in zip(owner.indices, owner.coefficients, strict=True):
            a, b = _fold(term, leaf)
            low += min(coeff * a, coeff * b)
            high += max(coeff * a, coeff * b)
        return low, high
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        n = int(owner.value.value.data)
        return n, n
    raise SizeError(f"{value.name_hint or value} is not a run-time size (loop.dim, loop.offset or a constant)")


def size_range(value: SSAValue) -> tuple[int, int]:
    """The least and greatest value of a size over its inputs' declared ranges."""
    return _fold(value, lambda dim: dim.bounds)


def evaluate_size(value: SSAValue, dim_of: Callable[[DimOp], int]) -> int:
    """A size at a call; ``dim_of`` reads a ``loop.dim`` from the call's inputs."""
    def leaf(dim: DimOp) -> tuple[int, int]:
        n = dim_of(dim)
        return n, n

    return _fold(value, leaf)[0]


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
