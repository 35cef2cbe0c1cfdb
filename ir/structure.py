"""The shape of the Python values a model takes and returns, over flat tensors.

A structure is a tree whose leaves are tensors (``Leaf``: the i-th flat value) or constants
(``Const``: numbers, strings, ``None``, dtypes, devices), and whose inner nodes are the
containers a model may use (``Container``): tuples, lists, dicts, named tuples, dict
subclasses (``OrderedDict``, Hugging Face ``ModelOutput``s), tuple/list subclasses
(``torch.Size``) and plain objects rebuilt from their attributes (dataclasses, caches).

Its text is a Python expression, readable in the IR and parsed back with ``ast``::

    transformers.modeling_outputs.BaseModelOutput(last_hidden_state=%0, hidden_states=(%1, %2))
    {'logits': %0, 'aux': [None, 3]}

``describe`` turns a value into a structure, ``format_tree``/``parse_tree`` convert to and from
text, ``build`` makes the value from the flat leaves.
"""

from __future__ import annotations

import ast
import copyreg
import dataclasses
import keyword
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.python_classes import class_name, find_class

_LITERALS = (type(None), bool, int, float, complex, str, bytes)
_REF = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|%(\d+)""")
_REF_NAME = "__ref_"


@dataclass(frozen=True)
class Leaf:
    """The ``index``-th flat value (a tensor)."""

    index: int


@dataclass(frozen=True)
class Ref:
    """A stand-in for the ``index``-th flat value inside a Python value that ``describe`` reads."""

    index: int


@dataclass(frozen=True)
class Const:
    """A value fixed at compile time: a literal, a ``torch.dtype`` or a ``torch.device``."""

    value: Any

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Const) and same_constant(self.value, other.value)

    def __hash__(self) -> int:
        return hash((type(self.value), repr(self.value)))


@dataclass(frozen=True)
class Container:
    """``kind``: tuple, list, dict (plain), or for a class ``cls``: namedtuple, mapping,
    sequence, object. ``keys``: dict keys, field or attribute names (empty for sequences)."""

    kind: str
    items: tuple[Node, ...]
    keys: tuple[Any, ...] = ()
    cls: type | None = None


Node = Leaf | Const | Container


def same_constant(a: Any, b: Any) -> bool:
    """Equal constants of the same type (``1 != True``, NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# -- classes ------------------------------------------------------------------------------------
def _default_reduce(cls: type) -> bool:
    """Objects that pickle as their ``__dict__`` (no custom reduce/state hooks)."""
    return (cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
            and getattr(cls, "__getstate__", object.__getstate__) is object.__getstate__  # pyright: ignore
            and not hasattr(cls, "__setstate__") and cls.__new__ is object.__new__)


def kind_of_class(cls: type) -> str | None:
    """How instances of ``cls`` are taken apart and rebuilt; None when they cannot be."""
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "namedtuple"
    if issubclass(cls, dict):
        return "mapping"
    if issubclass(cls, tuple | list):
        return "sequence"
    if isinstance(cls, type) and _default_reduce(cls) and "__dict__" in dir(cls):
        return "object"
    return None


def _kwargs_form(cls: type) -> bool:
    """A mapping class built with keywords (a dataclass dict, e.g. a Hugging Face ``ModelOutput``)."""
    return dataclasses.is_dataclass(cls)


# -- value -> structure -----------------------------------------------------------------------
class _Describer:
    def __init__(self, on_tensor: Callable[[torch.Tensor], int | Const], what: str) -> None:
        self.on_tensor = on_tensor
        self.what = what
        self.active: set[int] = set()

    def error(self, path: str, message: str) -> ZigguratError:
        return ZigguratError(f"{path}: {message}", op=self.what)

    def node(self, value: Any, path: str) -> Node:
        if isinstance(value, torch.Tensor):
            index = self.on_tensor(value)
            return Leaf(index) if isinstance(index, int) else index
        if isinstance(value, Ref):
            return Leaf(value.index)
        if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
            raise self.error(path, "is a Python number computed from tensor values; a compiled module "
                             "returns numbers fixed at compile time only (return a tensor instead)")
        if isinstance(value, _LITERALS + (torch.dtype, torch.device)):
            return Const(value)
        if id(value) in self.active:
            raise self.error(path, f"a {type(value).__name__} that contains itself cannot be compiled")
        self.active.add(id(value))
        try:
            return self._container(value, path)
        finally:
            self.active.discard(id(value))

    def _container(self, value: Any, path: str) -> Node:
        cls = type(value)
        if cls is tuple or cls is list:
            items = tuple(self.node(v, f"{path}[{i}]") for i, v in enumerate(value))  # pyright: ignore
            return Container(cls.__name__, items)
        if cls is dict:
            return Container("dict", *self._mapping(value, path))  # pyright: ignore[reportUnknownArgumentType]
        kind = kind_of_class(cls)
        if kind is None:
            raise self.error(path, f"is a {cls.__module__}.{cls.__qualname__}, which a compiled module cannot "
                             "rebuild (it is no tensor, number, string, dtype, device, tuple, list, dict, "
                             "named tuple, dataclass or plain object)")
        if kind == "namedtuple":
            fields = tuple(value._fields)
            items = tuple(self.node(v, f"{path}.{f}") for f, v in zip(fields, value, strict=True))
            return Container(kind, items, fields, cls)
        if kind == "mapping":
            items, keys = self._mapping(value, path)
            return Container(kind, items, keys, cls)
        if kind == "sequence":
            return Container(kind, tuple(self.node(v, f"{path}[{i}]") for i, v in enumerate(value)), (), cls)
        state: dict[str, Any] = vars(value)
        keys = tuple(state)
        if not all(isinstance(k, str) and k.isidentifier() for k in keys):
            raise self.error(path, f"a {cls.__qualname__} with attribute names that are not identifiers "
                             "cannot be compiled")
        return Container(kind, tuple(self.node(state[k], f"{path}.{k}") for k in keys), keys, cls)

    def _mapping(self, value: dict[Any, Any], path: str) -> tuple[tuple[Node, ...], tuple[Any, ...]]:
        keys = tuple(value)
        for k in keys:
            if not isinstance(k, str | int | bool | type(None)):
                raise self.error(path, f"has the key {k!r}; keys must be strings, integers, booleans or None")
        return tuple(self.node(value[k], f"{path}[{k!r}]") for k in keys), keys


def describe(value: Any, on_tensor: Callable[[torch.Tensor], int | Const], what: str = "output",
             path: str = "output") -> Node:
    """The structure of ``value``; ``on_tensor`` is called for each tensor leaf, in order, and
    returns its flat index (or the constant it stands for). ``what``/``path`` name the value in
    errors."""
    return _Describer(on_tensor, what).node(value, path)


def tensor_leaves(value: Any, what: str = "output") -> list[torch.Tensor]:
    """The tensors of ``value`` in the order of its structure's flat values."""
    leaves: list[torch.Tensor] = []

    def add(t: torch.Tensor) -> int:
        leaves.append(t)
        return len(leaves) - 1

    describe(value, add, what, what)
    return leaves


# -- structure -> value -----------------------------------------------------------------------
def build(node: Node, leaves: Sequence[Any]) -> Any:
    """The value of structure ``node`` over the flat ``leaves``."""
    if isinstance(node, Leaf):
        return leaves[node.index]
    if isinstance(node, Const):
        return node.value
    items = [build(n, leaves) for n in node.items]
    kind, cls = node.kind, node.cls
    if kind == "tuple":
        return tuple(items)
    if kind == "list":
        return items
    if kind == "dict":
        return dict(zip(node.keys, items, strict=True))
    assert cls is not None
    if kind == "namedtuple":
        return cls._make(items)  # pyright: ignore[reportAttributeAccessIssue]
    if kind == "mapping":
        mapping = dict(zip(node.keys, items, strict=True))
        return cls(**mapping) if _kwargs_form(cls) else cls(mapping)
    if kind == "sequence":
        return cls(items)
    obj = copyreg.__newobj__(cls)  # pyright: ignore[reportAttributeAccessIssue]  # cls.__new__(cls), as pickle
    obj.__dict__.update(zip(node.keys, items, strict=True))
    return obj


def leaf_count(node: Node) -> int:
    if isinstance(node, Leaf):
        return node.index + 1
    if isinstance(node, Container):
        return max((leaf_count(n) for n in node.items), default=0)
    return 0


def check_rebuilds(node: Node, value: Any, leaves: Sequence[Any], what: str, path: str) -> None:
    """Building ``node`` from ``leaves`` gives a value shaped as ``value`` (same types, keys and
    attributes all the way down), or a :class:`ZigguratError` says where it differs."""
    try:
        rebuilt = build(node, leaves)
    except Exception as e:  # noqa: BLE001 - a user class's constructor
        raise ZigguratError(f"{path}: rebuilding it from its parts fails ({type(e).__name__}: {e})",
                            op=what) from None
    problem = _difference(value, rebuilt, path)
    if problem:
        raise ZigguratError(f"{problem}, so a compiled module cannot return it", op=what)


def _difference(a: Any, b: Any, path: str) -> str | None:
    if isinstance(a, torch.Tensor):  # a 0-d tensor may stand for a traced size (a number)
        number = isinstance(b, int | float) and a.dim() == 0 and a.item() == b
        return None if isinstance(b, torch.Tensor) or number else f"{path} rebuilds as a {type(b).__name__}"
    if type(a) is not type(b):
        return f"{path} is a {type(a).__qualname__} but rebuilds as a {type(b).__qualname__}"
    if isinstance(a, dict):
        if list(a) != list(b) or getattr(a, "default_factory", None) != getattr(b, "default_factory", None):
            return f"{path} has keys {list(a)} (a {type(a).__qualname__}) but rebuilds with {list(b)}"
        found = (_difference(a[k], b[k], f"{path}[{k!r}]") for k in a)
        problem = next((p for p in found if p), None)
        if problem:
            return problem
    elif isinstance(a, tuple | list):
        if len(a) != len(b):  # pyright: ignore[reportUnknownArgumentType]
            return f"{path} has {len(a)} items but rebuilds with {len(b)}"  # pyright: ignore
        found = (_difference(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b)))  # pyright: ignore
        problem = next((p for p in found if p), None)
        if problem:
            return problem
    elif isinstance(a, _LITERALS + (torch.dtype, torch.device)):
        return None if same_constant(a, b) else f"{path} is {a!r} but rebuilds as {b!r}"
    state_a, state_b = getattr(a, "__dict__", None), getattr(b, "__dict__", None)
    if isinstance(state_a, dict) and isinstance(state_b, dict):
        if list(state_a) != list(state_b):  # pyright: ignore[reportUnknownArgumentType]
            return f"{path} has attributes {list(state_a)} but rebuilds with {list(state_b)}"  # pyright: ignore
        found = (_difference(state_a[k], state_b[k], f"{path}.{k}") for k in state_a)  # pyright: ignore
        return next((p for p in found if p), None)
    return None


