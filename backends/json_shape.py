"""The expected shape of a JSON document (the headers of saved modules and payloads).

A shape is written as the value it describes:

* a Python type (``str``, ``int``, ``float``, ``bool``, ``dict``, ``list``, ``type(None)``)
  or a tuple of them: the value is one of those (a JSON ``true`` is not an ``int``);
* a dict ``{"key": shape}``: an object holding those keys (others are allowed);
  ``OptionalKey(shape)`` marks a key that may be absent;
* a one-element list ``[shape]``: an array whose every element has that shape.

:func:`shape_problem` says where a document departs from its shape, or returns ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
               dict: "an object", list: "an array", type(None): "null"}


@dataclass(frozen=True)
class OptionalKey:
    """A key of an object that may be absent."""

    shape: Any


def _is(value: object, kind: type) -> bool:
    if isinstance(value, bool) and kind is not bool:
        return False
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _describe(value: object) -> str:
    for kind, name in _TYPE_NAMES.items():
        if _is(value, kind):
            return name
    return type(value).__name__


def shape_problem(value: object, shape: Any, where: str = "") -> str | None:
    """``None`` when ``value`` has ``shape``, else what and where the first difference is."""
    at = where or "the document"
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{at} is {_describe(value)}, not an object"
        for key, sub in shape.items():  # pyright: ignore[reportUnknownVariableType]
            optional = isinstance(sub, OptionalKey)
            if key not in value:
                if optional:
                    continue
                return f"{at} lacks '{key}'"
            problem = shape_problem(value[key], sub.shape if optional else sub, f"{where}.{key}".lstrip("."))
            if problem:
                return problem
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{at} is {_describe(value)}, not an array"
        for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType]
            problem = shape_problem(item, shape[0], f"{where}[{i}]")
            if problem:
                return problem
        return None
    kinds: tuple[type, ...] = shape if isinstance(shape, tuple) else (shape,)
    if not any(_is(value, k) for k in kinds):
        expected = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        return f"{at} is {_describe(value)}, not {expected}"
    return None


__all__ = ["OptionalKey", "shape_problem"]
