"""What an imported TorchScript/FX value is during import.

* :class:`Dynamic` — a value computed at run time: an SSA value of the module
  being built, with the value it took in the example run (used for typing and
  for folding shape queries on static shapes).
* anything else — a static Python value known at compile time (int, float,
  bool, str, None, dtype, device, lists/tuples of these or of Dynamics), or a
  :class:`TensorConstant` that becomes a ``torch.literal`` on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from xdsl.ir import SSAValue


@dataclass(frozen=True)
class Dynamic:
    ssa: SSAValue
    example: Any

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.example, torch.Tensor)


@dataclass(eq=False)
class TensorConstant:
    """A constant tensor (a frozen weight), materialized lazily as a literal."""

    tensor: torch.Tensor
    name: str
    materialized: Dynamic | None = None


def is_static(value: object) -> bool:
    """True when ``value`` (possibly nested) holds no run-time value."""
    if isinstance(value, Dynamic | TensorConstant):
        return False
    if isinstance(value, list | tuple):
        return all(is_static(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return all(is_static(v) for v in value.values())  # pyright: ignore[reportUnknownVariableType]
    return True


def example_of(value: object) -> Any:
    """The example-run value of an imported value (for evaluating ops with torch)."""
    if isinstance(value, Dynamic):
        return value.example
    if isinstance(value, TensorConstant):
        return value.tensor
    if isinstance(value, list):
        return [example_of(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, tuple):
        return tuple(example_of(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return value


def dynamics(value: object) -> list[Dynamic]:
    """The run-time values in ``value``, inside lists, tuples and dicts too."""
    if isinstance(value, Dynamic):
        return [value]
    if isinstance(value, list | tuple):
        return [d for v in value for d in dynamics(v)]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return dynamics(list(value.values()))  # pyright: ignore[reportUnknownArgumentType]
    return []