# -- text ---------------------------------------------------------------------------------------
def _format_constant(value: Any) -> str:
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, complex):
        return f"complex({_format_constant(value.real)}, {_format_constant(value.imag)})"
    return repr(value)


def format_tree(node: Node, leaf: Callable[[int], str] = "%{}".format) -> str:
    """The text of a structure (a Python expression; ``%i`` is the i-th flat value, or
    ``leaf(i)``)."""
    if isinstance(node, Leaf):
        return leaf(node.index)
    if isinstance(node, Const):
        return _format_constant(node.value)
    items = [format_tree(n, leaf) for n in node.items]
    if node.kind == "tuple":
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if node.kind == "list":
        return "[" + ", ".join(items) + "]"
    if node.kind == "sequence":
        assert node.cls is not None
        return f"{class_name(node.cls)}([{', '.join(items)}])"
    pairs = "{" + ", ".join(f"{_format_constant(k)}: {v}" for k, v in zip(node.keys, items, strict=True)) + "}"
    if node.kind == "dict":
        return pairs
    assert node.cls is not None
    name = class_name(node.cls)
    if node.kind == "mapping" and not (_kwargs_form(node.cls) and all(_identifier(k) for k in node.keys)):
        return f"{name}({pairs})"
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in zip(node.keys, items, strict=True)) + ")"


