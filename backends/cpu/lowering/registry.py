"""Native lowerings registered by exact aten schema key.

    @lowering("aten::relu", "aten::relu_")
    def relu(ctx: LoweringContext, args: LoweringArgs) -> TensorValue: ...

Keys are ``aten::name.overload`` and must name a schema torch has (checked at
registration, as the TensorRT converter registry does).  A lowering may raise
:class:`NotLowerable` for an instance it cannot take (the op then runs through torch,
or is reported with ``fallback=False``); ``validator`` can refuse up front.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ziggurat.dialects.torch.schema import registered_schemas
from ziggurat.ir.errors import ZigguratError

if TYPE_CHECKING:
    from ziggurat.backends.cpu.lowering.args import LoweringArgs
    from ziggurat.backends.cpu.lowering.context import LoweringContext

LoweringFn = Callable[["LoweringContext", "LoweringArgs"], Any]
Validator = Callable[["LoweringArgs"], str | None]


class NotLowerable(Exception):
    """This op instance has no native lowering; the message says why."""


class LoweringRegistrationError(ZigguratError):
    """A lowering registered under a key torch does not have."""


@dataclass(frozen=True)
class Lowering:
    key: str
    fn: LoweringFn
    validator: Validator | None = None

    @property
    def origin(self) -> str:
        return f"{getattr(self.fn, '__module__', '?')}.{getattr(self.fn, '__qualname__', '?')}"


_LOWERINGS: dict[str, Lowering] = {}
#: Keys of non-aten ops (fused dialect) lowered natively, by op name.
_OP_LOWERINGS: dict[str, Lowering] = {}


def lowering(*keys: str, validator: Validator | None = None) -> Callable[[LoweringFn], LoweringFn]:
    """Register the decorated function for every ``aten::name.overload`` key."""

    def register(fn: LoweringFn) -> LoweringFn:
        known = registered_schemas()
        for key in keys:
            if key.startswith("fused."):
                _OP_LOWERINGS[key] = Lowering(key, fn, validator)
                continue
            if key not in known:
                raise LoweringRegistrationError(f"no torch schema {key} (lowering {fn.__qualname__})",
                                                op="cpu lowering registry")
            if key in _LOWERINGS:
                raise LoweringRegistrationError(f"{key} is lowered twice ({_LOWERINGS[key].origin}, "
                                                f"{fn.__module__}.{fn.__qualname__})", op="cpu lowering registry")
            _LOWERINGS[key] = Lowering(key, fn, validator)
        return fn

    return register


def _load_all() -> None:
    import ziggurat.backends.cpu.lowering.catalog  # noqa: F401  (registers every family)


def find_lowering(key: str) -> Lowering | None:
    _load_all()
    return _LOWERINGS.get(key) or _OP_LOWERINGS.get(key)


def lowered_keys() -> list[str]:
    """Every aten schema key with a native lowering."""
    _load_all()
    return sorted(_LOWERINGS)


def lowered_names() -> set[str]:
    """``aten::name`` of every op with at least one natively lowered overload."""
    return {k.split(".")[0] for k in lowered_keys()}


def reasons_text(reasons: Sequence[str]) -> str:
    return "; ".join(dict.fromkeys(reasons))
