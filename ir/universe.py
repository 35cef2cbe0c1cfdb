"""The xDSL ``Universe`` entry point: makes Ziggurat's dialects, passes and frontends
visible to ``xdsl-opt`` and every other xDSL tool (see pyproject's
``[project.entry-points."xdsl.universe"]``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.universe import Universe
from xdsl.utils.frontend import Frontend
from xdsl.utils.target import Target

from ziggurat.ir.dialects_registry import ZIGGURAT_DIALECTS


def _dialects() -> dict[str, Callable[[], Dialect]]:
    return {
        name: factory
        for name, factory in ZIGGURAT_DIALECTS.items()
        if importlib.util.find_spec(f"ziggurat.dialects.{name}") is not None
    }


def _frontend(name: str) -> Callable[[], type[Frontend]]:
    def load() -> type[Frontend]:
        from ziggurat.ir.importer.frontends import FRONTENDS

        return next(f for f in FRONTENDS if f.name == name)

    return load


def _targets() -> dict[str, Callable[[], type[Target]]]:
    from ziggurat.tools.targets import all_targets

    return all_targets()


def _passes():  # pyright: ignore[reportUnknownParameterType]
    from ziggurat.passes import all_passes

    return all_passes()


ZIGGURAT_UNIVERSE = Universe(
    all_dialects=_dialects(),
    all_passes=_passes(),
    all_frontends={n: _frontend(n) for n in ("torchscript", "pt", "torchscript-ir", "ts")},
    all_targets=_targets(),
)
