"""Comparisons, logic and bitwise ops, ``where``/``masked_fill``, casts and ``isclose``."""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.ops import (
    add,
    cast,
    compare,
    logical_and,
    logical_not,
    logical_or,
    mul,
    predicate,
    sub,
    unary,
    where,
)
from ziggurat.backends.cpu.lowering.pointwise import Operand, pointwise, result_dtype
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Value
from ziggurat.dialects.torch.schema import registered_schemas

from ziggurat.backends.cpu.lowering.arithmetic import _binary, _other
from ziggurat.backends.cpu.lowering.elementwise import _self, with_inplace


# -- comparisons and logic ----------------------------------------------------------------

_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "less": "lt", "greater": "gt",
        "less_equal": "le", "greater_equal": "ge", "not_equal": "ne"}


def _cmp_keys() -> tuple[str, ...]:
    known = registered_schemas()
    keys: list[str] = []
    for name in _CMP:
        for ov in ("Tensor", "Scalar"):
            k = f"aten::{name}.{ov}"
            if k in known:
                keys.append(k)
    return with_inplace(*keys)


@lowering(*_cmp_keys())
def compare_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    pred = _CMP[args.name]
    a, c = _self(args), _other(args)
    compute = result_dtype(a, c)
    if args.out_dtype != torch.bool:  # in-place variants keep self's dtype
        return pointwise(ctx, [a, c], args.out_shape, args.out_dtype,
                         lambda x, y: cast(compare(pred, x, y), args.out_dtype), compute)
    return pointwise(ctx, [a, c], args.out_shape, torch.bool, lambda x, y: compare(pred, x, y), compute)


@lowering("aten::logical_and", "aten::logical_or", "aten::logical_xor", "aten::logical_and_", "aten::logical_or_",
          "aten::logical_xor_")
def logical_binary(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    kind = args.name.replace("logical_", "")
    dt = args.out_dtype

    def fn(x: Value, y: Value) -> Value:
        xb, yb = cast(x, torch.bool), cast(y, torch.bool)
        r = Binary(kind, xb, yb)
        return cast(r, dt)

    a, c = _self(args), args.tensor("other")
    return pointwise(ctx, [a, c], args.out_shape, dt, fn, _any_dtype(a, c))


def _any_dtype(a: TensorValue, c: TensorValue) -> torch.dtype:
    return torch.promote_types(a.dtype, c.dtype)


@lowering(*with_inplace("aten::logical_not"))
def logical_not_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    return pointwise(ctx, [x], args.out_shape, args.out_dtype, lambda v: cast(logical_not(cast(v, torch.bool)),
                                                                              args.out_dtype), x.dtype)


_BITWISE = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "__and__": "and", "__or__": "or",
            "__xor__": "xor", "bitwise_left_shift": "shl", "bitwise_right_shift": "shr", "__lshift__": "shl",
            "__rshift__": "shr"}


def _bitwise_keys() -> tuple[str, ...]:
    known = registered_schemas()
    keys = []
    for name in _BITWISE:
        for ov in ("Tensor", "Scalar", "Tensor_Scalar", "Scalar_Tensor"):
            k = f"aten::{name}.{ov}"
            if k in known:
                keys.append(k)
    return with_inplace(*keys)


def _int_only(args: LoweringArgs) -> str | None:
    if args.out_dtype.is_floating_point:
        return "bitwise ops on floats"
    return None


@lowering(*_bitwise_keys(), validator=_int_only)
def bitwise(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    raw = args.key.split("::")[1].split(".")[0]
    op = _BITWISE.get(raw) or _BITWISE[raw.removesuffix("_")]
    a = args.tensor_or_scalar("self")
    return _binary(ctx, args, a, _other(args), lambda x, y: Binary(op, x, y))


# -- where / masked_fill -------------------------------------------------------------------


@lowering("aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar")
def where_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    cond = args.tensor("condition")
    a, c = args.tensor_or_scalar("self"), args.tensor_or_scalar("other")
    dt = args.out_dtype
    operands: list[Operand] = [cond, a, c]

    def element(index):  # type: ignore[no-untyped-def]
        from ziggurat.backends.cpu.lowering.pointwise import read

        cv = cast(read(cond, index, args.out_shape), torch.bool)
        return where(cv, read(a, index, args.out_shape, dt), read(c, index, args.out_shape, dt), dt)

    return ctx.lazy(args.out_shape, dt, element, [v for v in operands if isinstance(v, TensorValue)])


@lowering(*with_inplace("aten::masked_fill.Scalar", "aten::masked_fill.Tensor"))
def masked_fill(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, mask = _self(args), args.tensor("mask")
    value = args.tensor_or_scalar("value")
    dt = args.out_dtype

    def element(index):  # type: ignore[no-untyped-def]
        from ziggurat.backends.cpu.lowering.pointwise import read

        m = cast(read(mask, index, args.out_shape), torch.bool)
        return where(m, read(value, index, args.out_shape, dt), read(x, index, args.out_shape, dt), dt)

    return ctx.lazy(args.out_shape, dt, element, [x, mask])


# -- casts -----------------------------------------------------------------------------------


@lowering("aten::to.dtype", "aten::to.dtype_layout", "aten::to.other", "aten::to.device", "aten::_to_copy",
          "aten::type_as", "aten::_cast_Float", "aten::_cast_Long", "aten::_cast_Int")
def to_dtype(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    device = args.get("device")
    if device is not None and str(device) not in ("cpu",) and not str(device).startswith("cpu"):
        raise NotLowerable(f"moves the tensor to {device}")
    from ziggurat.backends.cpu.lowering.gemm_bf16 import widened_result

    widened = widened_result(ctx, args, x)
    if widened is not None:
        return widened
    return pointwise(ctx, [x], args.out_shape, args.out_dtype, lambda v: v, x.dtype)


@lowering("aten::isclose")
def isclose(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """Eager's rule: ``x == y``, or both NaN with ``equal_nan``, or (unless both tolerances are
    0) a *finite* ``|x - y|`` within ``atol + |rtol * y|`` (so an infinity is close only to
    itself, even with an infinite tolerance).  Integers subtract in their dtype (wrapping as
    eager) and compare with the tolerance in float32; bools compute in float32."""
    rtol, atol = float(args.static("rtol", 1e-5)), float(args.static("atol", 1e-8))
    equal_nan = bool(args.static("equal_nan", False))
    a, c = _self(args), args.tensor("other")
    compute = torch.promote_types(a.dtype, c.dtype)
    tol_dt = compute if compute.is_floating_point else torch.float32

    def fn(x: Value, y: Value) -> Value:
        close = compare("eq", x, y)
        if equal_nan and compute.is_floating_point:
            close = logical_or(close, logical_and(predicate("isnan", x), predicate("isnan", y)))
        if rtol == 0 and atol == 0:
            return close
        if compute == torch.bool:
            x, y = cast(x, tol_dt), cast(y, tol_dt)
        allowed = add(atol, unary("abs", mul(rtol, cast(y, tol_dt), tol_dt), tol_dt), tol_dt)
        actual = cast(unary("abs", sub(x, y, x.dtype), x.dtype), tol_dt)
        within = compare("le", actual, allowed, tol_dt)
        if tol_dt.is_floating_point:
            within = logical_and(predicate("isfinite", actual), within)
        return logical_or(close, within)

    return pointwise(ctx, [a, c], args.out_shape, torch.bool, fn, compute)
