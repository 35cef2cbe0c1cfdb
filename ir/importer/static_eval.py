"""Evaluating TorchScript's scalar/list/str builtins on values known at compile time.

Scripted code computes shapes and options with ``aten::len``, ``aten::__getitem__``,
``aten::eq.int``, ``aten::format``... on constants; the importer folds these with
plain Python (torch's own kernels reject Python lists for generic ``t[]`` arguments).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import torch

_NO_RESULT = object()


def _div(a: Any, b: Any) -> float:
    return a / b


def _format(fmt: str, *args: Any) -> str:
    return fmt.replace("{}", "{!s}").format(*args) if "{}" in fmt else fmt


def _getitem(container: Any, index: Any) -> Any:
    return container[index]


def _append(lst: list[Any], value: Any) -> list[Any]:
    lst.append(value)
    return lst


def _to_int(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return int(value.item())
    return int(value)


def _to_float(value: Any) -> float:
    if isinstance(value, torch.Tensor):
        return float(value.item())
    return float(value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return bool(value.item())
    return bool(value)


def _size(tensor: torch.Tensor, dim: int | None = None) -> Any:
    return list(tensor.shape) if dim is None else int(tensor.shape[dim])


_BUILTINS: dict[str, Callable[..., Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": _div,
    "floordiv": operator.floordiv, "remainder": operator.mod, "neg": operator.neg,
    "pow": operator.pow, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge, "__and__": operator.and_,
    "__or__": operator.or_, "__xor__": operator.xor, "__not__": operator.not_,
    "__is__": operator.is_, "__isnot__": operator.is_not,
    "__contains__": lambda c, x: x in c, "len": len, "__getitem__": _getitem,
    "Int": _to_int, "Float": _to_float, "Bool": _to_bool, "ScalarImplicit": lambda x: x,
    "IntImplicit": _to_int, "FloatImplicit": _to_float, "str": str, "format": _format,
    "min": min, "max": max, "abs": abs, "floor": math.floor, "ceil": math.ceil,
    "sqrt": math.sqrt, "list": list, "append": _append, "size": _size,
    "dim": lambda t: t.dim(), "numel": lambda t: t.numel(), "device": lambda t: t.device,
    "dtype": lambda t: t.dtype, "layout": lambda t: t.layout, "shape": lambda t: list(t.shape),
    "is_cuda": lambda t: t.is_cuda, "requires_grad": lambda t: False,
    "__range_length": lambda lo, hi, step: max(0, (hi - lo + step - (1 if step > 0 else -1)) // step),
    "__derive_index": lambda index, start, step: start + index * step,
    "warn": lambda *a: None, "_set_item": lambda lst, i, v: lst.__setitem__(i, v) or lst,
}


def evaluate(kind: str, args: list[Any]) -> Any:
    """The Python result of a builtin, or ``NotImplemented`` when there is no Python form."""
    name = kind.split("::", 1)[1]
    fn = _BUILTINS.get(name)
    if fn is None:
        return NotImplemented
    return fn(*args)
