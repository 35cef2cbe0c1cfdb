"""A compiled function's Python-level signature: input names and output structure.

The output structure is a small Python-literal string over the flat results,
e.g. ``"(%0, %1)"`` for a tuple of two tensors, ``"%0"`` for one tensor, or
``"(%0, 2)"`` when the model also returns a compile-time constant; it is kept on
``func.func @forward`` as ``ziggurat.outputs`` so every backend rebuilds the
model's output structure the same way.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, i64

OUTPUTS_ATTR = "ziggurat.outputs"
INPUT_NAMES_ATTR = "ziggurat.input_names"
INPUT_WRITES_ATTR = "ziggurat.input_writes"
_REF = re.compile(r"%(\d+)")
_PREFIX = "__ziggurat_result_"


def format_structure(tree: Any) -> str:
    """Text of a structure tree made of ``Ref`` ints (as ``("ref", i)``), tuples, lists, constants."""
    if isinstance(tree, tuple) and len(tree) == 2 and tree[0] == "ref":  # pyright: ignore
        return f"%{tree[1]}"
    if isinstance(tree, tuple):
        items = [format_structure(t) for t in tree]  # pyright: ignore[reportUnknownVariableType]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(tree, list):
        return "[" + ", ".join(format_structure(t) for t in tree) + "]"  # pyright: ignore
    return repr(tree)


@lru_cache(maxsize=256)
def _parse(structure: str) -> Any:
    return ast.literal_eval(_REF.sub(lambda m: repr(_PREFIX + m.group(1)), structure))


def rebuild(structure: str, results: Sequence[Any]) -> Any:
    """The model-shaped output from the flat results."""
    if structure == "%0":
        return results[0]
    tree = _parse(structure)

    def walk(node: Any) -> Any:
        if isinstance(node, str) and node.startswith(_PREFIX):
            return results[int(node[len(_PREFIX):])]
        if isinstance(node, tuple):
            return tuple(walk(n) for n in node)  # pyright: ignore[reportUnknownVariableType]
        if isinstance(node, list):
            return [walk(n) for n in node]  # pyright: ignore[reportUnknownVariableType]
        if isinstance(node, dict | set):
            return copy.deepcopy(node)  # the parsed tree is shared between calls
        return node

    return walk(tree)


def set_signature(fn: func.FuncOp, input_names: Sequence[str], structure: str) -> None:
    fn.attributes[OUTPUTS_ATTR] = StringAttr(structure)
    fn.attributes[INPUT_NAMES_ATTR] = ArrayAttr([StringAttr(n) for n in input_names])


def set_input_writes(fn: func.FuncOp, writes: Sequence[tuple[int, int]]) -> None:
    """The model mutates some of its inputs in place: after each call, result ``r`` is copied
    into tensor input ``i`` for every ``(r, i)`` pair, as eager would have written it.
    Those results are not part of the output structure."""
    if writes:
        flat = [k for pair in writes for k in pair]
        fn.attributes[INPUT_WRITES_ATTR] = DenseArrayBase.from_list(i64, flat)


def input_writes(fn: func.FuncOp) -> list[tuple[int, int]]:
    attr = fn.attributes.get(INPUT_WRITES_ATTR)
    if not isinstance(attr, DenseArrayBase):
        return []
    flat = [int(v) for v in attr.get_values()]  # pyright: ignore[reportUnknownArgumentType]
    return list(zip(flat[0::2], flat[1::2], strict=True))


def output_structure(fn: func.FuncOp) -> str:
    attr = fn.attributes.get(OUTPUTS_ATTR)
    if isinstance(attr, StringAttr):
        return attr.data
    n = len(fn.function_type.outputs.data)
    return "%0" if n == 1 else format_structure(tuple(("ref", i) for i in range(n)))


def input_names(fn: func.FuncOp) -> list[str]:
    attr = fn.attributes.get(INPUT_NAMES_ATTR)
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]  # pyright: ignore
    return [f"arg{i}" for i in range(len(fn.function_type.inputs.data))]
