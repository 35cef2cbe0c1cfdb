"""The levels of the ziggurat, as pass pipelines (``ziggurat-opt --emit=<stage>``, Toy-style).

Each stage is the pipeline that brings freshly imported ``torch`` IR to that level.
A stage is offered only when all of its passes exist.
"""

from __future__ import annotations

from ziggurat.passes import all_passes

STAGES: dict[str, tuple[str, ...]] = {
    "torch": (),
    "fused": ("graph-opt",),
    "trt": ("graph-opt", "convert-torch-to-trt"),
    "loop": ("graph-opt", "convert-torch-to-loop"),
    "llvm": ("graph-opt", "convert-torch-to-loop"),
}


def available_stages() -> dict[str, tuple[str, ...]]:
    known = all_passes()
    return {name: p for name, p in STAGES.items() if all(x in known for x in p)}
