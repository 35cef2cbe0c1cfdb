"""A model's Python call signature, with the values it was compiled for.

Its text is a Python parameter list whose annotations are the compiled values (a structure:
``%i`` is the i-th flat tensor input) and whose defaults are the model's own::

    (input_ids: %0, attention_mask: %1 = None, token_type_ids=None, *, return_dict: True = None)

``input_ids`` and ``attention_mask`` were given (flat inputs 0 and 1), ``token_type_ids`` was
not (the model's default was compiled in), ``return_dict`` was given as the constant ``True``.
A default that is not a constant is written ``...``. At call time the arguments are bound to
these parameters as Python binds them, and each one must fit what it was compiled for.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.structure import (Const, Container, Leaf, Node, build, describe, format_tree,
                                   leaf_count, same_constant, substitute_refs, tree_of)

P = inspect.Parameter
#: a default that is not a constant (a tensor, an object): written ``...``
OPAQUE = "..."
_OMITTED: Any = object()


def _tensor_leaf(_: int) -> str:
    return "Tensor"


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: inspect._ParameterKind  # pyright: ignore[reportPrivateUsage]
    #: what it was compiled for; None when it was not given (the model's default ran)
    value: Node | None
    #: the model's default: a constant structure, OPAQUE, or None (no default)
    default: Node | str | None


def _no_tensor(_: torch.Tensor) -> int:
    raise ZigguratError("a tensor default", op="input")


def _default(p: inspect.Parameter) -> Node | str | None:
    if p.default is P.empty:
        return None
    try:
        return describe(p.default, _no_tensor, "input", p.name)
    except ZigguratError:
        return OPAQUE


class CallSignature:
    def __init__(self, params: Sequence[Parameter]) -> None:
        self.params = list(params)
        self.leaf_count = max((leaf_count(p.value) for p in self.params if p.value is not None), default=0)
        self._inspect = inspect.Signature([
            P(p.name, p.kind, default=_OMITTED if p.default is not None else P.empty) for p in self.params])
        self._fast = self._positional_leaves()

    def _positional_leaves(self) -> int:
        """k when a call of k positional tensors is the whole binding (the common case: the
        first parameters, then ``*args``, were given one tensor each), else -1."""
        flat: list[Node] = []
        for i, p in enumerate(self.params):
            if p.value is None:
                continue
            if p.kind == P.VAR_POSITIONAL and isinstance(p.value, Container) and len(flat) == i:
                flat += p.value.items
            elif p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) and len(flat) == i:
                flat.append(p.value)
            else:
                return -1
        return len(flat) if flat == [Leaf(i) for i in range(len(flat))] else -1

    # -- compile time ------------------------------------------------------------------------------
    @staticmethod
    def bind(signature: inspect.Signature, args: Sequence[Any], kwargs: Mapping[str, Any],
             on_tensor: Callable[[torch.Tensor], int]) -> CallSignature:
        """The signature of a call of ``signature`` with example ``args``/``kwargs``."""
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ZigguratError(f"the example inputs do not fit forward{signature}: {e}", op="compile") from None
        params = [Parameter(p.name, p.kind,
                            describe(bound.arguments[p.name], on_tensor, "input", p.name)
                            if p.name in bound.arguments else None, _default(p))
                  for p in signature.parameters.values()]
        return CallSignature(params)

    def arguments(self, leaves: Sequence[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The positional and keyword arguments of the call it was compiled for, over ``leaves``."""
        values = OrderedDict((p.name, build(p.value, leaves)) for p in self.params if p.value is not None)
        bound = inspect.BoundArguments(self._inspect, values)  # pyright: ignore[reportArgumentType]
        return bound.args, bound.kwargs

    def input_names(self) -> list[str]:
        """A name for each flat input, from its parameter and its place in it."""
        names = [f"arg{i}" for i in range(self.leaf_count)]
        for p in self.params:
            if p.value is not None:
                _leaf_names(p.value, p.name, names)
        return names

    # -- text ---------------------------------------------------------------------------------------
    def text(self, leaf: Callable[[int], str] = "%{}".format) -> str:
        """The signature's text; ``leaf`` writes the flat inputs (``Tensor`` for users)."""
        parts: list[str] = []
        kinds = [p.kind for p in self.params]
        for i, p in enumerate(self.params):
            if p.kind == P.KEYWORD_ONLY and P.VAR_POSITIONAL not in kinds[:i] and P.KEYWORD_ONLY not in kinds[:i]:
                parts.append("*")
            star = "*" if p.kind == P.VAR_POSITIONAL else "**" if p.kind == P.VAR_KEYWORD else ""
            text = star + p.name
            if p.value is not None:
                text += f": {format_tree(p.value, leaf)}"
            if p.default is not None:
                default = p.default if isinstance(p.default, str) else format_tree(p.default)
                text += f" = {default}" if p.value is not None else f"={default}"
            parts.append(text)
            if p.kind == P.POSITIONAL_ONLY and (i + 1 == len(kinds) or kinds[i + 1] != P.POSITIONAL_ONLY):
                parts.append("/")
        return "(" + ", ".join(parts) + ")"

    @staticmethod
    def parse(text: str) -> CallSignature:
        """The signature written as ``text``; a :class:`ZigguratError` when it is not one."""
        try:
            tree = ast.parse(f"def _f{substitute_refs(text)}: pass")
            fn = tree.body[0]
            assert isinstance(fn, ast.FunctionDef) and len(tree.body) == 1 and fn.returns is None
        except (SyntaxError, ValueError, RecursionError, MemoryError, AssertionError):
            raise ZigguratError(f"'{text[:200]}' is not a call signature", op="signature") from None
        a = fn.args
        positional = [(x, P.POSITIONAL_ONLY) for x in a.posonlyargs] + [(x, P.POSITIONAL_OR_KEYWORD) for x in a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        entries = [(x, kind, d) for (x, kind), d in zip(positional, defaults, strict=True)]
        if a.vararg:
            entries.append((a.vararg, P.VAR_POSITIONAL, None))
        entries += [(x, P.KEYWORD_ONLY, d) for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
        if a.kwarg:
            entries.append((a.kwarg, P.VAR_KEYWORD, None))

        def default(d: ast.expr | None) -> Node | str | None:
            if d is None:
                return None
            if isinstance(d, ast.Constant) and d.value is Ellipsis:
                return OPAQUE
            node = tree_of(d, text)
            if leaf_count(node):
                raise ZigguratError(f"'{text[:200]}' has a default that is a flat input", op="signature")
            return node

        params = [Parameter(x.arg, kind, tree_of(x.annotation, text) if x.annotation else None, default(d))
                  for x, kind, d in entries]
        try:
            return CallSignature(params)
        except ValueError as e:  # inspect's own checks (order of kinds, defaults, names)
            raise ZigguratError(f"'{text[:200]}' is not a call signature ({e})", op="signature") from None

    # -- call time ----------------------------------------------------------------------------------
    def flat_inputs(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        """The flat inputs of a call, checked against what each argument was compiled for."""
        if not kwargs and len(args) == self._fast:
            return list(args)
        try:
            bound = self._inspect.bind(*args, **kwargs)
        except TypeError as e:
            given = [p.name for p in self.params if p.value is not None]
            raise InputError(
                f"expected {len(given)} input(s) ({', '.join(given)}), got {len(args)} positional"
                + (f" and {', '.join(kwargs)}" if kwargs else "") + f": {e}; the compiled module takes "
                + self.text(_tensor_leaf), op="call") from None
        flat: list[Any] = [None] * self.leaf_count
        for p in self.params:
            given = bound.arguments.get(p.name, _OMITTED)
            if p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) and not given and given is not _OMITTED:
                given = _OMITTED
            if p.value is None:
                if given is _OMITTED or (isinstance(p.default, Const | Container) and _fits(p.default, given)):
                    continue
                raise InputError(
                    f"argument '{p.name}' was not given at compile time, so the model's default for it is "
                    f"compiled in; to pass it, compile with it (example_kwargs={{'{p.name}': ...}})", op="call")
            if given is _OMITTED:
                if isinstance(p.default, Const | Container) and p.default == p.value:
                    continue
                raise InputError(f"argument '{p.name}' was given at compile time "
                                 f"({format_tree(p.value, _tensor_leaf)}); pass it", op="call")
            _match(p.value, given, flat, f"'{p.name}'")
        return flat


def _fits(node: Node, value: Any) -> bool:
    try:
        _match(node, value, [], "")
    except InputError:
        return False
    return True


def _match(node: Node, value: Any, flat: list[Any], path: str) -> None:
    if isinstance(node, Leaf):
        if not isinstance(value, torch.Tensor):
            raise InputError(f"argument {path} was a tensor at compile time, got {type(value).__name__}", op="call")
        flat[node.index] = value
        return
    if isinstance(node, Const):
        if not same_constant(node.value, value):
            raise InputError(f"argument {path} was {node.value!r} at compile time and is specialized into "
                             f"the compiled code; got {value!r}", op="call")
        return
    expected = {"tuple": tuple, "list": list, "dict": dict}.get(node.kind, node.cls)
    if type(value) is not expected:
        raise InputError(f"argument {path} was a {getattr(expected, '__qualname__', expected)} at compile "
                         f"time, got a {type(value).__qualname__}", op="call")
    if node.kind in ("dict", "mapping", "object"):
        mapping: Mapping[Any, Any] = value if isinstance(value, dict) else vars(value)
        if list(mapping) != list(node.keys):
            raise InputError(f"argument {path} had the keys {list(node.keys)} at compile time, got "
                             f"{list(mapping)}", op="call")
        for key, item in zip(node.keys, node.items, strict=True):
            _match(item, mapping[key], flat, f"{path}[{key!r}]")
        return
    if len(value) != len(node.items):
        raise InputError(f"argument {path} had {len(node.items)} items at compile time, got {len(value)}",
                         op="call")
    for i, (item, v) in enumerate(zip(node.items, value, strict=True)):
        _match(item, v, flat, f"{path}[{i}]")


def _leaf_names(node: Node, name: str, names: list[str]) -> None:
    if isinstance(node, Leaf):
        names[node.index] = re.sub(r"\W", "_", name)
    elif isinstance(node, Container):
        keys = node.keys or tuple(range(len(node.items)))
        for key, item in zip(keys, node.items, strict=True):
            _leaf_names(item, f"{name}_{key}", names)
