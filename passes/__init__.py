"""Ziggurat's passes, one per file, each a frozen-dataclass ``ModulePass`` with a ``name``.

``all_passes()`` maps the names of the graph-level passes (as used in ``-p``) to lazy
factories.  Passes that belong to a backend (its lowering, memory planning, reports) live
in that backend and are added by ``ziggurat.backends.passes``, which ``ziggurat-opt``,
``ziggurat.compile`` and the xDSL Universe read.
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


def lazy_pass(target: str) -> Callable[[], type[ModulePass]]:
    """A factory of the pass class ``"package.module:ClassName"``, imported when called."""

    def load() -> type[ModulePass]:
        module, _, cls = target.partition(":")
        return getattr(importlib.import_module(module), cls)

    return load


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from ziggurat.passes import registry  # noqa: F401  (fills _PASS_MODULES)

    return {name: lazy_pass(f"ziggurat.passes.{target}") for name, target in _PASS_MODULES.items()}


def parse_pipeline(spec: str, extra: dict[str, Callable[[], type[ModulePass]]] | None = None) -> list[ModulePass]:
    """The passes of a pipeline spec (``"graph-opt{duplicate=true},cse"``): xDSL's, the
    graph-level ones and ``extra`` (a backend's, ``prepack-weights`` among them:
    ``ziggurat.backends.passes``)."""
    ours = {**all_passes(), **(extra or {})}
    available = {**get_all_passes(), **ours}
    try:
        return list(PassPipeline.parse_spec(available, spec).passes)
    except (ArgSpecParseError, ValueError, KeyError) as e:
        names = ", ".join(sorted(ours))
        raise ZigguratError(f"bad pass pipeline '{spec}': {e}. Ziggurat's passes: {names}",
                            op="passes") from None
