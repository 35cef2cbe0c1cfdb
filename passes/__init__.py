"""Ziggurat's passes, one per file, each a frozen-dataclass ``ModulePass`` with a ``name``.

``ALL_PASSES`` maps pass names (as used in ``-p``) to lazy factories; it is the
single list read by ``ziggurat-opt``, ``ziggurat.compile`` and the xDSL Universe.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

# pass name -> "module:ClassName" (modules are imported only when the pass is used)
_PASS_MODULES: dict[str, str] = {}


def register_pass(name: str, target: str) -> None:
    _PASS_MODULES[name] = target


def _factory(target: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        module, _, cls = target.partition(":")
        return getattr(importlib.import_module(f"ziggurat.passes.{module}"), cls)

    return load


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from ziggurat.passes import registry  # noqa: F401  (fills _PASS_MODULES)

    return {name: _factory(target) for name, target in _PASS_MODULES.items()}
