"""Scalar queries and conversions of static values (``size``, ``dim``, ``numel``, ``Int``...).

Shapes are static, so these are answered at compile time: the result is a Python value
that later ops read as a constant.  Conversions of tensors to scalars (``Int.Tensor``,
``item``) depend on data and run through torch.
"""

from __future__ import annotations

import math
from typing import Any

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.views import norm_dim


@lowering("aten::size", "aten::size.int", "aten::sym_size.int", "aten::dim", "aten::numel", "aten::sym_numel")
def shape_query(ctx: LoweringContext, args: LoweringArgs) -> Any:
    x = args.tensor("self")
    if args.name == "dim":
        return x.rank
    if args.name in ("numel", "sym_numel"):
        return math.prod(x.shape)
    if args.has("dim"):
        return x.shape[norm_dim(int(args.static("dim")), x.rank)]
    return list(x.shape)


def _scalar(args: LoweringArgs, name: str) -> Any:
    value = args.get(name)
    if isinstance(value, TensorValue) or not isinstance(value, bool | int | float):
        raise NotLowerable(f"'{name}' is not a compile-time number")
    return value


@lowering("aten::Int.Scalar", "aten::Int.bool", "aten::Int.float")
def to_int(ctx: LoweringContext, args: LoweringArgs) -> int:
    return int(_scalar(args, "a"))


@lowering("aten::Float.Scalar", "aten::Float.bool", "aten::Float.int")
def to_float(ctx: LoweringContext, args: LoweringArgs) -> float:
    return float(_scalar(args, "a"))


@lowering("aten::Bool.int", "aten::Bool.float")
def to_bool(ctx: LoweringContext, args: LoweringArgs) -> bool:
    return bool(_scalar(args, "a"))


@lowering("aten::__not__")
def not_(ctx: LoweringContext, args: LoweringArgs) -> bool:
    return not bool(_scalar(args, "self"))
