"""The op specs the generator draws from: ``@spec("name")`` registers one.

A spec is a function of the :class:`Builder` that picks operands and attributes and
returns the statement(s) (an expression, or :class:`Stmts`), or values it already
emitted; it raises :class:`Reject` when it cannot be placed.  ``name`` is what the
summary counts; the aten ops it reaches are measured from the compile reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.fuzz.builder import Builder, Emit, Value

SpecFn = Callable[[Builder], "Emit | list[Value]"]


@dataclass(frozen=True)
class OpSpec:
    name: str
    fn: SpecFn
    weight: float
    family: str

    def place(self, b: Builder) -> list[Value]:
        result = self.fn(b)
        return result if isinstance(result, list) else b.emit(self.name, result)


SPECS: dict[str, OpSpec] = {}


def spec(name: str, weight: float = 1.0, family: str = "") -> Callable[[SpecFn], SpecFn]:
    def register(fn: SpecFn) -> SpecFn:
        assert name not in SPECS, f"spec {name} registered twice"
        SPECS[name] = OpSpec(name, fn, weight, family or fn.__module__.rsplit(".", 1)[-1])
        return fn

    return register


def add_spec(name: str, fn: SpecFn, weight: float = 1.0, family: str = "") -> None:
    spec(name, weight, family)(fn)


def all_specs() -> dict[str, OpSpec]:
    import tests.fuzz.ops  # noqa: F401  (registers every family)

    return SPECS
