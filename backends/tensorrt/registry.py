"""The TensorRT converter registry: converters registered by exact aten schema.

As in Torch-TensorRT's TorchScript converters, a converter is registered under
the full schema it handles, one or several at once::

    @converter(
        "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> (Tensor)",
        "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
        validator=needs_static_bounds,
        priority=1,
    )
    def clip(ctx: ConversionContext, args: ConverterArgs) -> SSAValue: ...

or with the chainable pattern form::

    register_patterns().pattern(SCHEMA_A, convert_a).pattern(SCHEMA_B, convert_b, validator=...)

Schema text is normalized by parsing (:func:`parse_schema`): the entry is kept
under ``OpSchema.key`` (``aten::add.Tensor``) and must match a schema torch
really has, with the same argument names and kinds; ``-> (Tensor)`` vs
``-> Tensor``, ``int[]`` vs ``SymInt[]`` or spacing do not matter.  A string that
matches no real schema is an error at registration time.  A validator returns
``None`` (convertible) or the reason it is not; among several converters of one
key the highest priority whose validator accepts wins.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from xdsl.ir import SSAValue

from ziggurat.dialects.torch.schema import OpSchema, parse_schema, registered_schemas
from ziggurat.ir.errors import ZigguratError

if TYPE_CHECKING:
    from ziggurat.backends.tensorrt.converter_args import ConverterArgs
    from ziggurat.backends.tensorrt.conversion_context import ConversionContext

#: one value per result of the torch op; None for a result that has no uses and is not computed
ConverterResult = SSAValue | Sequence[SSAValue | None]
ConverterFn = Callable[["ConversionContext", "ConverterArgs"], ConverterResult]
Validator = Callable[["ConverterArgs"], str | None]
#: a decorated converter keeps its own (narrower) signature
_Fn = TypeVar("_Fn", bound=ConverterFn)


class ConverterRegistrationError(ZigguratError):
    """A converter registered under a schema torch does not have (or registered wrongly)."""


@dataclass(frozen=True)
class ConverterEntry:
    """One (schema, converter) pair."""

    schema: OpSchema
    convert: ConverterFn
    validator: Validator | None = None
    priority: int = 0
    #: where the converter is defined (``module.function``), for reports
    origin: str = ""

    @property
    def key(self) -> str:
        return self.schema.key

    def check(self, args: ConverterArgs) -> str | None:
        """None if this converter takes the op, else why not."""
        if self.validator is None:
            return None
        try:
            return self.validator(args)
        except ZigguratError as e:
            return e.message
        except (TypeError, ValueError, KeyError) as e:
            return f"validator {self.origin} failed: {e}"


def normalize_schema(text: str) -> OpSchema:
    """Parse ``text`` and check it against the schema torch registers under the same key."""
    try:
        schema = parse_schema(text.strip())
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConverterRegistrationError(f"cannot parse schema {text!r}: {first}", op="converter registry") from None
    known = registered_schemas()
    real_text = known.get(schema.key)
    if real_text is None:
        close = difflib.get_close_matches(schema.key, list(known), n=3, cutoff=0.75)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConverterRegistrationError(
            f"schema {text!r} matches no torch operator (no {schema.key}){hint}", op="converter registry"
        )
    real = parse_schema(real_text)
    mine = [(a.name, a.kind, a.optional) for a in schema.args]
    theirs = [(a.name, a.kind, a.optional) for a in real.args]
    if mine != theirs:
        raise ConverterRegistrationError(
            f"schema {text!r} does not match torch's {real_text!r}: arguments "
            f"{_describe(schema)} vs {_describe(real)}",
            op="converter registry",
        )
    if len(schema.returns) != len(real.returns):
        raise ConverterRegistrationError(
            f"schema {text!r} returns {len(schema.returns)} values, torch's {real_text!r} {len(real.returns)}",
            op="converter registry",
        )
    return real


def _describe(schema: OpSchema) -> str:
    return "(" + ", ".join(f"{a.kind.value}{'?' if a.optional else ''} {a.name}" for a in schema.args) + ")"


@dataclass
class ConverterRegistry:
    """Converters by schema key; see the module docstring."""

    _entries: dict[str, list[ConverterEntry]] = field(default_factory=dict[str, list[ConverterEntry]])

    def register(
        self,
        schema_text: str,
        convert: ConverterFn,
        *,
        validator: Validator | None = None,
        priority: int = 0,
    ) -> ConverterEntry:
        schema = normalize_schema(schema_text)
        origin = f"{getattr(convert, '__module__', '?')}.{getattr(convert, '__qualname__', repr(convert))}"
        entry = ConverterEntry(schema, convert, validator, priority, origin)
        entries = self._entries.setdefault(schema.key, [])
        for existing in entries:
            if existing.convert is convert:
                raise ConverterRegistrationError(
                    f"{origin} is already registered for {schema.key}", op="converter registry"
                )
        entries.append(entry)
        entries.sort(key=lambda e: -e.priority)
        return entry

    def register_op(
        self,
        op_name: str,
        convert: ConverterFn,
        *,
        validator: Validator | None = None,
        priority: int = 0,
    ) -> ConverterEntry:
        """Register a converter for an op of Ziggurat's own dialects (``fused.conv2d``), by op name."""
        if "::" in op_name or "." not in op_name:
            raise ConverterRegistrationError(
                f"{op_name!r} is not a dialect op name (aten ops register by schema)", op="converter registry"
            )
        from ziggurat.dialects.torch.schema import OpSchema as _Schema

        origin = f"{getattr(convert, '__module__', '?')}.{getattr(convert, '__qualname__', repr(convert))}"
        entry = ConverterEntry(_Schema(op_name, op_name, "", (), ()), convert, validator, priority, origin)
        entries = self._entries.setdefault(op_name, [])
        entries.append(entry)
        entries.sort(key=lambda e: -e.priority)
        return entry

    def unregister(self, entry: ConverterEntry) -> None:
        """Remove a registered converter (a test's temporary override)."""
        entries = self._entries.get(entry.key, [])
        if entry not in entries:
            raise ConverterRegistrationError(f"{entry.origin} is not registered for {entry.key}",
                                             op="converter registry")
        entries.remove(entry)
        if not entries:
            del self._entries[entry.key]

    def entries(self, key: str) -> list[ConverterEntry]:
        """Converters of ``aten::name.overload``, highest priority first."""
        return list(self._entries.get(key, ()))

    def has(self, key: str) -> bool:
        return key in self._entries

    def keys(self) -> list[str]:
        return sorted(self._entries)

    def select(self, key: str, args: ConverterArgs) -> tuple[ConverterEntry | None, list[str]]:
        """The converter that takes this op instance, or None and every reason of refusal."""
        entries = self._entries.get(key)
        if not entries:
            return None, [f"no TensorRT converter is registered for {key}"]
        reasons: list[str] = []
        for entry in entries:
            reason = entry.check(args)
            if reason is None:
                return entry, reasons
            reasons.append(reason)
        return None, reasons

    def patterns(self) -> PatternRegistration:
        return PatternRegistration(self)