def _identifier(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)


def substitute_refs(text: str) -> str:
    """``%i`` -> the Python name ``__ref_i`` (not inside string literals)."""
    return _REF.sub(lambda m: m.group(1) or f"{_REF_NAME}{m.group(2)}", text)


@lru_cache(maxsize=256)
def parse_tree(text: str) -> Node:
    """The structure written as ``text``; a :class:`ZigguratError` when it is not one."""
    try:
        expr = ast.parse(substitute_refs(text), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ZigguratError(f"'{text[:200]}' is not a structure", op="structure") from None
    return tree_of(expr, text)


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    return None


def tree_of(expr: ast.expr, text: str) -> Node:
    """The structure of one parsed expression (also the compiled values of a signature)."""

    def bad(why: str) -> ZigguratError:
        return ZigguratError(f"'{text[:200]}' is not a structure ({why})", op="structure")

    def constant(e: ast.expr) -> Any:
        node = walk(e)
        if not isinstance(node, Const):
            raise bad("a key is not a constant")
        return node.value

    def walk(e: ast.expr) -> Node:
        if isinstance(e, ast.Name) and e.id.startswith(_REF_NAME) and e.id[len(_REF_NAME):].isdigit():
            return Leaf(int(e.id[len(_REF_NAME):]))
        if isinstance(e, ast.Constant) and isinstance(e.value, _LITERALS):
            return Const(e.value)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
                and isinstance(e.operand.value, int | float) and not isinstance(e.operand.value, bool):
            return Const(-e.operand.value)
        if isinstance(e, ast.Tuple | ast.List):
            return Container("tuple" if isinstance(e, ast.Tuple) else "list", tuple(walk(x) for x in e.elts))
        if isinstance(e, ast.Dict):
            if any(k is None for k in e.keys):
                raise bad("** in a dict")
            return Container("dict", tuple(walk(v) for v in e.values), tuple(constant(k) for k in e.keys if k))
        name = _dotted(e.func if isinstance(e, ast.Call) else e)
        if name is None:
            raise bad(f"unexpected {type(e).__name__}")
        if not isinstance(e, ast.Call):
            dtype = getattr(torch, name.removeprefix("torch."), None) if name.startswith("torch.") else None
            if isinstance(dtype, torch.dtype):
                return Const(dtype)
            raise bad(f"unknown name {name}")
        return call(name, e)

    def call(name: str, e: ast.Call) -> Node:
        args = [walk(a) for a in e.args]
        if name in ("float", "complex", "torch.device"):
            values = [a.value for a in args if isinstance(a, Const)]
            if e.keywords or len(values) != len(args):
                raise bad(f"{name} of non-constants")
            try:
                return Const((float if name == "float" else complex if name == "complex" else torch.device)(*values))
            except (TypeError, ValueError, RuntimeError):
                raise bad(f"{name}{tuple(values)}") from None
        cls = find_class(name)
        kind = kind_of_class(cls)
        if kind is None:
            raise bad(f"{name} is not a container class")
        if kind == "sequence":
            if e.keywords or len(args) != 1 or not isinstance(args[0], Container) or args[0].kind != "list":
                raise bad(f"{name} takes one list")
            return Container(kind, args[0].items, (), cls)
        if kind == "mapping" and args:
            if e.keywords or len(args) != 1 or not isinstance(args[0], Container) or args[0].kind != "dict":
                raise bad(f"{name} takes one dict")
            return Container(kind, args[0].items, args[0].keys, cls)
        if args or any(k.arg is None for k in e.keywords):
            raise bad(f"{name} takes keywords")
        keys = tuple(k.arg for k in e.keywords)
        if kind == "namedtuple" and keys != tuple(cls._fields):  # pyright: ignore[reportAttributeAccessIssue]
            raise bad(f"{name} has the fields {cls._fields}")  # pyright: ignore[reportAttributeAccessIssue]
        return Container(kind, tuple(walk(k.value) for k in e.keywords), keys, cls)

    return walk(expr)
