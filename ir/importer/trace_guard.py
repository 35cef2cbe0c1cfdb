"""Catch what tracing would silently specialize: a tensor computed from input *values*
turned into a Python bool, number, index or list (``if x.sum() > 0:``, ``int(x.max())``,
``x.tolist()``).

``torch.jit.trace`` records tensor ops, not Python control flow: the branch the example
inputs took is baked into the graph, and every other input gets its result. Tracing warns
(``TracerWarning``) on every such conversion, but it warns the same way for conversions of
*shapes* (``nn.MultiheadAttention`` compares sizes while traced), which are static in a
compiled module and therefore harmless. So the conversions are watched directly: while
tracing, the conversion methods of ``torch.Tensor`` check the traced value they convert,
and a conversion whose value depends on the data of a graph input (not only on its shape,
through ``aten::size``) is recorded with the user's source line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from ziggurat.dialects.torch.result_types import UNTAGGED_DATA_DEPENDENT
from ziggurat.ir.locations import is_library_file

#: Tensor methods that turn a tensor into a Python value, and what they turn it into.
_CONVERSIONS = {
    "__bool__": "a Python bool", "__int__": "a Python int", "__float__": "a Python float",
    "__index__": "a Python index", "__complex__": "a Python complex", "item": "a Python number",
    "tolist": "a Python list",
}

#: Functions (of ``torch`` and methods of ``torch.Tensor``) that compare tensors' values and
#: return a Python bool directly from C++, so no conversion method of a tensor sees it.
_VALUE_PREDICATES = {"allclose": "torch.allclose", "equal": "torch.equal", "is_nonzero": "torch.is_nonzero"}

#: Nodes whose result depends only on the shape/dtype/device of their inputs.
_SHAPE_ONLY = {"aten::size", "aten::sym_size", "aten::dim", "aten::numel", "aten::sym_numel",
               "prim::shape", "aten::len", "prim::device", "prim::dtype", "prim::layout",
               "prim::is_cuda", "aten::is_floating_point", "prim::Constant", "prim::GetAttr"}


#: Shape queries whose answer is data when the tensor's shape depends on data (``nonzero``).
_SIZE_QUERIES = {"aten::size", "aten::sym_size", "aten::numel", "aten::sym_numel", "prim::shape", "aten::len"}


@dataclass(frozen=True)
class Specialization:
    """A conversion that would bake the example's values into the trace."""

    conversion: str
    file: str
    line: int


def _any_producer(value: torch._C.Value, visit: Callable[[torch._C.Value], bool | None]) -> bool:
    """Walk ``value`` and the graph values it is computed from, each once: ``visit`` says True
    (found: stop), False (do not look past this value) or None (look at its node's inputs, and
    at the results of the node's blocks)."""
    stack, seen = [value], set[int]()
    while stack:
        v = stack.pop()
        # v.unique(), not id(v): the Python wrappers of graph values are made on the fly, and a
        # freed wrapper's id is reused by the next one (a value never visited counted as seen)
        if v.unique() in seen:
            continue
        seen.add(v.unique())
        verdict = visit(v)
        if verdict:
            return True
        if verdict is None:
            node = v.node()
            stack.extend(node.inputs())
            for block in node.blocks():
                stack.extend(block.returnNode().inputs())
    return False


def _reads_input_data(value: torch._C.Value) -> bool:
    """Whether ``value`` (in the graph being traced) is computed from a graph input's data."""
    def visit(v: torch._C.Value) -> bool | None:
        node = v.node()
        kind = node.kind()
        if kind == "prim::Param":
            return isinstance(v.type(), torch._C.TensorType)  # pyright: ignore[reportPrivateUsage]
        if kind in _SHAPE_ONLY:
            # nonzero(x).size(0) > 2: the size of a data-dependent shape is data
            return kind in _SIZE_QUERIES and any(_shape_depends_on_data(i) for i in node.inputs())
        return None
    return _any_producer(value, visit)


