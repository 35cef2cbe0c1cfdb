"""A compiled function's Python-level signature: how it is called and what it returns.

The output structure (``ziggurat.outputs`` on ``func.func @forward``) is the text of a
``ziggurat.ir.structure`` tree over the flat results, e.g. ``"(%0, %1)"`` for a tuple of two
tensors, ``"%0"`` for one tensor, ``"(%0, 2)"`` when the model also returns a compile-time
constant, ``"transformers.modeling_outputs.BaseModelOutput(last_hidden_state=%0)"`` for a Hugging
Face output, so every backend rebuilds the model's output the same way. A model compiled from
Python also keeps its call signature (``ziggurat.signature``, see ``call_signature``): its
parameters, which were given, and the values they were compiled for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Operation

from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.structure import Ref, build, describe, format_tree, parse_tree

OUTPUTS_ATTR = "ziggurat.outputs"
INPUT_NAMES_ATTR = "ziggurat.input_names"
INPUT_WRITES_ATTR = "ziggurat.input_writes"
CALL_SIGNATURE_ATTR = "ziggurat.signature"
#: set when an op addresses the storage of a value (``as_strided``): what it reads depends on
#: the strides of the inputs, so a call must pass them in the compiled (row-major) layout
STORAGE_READ_ATTR = "ziggurat.reads_storage"
_STORAGE_OPS = frozenset({"aten::as_strided", "aten::as_strided_copy", "aten::as_strided_scatter",
                          "aten::_reshape_alias"})


def _refs(tree: Any) -> Any:
    if isinstance(tree, tuple) and len(tree) == 2 and tree[0] == "ref":  # pyright: ignore
        return Ref(tree[1])  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(tree, tuple | list):
        items = [_refs(t) for t in tree]  # pyright: ignore[reportUnknownVariableType]
        return tuple(items) if isinstance(tree, tuple) else items
    if isinstance(tree, dict):
        return {k: _refs(v) for k, v in tree.items()}  # pyright: ignore[reportUnknownVariableType]
    return tree


def _no_tensor(_: Any) -> int:
    raise AssertionError("a structure tree holds references, not tensors")


def format_structure(tree: Any) -> str:
    """Text of a structure tree made of ``("ref", i)`` pairs or ``Ref``s, tuples, lists, dicts,
    constants (and the other containers ``ziggurat.ir.structure`` knows)."""
    return format_tree(describe(_refs(tree), _no_tensor))


def rebuild(structure: str, results: Sequence[Any]) -> Any:
    """The model-shaped output from the flat results."""
    if structure == "%0":
        return results[0]
    return build(parse_tree(structure), results)


def forward_function(module: ModuleOp, name: str = "forward") -> func.FuncOp:
    """The function ``@name`` of ``module`` (``KeyError`` if there is none)."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(f"the module has no function @{name}")


def enclosing_function(op: Operation) -> func.FuncOp | None:
    """The function ``op`` is in (itself if it is one), or None."""
    current: Operation | None = op
    while current is not None and not isinstance(current, func.FuncOp):
        current = current.parent_op()
    return current


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


def set_call_signature(fn: func.FuncOp, signature: CallSignature) -> None:
    fn.attributes[CALL_SIGNATURE_ATTR] = StringAttr(signature.text())


def call_signature(fn: func.FuncOp) -> CallSignature | None:
    attr = fn.attributes.get(CALL_SIGNATURE_ATTR)
    return CallSignature.parse(attr.data) if isinstance(attr, StringAttr) else None


def addresses_storage(op: Operation) -> bool:
    """Whether ``op`` reads its operand's storage rather than its elements (``as_strided``)."""
    key = getattr(op, "aten_key", None) if op.name.startswith("torch.") else None
    return isinstance(key, str) and key.split(".")[0] in _STORAGE_OPS


def mark_storage_reads(fn: func.FuncOp) -> None:
    """Set ``STORAGE_READ_ATTR`` on ``fn`` when one of its ops addresses storage."""
    if any(addresses_storage(op) for op in fn.walk()):
        fn.attributes[STORAGE_READ_ATTR] = UnitAttr()


def reads_storage(fn: func.FuncOp) -> bool:
    return STORAGE_READ_ATTR in fn.attributes


def input_names(fn: func.FuncOp) -> list[str]:
    attr = fn.attributes.get(INPUT_NAMES_ATTR)
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]  # pyright: ignore
    return [f"arg{i}" for i in range(len(fn.function_type.inputs.data))]
