"""The ``dense_resource`` attributes a piece of IR refers to (at any depth of its
properties and attributes)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ArrayAttr, DenseResourceAttr, DictionaryAttr
from xdsl.ir import Attribute, Operation, ParametrizedAttribute


def resource_attrs(attr: Attribute) -> Iterator[DenseResourceAttr]:
    """The ``dense_resource`` attributes in ``attr`` (itself included)."""
    if isinstance(attr, DenseResourceAttr):
        yield attr
    elif isinstance(attr, ArrayAttr):
        for a in attr.data:  # pyright: ignore[reportUnknownVariableType]
            yield from resource_attrs(a)  # pyright: ignore[reportUnknownArgumentType]
    elif isinstance(attr, DictionaryAttr):
        for a in attr.data.values():
            yield from resource_attrs(a)
    elif isinstance(attr, ParametrizedAttribute):
        for a in attr.parameters:
            yield from resource_attrs(a)


def op_resource_attrs(root: Operation) -> Iterator[tuple[Operation, DenseResourceAttr]]:
    """(op, attribute) for every ``dense_resource`` of the ops under ``root`` (included)."""
    for op in root.walk():
        for attr in (*op.properties.values(), *op.attributes.values()):
            for found in resource_attrs(attr):
                yield op, found


def referenced_handles(root: Operation) -> set[str]:
    """Every ``dense_resource`` handle the ops under ``root`` (included) refer to."""
    return {attr.resource_handle.data for _op, attr in op_resource_attrs(root)}


__all__ = ["op_resource_attrs", "referenced_handles", "resource_attrs"]
