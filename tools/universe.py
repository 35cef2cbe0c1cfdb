"""The xDSL ``Universe`` entry point: makes Ziggurat's dialects, passes, frontends and
targets visible to ``xdsl-opt`` and every other xDSL tool (see pyproject's
``[project.entry-points."xdsl.universe"]``).  It sits at the top layer: it names what every
layer below registers."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.universe import Universe
from xdsl.utils.frontend import Frontend

from ziggurat.ir.dialects_registry import ZIGGURAT_DIALECTS
from ziggurat.backends.passes import all_passes
from ziggurat.tools.targets import all_targets


def _frontend(name: str) -> Callable[[], type[Frontend]]:
    def load() -> type[Frontend]:
        from ziggurat.ir.importer.frontends import FRONTENDS

        return next(f for f in FRONTENDS if f.name == name)

    return load


ZIGGURAT_UNIVERSE = Universe(
    all_dialects=dict(ZIGGURAT_DIALECTS),
    all_passes=all_passes(),
    all_frontends={n: _frontend(n) for n in ("torchscript", "pt", "torchscript-ir", "ts")},
    all_targets=all_targets(),
)