def _makes_dynamic_shape(node: torch._C.Node) -> bool:
    """An op whose result shape depends on its inputs' values (torch's ``dynamic_output_shape``
    tag); ``index`` only with a boolean or uint8 index."""
    try:
        text = node.schema()
        if text == "(no schema)":
            return False
        schema = torch._C.parse_schema(text)  # pyright: ignore[reportPrivateUsage]
        if schema.name + (f".{schema.overload_name}" if schema.overload_name else "") in UNTAGGED_DATA_DEPENDENT:
            return True
        packet = getattr(torch.ops.aten, schema.name.split("::", 1)[1]) if schema.name.startswith("aten::") else None
        overload = getattr(packet, schema.overload_name or "default") if packet is not None else None
    except (AttributeError, RuntimeError):
        return False
    if overload is None or torch.Tag.dynamic_output_shape not in overload.tags:  # pyright: ignore
        return False
    if node.kind() in ("aten::index", "aten::index_put", "aten::index_put_"):
        return any(_is_mask(v) for v in node.inputs())
    return True


def _is_mask(value: torch._C.Value) -> bool:
    types = [value.type()]
    if value.node().kind() == "prim::ListConstruct":
        types = [v.type() for v in value.node().inputs()]
    for ty in types:
        if isinstance(ty, torch._C.OptionalType):  # pyright: ignore[reportPrivateUsage]
            ty = ty.getElementType()
        if isinstance(ty, torch._C.TensorType) and ty.scalarType() in ("Bool", "Byte", None):  # pyright: ignore
            return True
    return False


def _shape_depends_on_data(value: torch._C.Value) -> bool:
    """Whether ``value`` is computed (through any path) from an op whose result shape depends
    on data: then its own shape may too (conservatively)."""
    def visit(v: torch._C.Value) -> bool | None:
        node = v.node()
        if node.kind() in ("prim::Param", "prim::Constant", "prim::GetAttr"):
            return False
        return True if _makes_dynamic_shape(node) else None
    return _any_producer(value, visit)


def _user_frame() -> tuple[str, int]:
    frame = sys._getframe(2)  # pyright: ignore[reportPrivateUsage]
    while frame is not None:
        path = frame.f_code.co_filename
        if not is_library_file(path):
            return path, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def _depends_on_data(tensor: torch.Tensor) -> bool:
    try:
        value = torch._C._get_value_trace(tensor)  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    except RuntimeError:
        return True  # a tensor the tracer does not know: assume the worst
    return _reads_input_data(value)


def _watched(name: str, original: Callable[..., Any], found: list[Specialization]) -> Callable[..., Any]:
    what = _CONVERSIONS[name]

    def convert(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if torch._C._is_tracing() and not found and _depends_on_data(self):  # pyright: ignore[reportPrivateUsage]
            file, line = _user_frame()
            found.append(Specialization(f"a tensor computed from the inputs' values becomes {what}",
                                        file, line))
        return original(self, *args, **kwargs)

    return convert


def _watched_predicate(label: str, original: Callable[..., Any], found: list[Specialization]) -> Callable[..., Any]:
    def predicate(*args: Any, **kwargs: Any) -> Any:
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        if torch._C._is_tracing() and not found and any(_depends_on_data(t) for t in tensors):  # pyright: ignore[reportPrivateUsage]
            file, line = _user_frame()
            found.append(Specialization(f"{label} of tensors computed from the inputs' values becomes a Python bool",
                                        file, line))
        return original(*args, **kwargs)

    return predicate


@contextmanager
def watch_conversions() -> Iterator[list[Specialization]]:
    """While active, data-dependent conversions during tracing are appended to the list:
    a tensor's conversion methods, and the value predicates that return a Python bool
    (``torch.allclose``, ``torch.equal``, ``torch.is_nonzero`` and their methods)."""
    found: list[Specialization] = []
    base = torch._C.TensorBase  # pyright: ignore[reportPrivateUsage]
    functions = {name: getattr(torch, name) for name in _VALUE_PREDICATES}
    for name in _CONVERSIONS:
        setattr(torch.Tensor, name, _watched(name, getattr(base, name), found))
    for name, label in _VALUE_PREDICATES.items():
        setattr(torch.Tensor, name, _watched_predicate(label, getattr(base, name), found))
        setattr(torch, name, _watched_predicate(label, functions[name], found))
    try:
        yield found
    finally:
        for name in (*_CONVERSIONS, *_VALUE_PREDICATES):
            if name in torch.Tensor.__dict__:
                delattr(torch.Tensor, name)
        for name, function in functions.items():
            setattr(torch, name, function)
