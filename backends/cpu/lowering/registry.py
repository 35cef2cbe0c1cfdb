"""Native lowerings registered by exact aten schema key.

    @lowering("aten::relu", "aten::relu_")
    def relu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue: ...

The table is an :class:`OpRegistry` (``dialects/torch/op_registry.py``, shared with the
TensorRT converters): keys are ``aten::name.overload`` and must name a schema torch has
(checked at registration), ops of Ziggurat's own dialects register by op name
(``fused.conv2d``).  A lowering may raise :class:`NotLowerable` for an instance it cannot
take (the op then runs through torch, or is reported with ``fallback=False``);
``validator`` can refuse up front.  The lowering families register when the catalog is
first needed (:func:`lowerings`), not when this module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ziggurat.dialects.torch.op_registry import OpEntry, OpRegistry

if TYPE_CHECKING:
    from ziggurat.backends.cpu.lowering.args import LoweringArgs
    from ziggurat.backends.cpu.lowering.context import LoweringContext

LoweringFn = Callable[["LoweringContext", "LoweringArgs"], Any]
Validator = Callable[["LoweringArgs"], str | None]
Lowering = OpEntry[LoweringFn, "LoweringArgs"]
#: a decorated lowering keeps its own signature
_Fn = TypeVar("_Fn", bound=LoweringFn)


class NotLowerable(Exception):
    """This op instance has no native lowering; ``str()`` is why (the reason the op runs
    through torch with).  Raised by an argument accessor it also names the op, its schema
    and its source line."""

    def __init__(self, message: str, *, op: str | None = None, schema: str | None = None,
                 location: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op
        self.schema = schema
        self.location = location


#: Every native lowering (filled by the families ``catalog`` imports; read it through :func:`lowerings`).
LOWERINGS: OpRegistry[LoweringFn, LoweringArgs] = OpRegistry("cpu lowering registry",
                                                              missing="no native lowering of {key}")


def lowering(*keys: str, validator: Validator | None = None, priority: int = 0) -> Callable[[_Fn], _Fn]:
    """Register the decorated function for every ``aten::name.overload`` key (or dialect op name)."""

    def register(fn: _Fn) -> _Fn:
        for key in keys:
            LOWERINGS.register(key, fn, validator=validator, priority=priority)
        return fn

    return register


def lowerings() -> OpRegistry[LoweringFn, LoweringArgs]:
    """The registry, every lowering family registered."""
    import ziggurat.backends.cpu.lowering.catalog  # noqa: F401  (registers every family)

    return LOWERINGS


def find_lowering(key: str) -> Lowering | None:
    """The highest-priority lowering of ``key`` (validators not asked)."""
    entries = lowerings().entries(key)
    return entries[0] if entries else None


def lowered_keys() -> list[str]:
    """Every aten schema key with a native lowering."""
    return [k for k in lowerings().keys() if "::" in k]


def lowered_names() -> set[str]:
    """``aten::name`` of every op with at least one natively lowered overload."""
    return {k.split(".")[0] for k in lowered_keys()}
