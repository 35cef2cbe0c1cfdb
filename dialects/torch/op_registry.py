"""Implementations of ops registered by canonical key: the one registry type of every backend.

A backend's table of what it does per op (the CPU lowerings, the TensorRT converters) is
an :class:`OpRegistry`.  An entry is registered under the op's canonical key, given as

* ``aten::add.Tensor`` (``aten::relu`` for the default overload), which must name a
  schema torch has;
* the full schema text, ``aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1)
  -> (Tensor)``: it is parsed and must match torch's schema of the same key (argument
  names and kinds, number of results; ``-> (Tensor)`` vs ``-> Tensor``, ``int[]`` vs
  ``SymInt[]`` or spacing do not matter), and is kept under that key;
* the op name of one of Ziggurat's own dialects (``fused.conv2d``).

A string that names no torch schema is an error at registration time.  An entry holds
the function, an optional validator (``None``: the entry takes this op instance, else
the reason it does not) and a priority; :meth:`OpRegistry.select` picks the
highest-priority entry whose validator accepts, with the reasons of those that did
not.  Two entries of one key at the same priority are a registration error.

Also here, shared by the backends' reports: :func:`op_key` (the key an op is looked up
by), :func:`schema_text` and :func:`type_problem`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from xdsl.ir import Attribute, Operation

from ziggurat.dialects.torch.ops_base import OperatorOp, TorchOp
from ziggurat.dialects.torch.schema import OpSchema, parse_schema, registered_schemas
from ziggurat.ir.errors import ZigguratError

Fn = TypeVar("Fn", bound=Callable[..., Any])
#: what a validator is given: the backend's bound arguments of the op instance
Args = TypeVar("Args")


class OpRegistrationError(ZigguratError):
    """An entry registered under a key torch does not have, or registered twice."""


def op_key(op: Operation) -> str:
    """The key ``op`` is registered and reported under: ``aten::add.Tensor`` for a torch op
    (the name a ``torch.operator`` was imported with, even without a known schema), the op
    name (``fused.conv2d``) for any other."""
    if isinstance(op, OperatorOp):
        return op.op_name.data
    if isinstance(op, TorchOp):
        return op.aten_key
    return op.name


def schema_text(op: Operation) -> str | None:
    """The schema of a torch op, as torch prints it; None for other ops or an unknown schema."""
    try:
        return op.op_schema.text if isinstance(op, TorchOp) else None
    except KeyError:
        return None


def type_problem(op: Operation, problem: Callable[[str, int, Attribute], str | None]) -> str | None:
    """The first problem ``problem(role, index, type)`` finds with the type of one of ``op``'s
    operands (role ``"operand"``) or results (``"result"``), in that order; None if none."""
    for role, values in (("operand", op.operands), ("result", op.results)):
        for i, v in enumerate(values):
            found = problem(role, i, v.type)
            if found is not None:
                return found
    return None


def origin_of(fn: Callable[..., Any]) -> str:
    """``module.function``: where a registered function is defined (for reports)."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


@dataclass(frozen=True)
class OpEntry(Generic[Fn, Args]):
    """One registered function, under one key."""

    key: str
    fn: Fn
    validator: Callable[[Args], str | None] | None = None
    priority: int = 0
    #: where ``fn`` is defined (``module.function``), for reports
    origin: str = ""

    def check(self, args: Args) -> str | None:
        """None if this entry takes the op instance, else why not.  A validator that fails
        with a :class:`ZigguratError` declines with its message, one that fails with a
        ``TypeError``/``ValueError``/``KeyError`` declines saying so; anything else it raises
        (a backend's own "not this instance" exception) propagates."""
        if self.validator is None:
            return None
        try:
            return self.validator(args)
        except ZigguratError as e:
            return e.message
        except (TypeError, ValueError, KeyError) as e:
            return f"validator {self.origin} failed: {e}"


def normalize_schema(text: str, *, where: str = "op registry") -> OpSchema:
    """Parse the schema ``text`` and check it against the schema torch registers under the
    same key; torch's schema is returned."""
    try:
        schema = parse_schema(text.strip())
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OpRegistrationError(f"cannot parse schema {text!r}: {first}", op=where) from None
    known = registered_schemas()
    real_text = known.get(schema.key)
    if real_text is None:
        raise OpRegistrationError(
            f"schema {text!r} matches no torch operator (no {schema.key}){_close_keys(schema.key)}", op=where)
    real = parse_schema(real_text)
    mine = [(a.name, a.kind, a.optional) for a in schema.args]
    theirs = [(a.name, a.kind, a.optional) for a in real.args]
    if mine != theirs:
        raise OpRegistrationError(
            f"schema {text!r} does not match torch's {real_text!r}: arguments "
            f"{_describe(schema)} vs {_describe(real)}",
            op=where,
        )
    if len(schema.returns) != len(real.returns):
        raise OpRegistrationError(
            f"schema {text!r} returns {len(schema.returns)} values, torch's {real_text!r} {len(real.returns)}",
            op=where,
        )
    return real


