"""The levels of the ziggurat, as pass pipelines (``ziggurat-opt --emit=<stage>``, Toy-style).

Each stage is the pipeline that brings freshly imported ``torch`` IR to that level, and
the output target that prints it (``None``: the MLIR printer).  A stage is offered only
when all of its passes (and its target) exist.  The ``fused`` level is the CPU backend's view
of it, weights prepacked for the host ISA (``prepack-weights``); the ``trt`` stage starts
from ``graph-opt`` alone.  ``kernel`` is the CPU backend's kernels after fusion, each with
the reason its results are kept in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from ziggurat.backends.passes import all_passes
from ziggurat.tools.targets import all_targets


@dataclass(frozen=True)
class Stage:
    passes: tuple[str, ...]
    target: str | None = None


STAGES: dict[str, Stage] = {
    "torch": Stage(()),
    "fused": Stage(("graph-opt", "prepack-weights")),
    "trt": Stage(("graph-opt", "convert-torch-to-trt")),
    "kernel": Stage(("graph-opt", "prepack-weights", "convert-fused-to-kernel", "kernel-fuse", "kernel-layout")),
    "loop": Stage(("graph-opt", "prepack-weights", "convert-torch-to-loop")),
    "llvm": Stage(("graph-opt", "prepack-weights", "convert-torch-to-loop"), target="llvm-ir"),
}


def available_stages() -> dict[str, Stage]:
    known = all_passes()
    targets = all_targets()
    return {
        name: s for name, s in STAGES.items()
        if all(p.split("{")[0] in known for p in s.passes) and (s.target is None or s.target in targets)
    }
