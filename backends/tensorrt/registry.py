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

The table is an :class:`OpRegistry` (``dialects/torch/op_registry.py``, shared with the
CPU lowerings).  Schema text is normalized by parsing: the entry is kept under
``OpSchema.key`` (``aten::add.Tensor``) and must match a schema torch really has, with
the same argument names and kinds; ``-> (Tensor)`` vs ``-> Tensor``, ``int[]`` vs
``SymInt[]`` or spacing do not matter.  A string that matches no real schema is an error
at registration time.  A validator returns ``None`` (convertible) or the reason it is
not; among several converters of one key the highest priority whose validator accepts wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from xdsl.ir import SSAValue

from ziggurat.dialects.torch.op_registry import OpEntry, OpRegistrationError, OpRegistry

if TYPE_CHECKING:
    from ziggurat.backends.tensorrt.conversion_context import ConversionContext
    from ziggurat.backends.tensorrt.converter_args import ConverterArgs

#: one value per result of the torch op; None for a result that has no uses and is not computed
ConverterResult = SSAValue | Sequence[SSAValue | None]
ConverterFn = Callable[["ConversionContext", "ConverterArgs"], ConverterResult]
Validator = Callable[["ConverterArgs"], str | None]
ConverterEntry = OpEntry[ConverterFn, "ConverterArgs"]
#: a decorated converter keeps its own (narrower) signature
_Fn = TypeVar("_Fn", bound=ConverterFn)


class ConverterRegistry(OpRegistry[ConverterFn, "ConverterArgs"]):
    """Converters by schema key (the pass reads :data:`REGISTRY`; tests build their own)."""

    def __init__(self) -> None:
        super().__init__("converter registry", missing="no TensorRT converter is registered for {key}")


@dataclass
class PatternRegistration:
    """Chainable registration: ``register_patterns(registry).pattern(s1, f1).pattern(s2, f2, validator=v)``."""

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
        raise OpRegistrationError("@converter needs at least one schema", op="converter registry")

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
