"""How many native threads a fuzzed program's cpu configurations are compiled for.

``--threads drawn`` (the runner's default) draws one of :data:`CHOICES` per program from the
seed and the program's index: one thread runs no parallel region, two is this workplace's core
count, and three splits every parallel loop unevenly over two cores (the split that a
convolution's uneven column blocks got wrong in speed, stop 64).  The count is recorded on each
cpu outcome (``Outcome.threads``) and goes into the failure's repro and its minimization.
"""

from __future__ import annotations

import random

DRAWN = "drawn"
CHOICES = (1, 2, 3)


def parse_threads(text: str) -> str:
    """``--threads``: a positive count, or ``drawn``."""
    if text == DRAWN or (text.isdigit() and int(text) > 0):
        return text
    raise ValueError(f"--threads takes a positive count or '{DRAWN}', got {text!r}")


def threads_for(spec: str, seed: int, index: int | str) -> int:
    """The thread count of program ``index`` (a generated program's number, or a program
    file's name without its suffix) of ``seed`` under ``--threads spec``."""
    if spec != DRAWN:
        return int(spec)
    return random.Random(f"{seed}/{index}/threads").choice(CHOICES)


__all__ = ["CHOICES", "DRAWN", "parse_threads", "threads_for"]