def _close_keys(key: str) -> str:
    close = difflib.get_close_matches(key, list(registered_schemas()), n=3, cutoff=0.75)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _describe(schema: OpSchema) -> str:
    return "(" + ", ".join(f"{a.kind.value}{'?' if a.optional else ''} {a.name}" for a in schema.args) + ")"


def is_dialect_op_name(name: str) -> bool:
    """``fused.conv2d``: the name of an op of one of Ziggurat's own dialects (not an aten key)."""
    return "::" not in name and "." in name and "(" not in name


class OpRegistry(Generic[Fn, Args]):
    """Entries by canonical key; see the module docstring.

    ``name`` names the registry in its registration errors (``"converter registry"``);
    ``missing`` is the reason :meth:`select` gives for a key with no entry, a format string
    of ``{key}`` (``"no TensorRT converter is registered for {key}"``).
    """

    def __init__(self, name: str, *, missing: str) -> None:
        self.name = name
        self.missing = missing
        self._entries: dict[str, list[OpEntry[Fn, Args]]] = {}

    def canonical_key(self, text: str) -> str:
        """The key ``text`` (an aten key, a schema, or a dialect op name) registers under."""
        if "(" in text:
            return normalize_schema(text, where=self.name).key
        if is_dialect_op_name(text):
            return text
        key = text.strip()
        if key not in registered_schemas():
            raise OpRegistrationError(f"no torch schema {key}{_close_keys(key)}", op=self.name)
        return key

    def register(
        self, text: str, fn: Fn, *, validator: Callable[[Args], str | None] | None = None, priority: int = 0
    ) -> OpEntry[Fn, Args]:
        """Register ``fn`` under the key of ``text`` (see :meth:`canonical_key`)."""
        return self._add(OpEntry(self.canonical_key(text), fn, validator, priority, origin_of(fn)))

    def register_op(
        self, op_name: str, fn: Fn, *, validator: Callable[[Args], str | None] | None = None, priority: int = 0
    ) -> OpEntry[Fn, Args]:
        """Register ``fn`` for an op of Ziggurat's own dialects (``fused.conv2d``), by op name."""
        if not is_dialect_op_name(op_name):
            raise OpRegistrationError(f"{op_name!r} is not a dialect op name (aten ops register by schema)",
                                      op=self.name)
        return self._add(OpEntry(op_name, fn, validator, priority, origin_of(fn)))

    def _add(self, entry: OpEntry[Fn, Args]) -> OpEntry[Fn, Args]:
        entries = self._entries.setdefault(entry.key, [])
        for existing in entries:
            if existing.priority == entry.priority:
                raise OpRegistrationError(
                    f"{entry.key} is registered twice at priority {entry.priority} "
                    f"({existing.origin}, {entry.origin})", op=self.name)
        entries.append(entry)
        entries.sort(key=lambda e: -e.priority)
        return entry

    def unregister(self, entry: OpEntry[Fn, Args]) -> None:
        """Remove a registered entry (a test's temporary override)."""
        entries = self._entries.get(entry.key, [])
        if entry not in entries:
            raise OpRegistrationError(f"{entry.origin} is not registered for {entry.key}", op=self.name)
        entries.remove(entry)
        if not entries:
            del self._entries[entry.key]

    @contextmanager
    def override(
        self, text: str, fn: Fn, *, validator: Callable[[Args], str | None] | None = None
    ) -> Iterator[OpEntry[Fn, Args]]:
        """Register ``fn`` above every entry of its key while the ``with`` block runs (a test's
        planted implementation)."""
        top = max((e.priority for e in self._entries.get(self.canonical_key(text), ())), default=0)
        entry = self.register(text, fn, validator=validator, priority=top + 1)
        try:
            yield entry
        finally:
            self.unregister(entry)

    def entries(self, key: str) -> list[OpEntry[Fn, Args]]:
        """The entries of ``key``, highest priority first."""
        return list(self._entries.get(key, ()))

    def has(self, key: str) -> bool:
        return key in self._entries

    def keys(self) -> list[str]:
        return sorted(self._entries)

    def select(self, key: str, args: Args) -> tuple[OpEntry[Fn, Args] | None, list[str]]:
        """The entry that takes this op instance, or None; and the reasons of every entry
        that declined before it (``missing`` when ``key`` has none)."""
        entries = self._entries.get(key)
        if not entries:
            return None, [self.missing.format(key=key)]
        reasons: list[str] = []
        for entry in entries:
            reason = entry.check(args)
            if reason is None:
                return entry, reasons
            reasons.append(reason)
        return None, reasons


def reasons_text(reasons: Sequence[str]) -> str:
    """Several reasons as one line, each once."""
    return "; ".join(dict.fromkeys(reasons))