@dataclass
class PatternRegistration:
    """Chainable registration: ``registry.patterns().pattern(s1, f1).pattern(s2, f2, validator=v)``."""

    registry: ConverterRegistry
    registered: list[ConverterEntry] = field(default_factory=list[ConverterEntry])

    def pattern(
        self, schema_text: str, convert: ConverterFn, *, validator: Validator | None = None, priority: int = 0
    ) -> PatternRegistration:
        self.registered.append(self.registry.register(schema_text, convert, validator=validator, priority=priority))
        return self


#: The registry the ``convert-torch-to-trt`` pass reads (filled by ``converters/``).
REGISTRY = ConverterRegistry()


def converter(
    *schemas: str,
    validator: Validator | None = None,
    priority: int = 0,
    registry: ConverterRegistry | None = None,
) -> Callable[[_Fn], _Fn]:
    """Register the decorated function for every schema in ``schemas``."""
    if not schemas:
        raise ConverterRegistrationError("@converter needs at least one schema", op="converter registry")

    def register(fn: _Fn) -> _Fn:
        target = registry if registry is not None else REGISTRY
        for text in schemas:
            target.register(text, fn, validator=validator, priority=priority)
        return fn

    return register


def op_converter(
    op_name: str, *, validator: Validator | None = None, priority: int = 0, registry: ConverterRegistry | None = None
) -> Callable[[_Fn], _Fn]:
    """Register the decorated function for a Ziggurat dialect op (``@op_converter("fused.linear")``)."""

    def register(fn: _Fn) -> _Fn:
        (registry if registry is not None else REGISTRY).register_op(op_name, fn, validator=validator, priority=priority)
        return fn

    return register


def register_patterns(registry: ConverterRegistry | None = None) -> PatternRegistration:
    """Start a chain of ``.pattern(schema, converter)`` registrations."""
    return PatternRegistration(registry if registry is not None else REGISTRY)
