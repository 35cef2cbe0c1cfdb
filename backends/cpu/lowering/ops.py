"""Building element DAGs with torch's dtype rules: the vocabulary of every lowering.

Binary arithmetic casts both operands to one compute dtype (the op's result dtype, as
the IR declares it); comparisons compute in the promoted dtype of their operands;
transcendentals compute in ``float32``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.values import (
    Binary,
    Cast,
    Compare,
    Const,
    Fma,
    IndexValue,
    Select,
    Unary,
    Value,
    guarded_loads,
)

Number = bool | int | float


def is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def const(value: Number, dtype: torch.dtype) -> Const:
    return Const(value, dtype)


def cast(x: Value, dtype: torch.dtype) -> Value:
    if x.dtype == dtype:
        return x
    if isinstance(x, Const):
        v = x.value
        if dtype == torch.bool:
            return Const(bool(v), dtype)
        if not dtype.is_floating_point and isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                return Cast(x, dtype)
            return Const(int(v), dtype)
        return Const(v, dtype)
    return Cast(x, dtype)


def value_of(x: Value | Number, dtype: torch.dtype) -> Value:
    return cast(x, dtype) if isinstance(x, Value) else Const(x, dtype)


_FOLD = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "max": max, "min": min,
}


def binary(op: str, a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    av, bv = value_of(a, dtype), value_of(b, dtype)
    if isinstance(av, Const) and isinstance(bv, Const) and op in _FOLD and dtype != torch.bool:
        return Const(_FOLD[op](av.value, bv.value), dtype)
    return Binary(op, av, bv)


def add(a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    return binary("add", a, b, dtype)


def sub(a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    return binary("sub", a, b, dtype)


def mul(a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    return binary("mul", a, b, dtype)


def div(a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    return binary("div", a, b, dtype)


def fma(a: Value | Number, b: Value | Number, c: Value | Number, dtype: torch.dtype) -> Value:
    """``a * b + c`` rounded once, on a float ``dtype``."""
    return Fma(value_of(a, dtype), value_of(b, dtype), value_of(c, dtype))


def maximum(a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    return binary("max", a, b, dtype)


def minimum(a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    return binary("min", a, b, dtype)


def unary(kind: str, x: Value, dtype: torch.dtype | None = None, **params: float) -> Value:
    """Element-wise ``kind`` computed in ``dtype`` (default: x's dtype if float, else float32)."""
    compute = dtype or (x.dtype if x.dtype.is_floating_point else torch.float32)
    return Unary(kind, cast(x, compute), compute, tuple(sorted(params.items())))


def predicate(kind: str, x: Value) -> Value:
    """A bool-valued element-wise test (``isnan``, ``isinf``, ``isfinite``, ``signbit``...)."""
    return Unary(kind, x, torch.bool)


def compare(pred: str, a: Value | Number, b: Value | Number, dtype: torch.dtype | None = None) -> Value:
    if dtype is None:
        dtype = promote_values(a, b)
    return Compare(pred, value_of(a, dtype), value_of(b, dtype))


def where(cond: Value, a: Value | Number, b: Value | Number, dtype: torch.dtype) -> Value:
    if isinstance(cond, Const):
        return value_of(a if cond.value else b, dtype)
    return Select(cast(cond, torch.bool), value_of(a, dtype), value_of(b, dtype))


def logical_and(*conds: Value) -> Value:
    out: Value | None = None
    for c in conds:
        c = cast(c, torch.bool)
        out = c if out is None else Binary("and", out, c)
    return out if out is not None else Const(True, torch.bool)


def logical_or(*conds: Value) -> Value:
    out: Value | None = None
    for c in conds:
        c = cast(c, torch.bool)
        out = c if out is None else Binary("or", out, c)
    return out if out is not None else Const(False, torch.bool)


def logical_not(c: Value) -> Value:
    return Compare("eq", cast(c, torch.bool), Const(False, torch.bool))


def index(expr: IndexExpr | int, dtype: torch.dtype = torch.int64) -> Value:
    e = IndexExpr.of(expr)
    if e.is_constant():
        return Const(e.const, dtype)
    v: Value = IndexValue(e)
    return cast(v, dtype)


def in_bounds(subs: Sequence[IndexExpr], shape: Sequence[int]) -> Value:
    """True where every subscript is inside ``[0, n)`` (constant-folded where provable)."""
    conds: list[Value] = []
    for s, n in zip(subs, shape, strict=True):
        lo, hi = s.range()
        if lo >= n or hi < 0:
            return Const(False, torch.bool)
        if lo < 0:
            conds.append(Compare("ge", IndexValue(s), Const(0, torch.int64)))
        if hi >= n:
            conds.append(Compare("lt", IndexValue(s), Const(n, torch.int64)))
    return logical_and(*conds)


def load_or(tv: TensorValue, subs: Sequence[IndexExpr], other: Number) -> Value:
    """``tv[subs]`` where the subscripts are in range, ``other`` elsewhere (padding)."""
    subs = [IndexExpr.of(s) for s in subs]
    cond = in_bounds(subs, tv.shape)
    if isinstance(cond, Const) and cond.value:
        return tv.load(subs)
    if isinstance(cond, Const):
        return Const(other, tv.dtype)
    with guarded_loads():
        value = tv.load(subs)
    return Select(cond, value, Const(other, tv.dtype))


def promote_dtypes(*dtypes: torch.dtype) -> torch.dtype:
    out = dtypes[0]
    for d in dtypes[1:]:
        out = torch.promote_types(out, d)
    return out


def promote_values(*values: Value | Number) -> torch.dtype:
    """torch's result type of values (Python numbers as scalars: they never widen a tensor
    dtype of the same category)."""
    tensors = [v.dtype for v in values if isinstance(v, Value)]
    scalars = [v for v in values if not isinstance(v, Value)]
    probe = [torch.empty((1,), dtype=d, device="meta") for d in tensors]
    if not probe:
        return torch.result_type(torch.tensor(scalars[0]), scalars[1]) if len(scalars) > 1 else \
            torch.tensor(scalars[0]).dtype
    result = probe[0].dtype
    for p in probe[1:]:
        result = torch.promote_types(result, p.dtype)
    for s in scalars:
        result = torch.result_type(torch.empty((1,), dtype=result, device="meta"), s)
    return result


def identity(kind: str, dtype: torch.dtype) -> Number:
    """The neutral element of a reduction ``kind`` in ``dtype``."""
    if kind == "sum":
        return False if dtype == torch.bool else 0
    if kind == "prod":
        return True if dtype == torch.bool else 1
    if kind == "any":
        return False
    if kind == "all":
        return True
    if kind in ("max", "argmax", "shift_max"):
        if dtype.is_floating_point:
            return -math.inf
        return False if dtype == torch.bool else torch.iinfo(dtype).min
    if kind in ("min", "argmin"):
        if dtype.is_floating_point:
            return math.inf
        return True if dtype == torch.bool else torch.iinfo(dtype).max
    raise ValueError(f"no identity for reduction {kind}")
