"""The ``dense_resource`` attributes a piece of IR refers to (at any depth of its
properties and attributes)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ArrayAttr, DenseResourceAttr, DictionaryAttr
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, TypeAttribute


def resource_attrs(attr: Attribute) -> Iterator[DenseResourceAttr]:
    """The ``dense_resource`` attributes in ``attr`` (itself included), in order.

    Types are not looked into: a type's parameters are shapes, element types and names, never a
    resource (the walk runs after every pass of a compile, and most of what it met were the
    ``tensor<...>`` types of literals)."""
    pending: list[Attribute] = [attr]
    while pending:
        a = pending.pop()
        if isinstance(a, DenseResourceAttr):
            yield a
        elif isinstance(a, ArrayAttr):
            pending.extend(reversed(a.data))  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(a, DictionaryAttr):
            pending.extend(reversed(list(a.data.values())))
        elif isinstance(a, ParametrizedAttribute) and not isinstance(a, TypeAttribute):
            pending.extend(reversed(a.parameters))


def op_resource_attrs(root: Operation) -> Iterator[tuple[Operation, DenseResourceAttr]]:
    """(op, attribute) for every ``dense_resource`` of the ops under ``root`` (included)."""
    for op in root.walk():
        for attrs in (op.properties, op.attributes):
            for attr in attrs.values():
                for found in resource_attrs(attr):
                    yield op, found


def referenced_handles(root: Operation) -> set[str]:
    """Every ``dense_resource`` handle the ops under ``root`` (included) refer to."""
    return {attr.resource_handle.data for _op, attr in op_resource_attrs(root)}


__all__ = ["op_resource_attrs", "referenced_handles", "resource_attrs"]
