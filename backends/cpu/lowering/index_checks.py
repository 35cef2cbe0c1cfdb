"""Indices read from tensor data, checked at run time as eager checks them.

An index that eager rejects is reported after the native call as an ``InputError`` naming
the op and its source line (an error site, ``loop.check_index`` / ``loop.assert``), never
dropped nor used to address memory.  Eager's three conventions:

* ``[0, size)``: ``index_select``, ``gather``, ``scatter*``, ``embedding``, ``one_hot``,
  an ``nll_loss`` target (``wrap=False``);
* ``[-size, size)``, a negative index counting from the end: ``x[idx]``, ``index_put``
  (``wrap=True``);
* any index, taken modulo ``size``: ``take_along_dim`` (:func:`modulo_index`).
"""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.ops import (add, binary, cast, compare, const, logical_and, logical_not,
                                                logical_or, where)
from ziggurat.backends.cpu.lowering.values import Assert, IndexValue, Load, Value
from ziggurat.ir.locations import op_location

I64 = torch.int64


def index_site(ctx: LoweringContext, args: LoweringArgs, size: int, what: str = "index") -> int:
    """An error site: ``what`` of the op out of range for a dimension of ``size`` (a lowering
    for a range build leaves the size out: one build serves every size, and its sites are
    the same text at every size it was sampled at)."""
    where_ = op_location(args.op)
    dimension = "its dimension" if ctx.options.range_schedule else f"a dimension of size {size}"
    return ctx.error_site(f"{args.key}: {what} out of range for {dimension}" + (f" at {where_}" if where_ else ""))


def checked_value(value: Value, size: int, wrap: bool) -> Value:
    """``value`` as an int64 index for ``Indirect`` (whose check wraps one negative index):
    without ``wrap`` a negative index becomes ``size``, which the check reports."""
    v = cast(value, I64)
    if wrap:
        return v
    return where(compare("lt", v, 0, I64), const(size, I64), v, I64)


def in_range(value: Value, size: int, *, wrap: bool) -> Value:
    """Whether ``value`` indexes a dimension of ``size`` (``[-size, size)`` with ``wrap``)."""
    v = cast(value, I64)
    return logical_and(compare("ge", v, -size if wrap else 0, I64), compare("lt", v, size, I64))


def asserted_index(value: Value, size: int, site: int, *, wrap: bool) -> Value:
    """``value`` as an int64 index in ``[0, size)`` once the run-time check holds (else the
    run reports ``site``): with ``wrap`` a negative index counts from the end.  For indices
    that are compared, not used as addresses (scatters compute each output from its side)."""
    v = cast(value, I64)
    if wrap:
        v = where(compare("lt", v, 0, I64), add(v, size, I64), v, I64)
    ok = in_range(value, size, wrap=wrap)
    if isinstance(value, Load) and value.guards:
        # a guarded load yields 0 outside its buffer, but the check must not depend on that:
        # LLVM's AVX2 lowering of a masked <8 x i64> load has been seen to read a half whose
        # mask is false (scatter_add into [6,3,6,9] from a [1,1,1,4] index reported an
        # out-of-range index); only the lanes inside the index tensor are checked
        inside = logical_and(*(logical_and(compare("ge", IndexValue(value.subs[d]), 0, I64),
                                           compare("lt", IndexValue(value.subs[d]), value.buffer.shape[d], I64))
                               for d in value.guards))
        ok = logical_or(ok, logical_not(inside))
    return Assert(v, ok, site)


def modulo_index(value: Value, size: int) -> Value:
    """``value`` modulo ``size`` (the sign of ``size``, as Python's ``%``): ``take_along_dim``."""
    return binary("mod", cast(value, I64), size, I64)
