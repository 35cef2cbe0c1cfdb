"""Ziggurat's passes, one per file, each a frozen-dataclass ``ModulePass`` with a ``name``.

``ALL_PASSES`` maps pass names (as used in ``-p``) to lazy factories; it is the
single list read by ``ziggurat-opt``, ``ziggurat.compile`` and the xDSL Universe.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes
from xdsl.utils.exceptions import ArgSpecParseError

from ziggurat.ir.errors import ZigguratError

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


def parse_pipeline(spec: str) -> list[ModulePass]:
    """The passes of a pipeline spec (``"graph-opt,prepack-weights{isa=avx2}"``)."""
    available = {**get_all_passes(), **all_passes()}
    try:
        return list(PassPipeline.parse_spec(available, spec).passes)
    except (ArgSpecParseError, ValueError, KeyError) as e:
        names = ", ".join(sorted(all_passes()))
        raise ZigguratError(f"bad pass pipeline '{spec}': {e}. Ziggurat's passes: {names}",
                            op="passes") from None
