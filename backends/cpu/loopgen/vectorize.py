"""The vectorizability check of a kernel body (as Inductor's ``CppVecKernelChecker``).

A kernel is vectorized unless its body uses something without vector code: an
element type outside :data:`VECTOR_DTYPES` or a scan/arg-reduction that only has a
scalar form.  Loads never block vectorization: contiguous ones become vector loads,
the others gathers.  A kernel that fails the check is emitted entirely as scalar loops
(still correct), and counts against the vectorized share of the compile report.
"""

from __future__ import annotations

from ziggurat.backends.cpu.loopgen.types import VECTOR_DTYPES
from ziggurat.backends.cpu.lowering.values import Load, ReduceRef, Value, walk


def vector_blockers(root: Value, depth: int = 0) -> list[str]:
    """Why the DAG of ``root`` (and the reductions it reads) cannot be vectorized."""
    from ziggurat.backends.cpu.loopgen.reductions import trace_body

    reasons: list[str] = []
    for node in walk(root):
        if node.dtype not in VECTOR_DTYPES:
            reasons.append(f"{type(node).__name__} of {node.dtype}")
        if isinstance(node, Load) and node.buffer.dtype not in VECTOR_DTYPES:
            reasons.append(f"load of {node.buffer.dtype}")
        if isinstance(node, ReduceRef):
            if node.reduction.kind in ("argmax", "argmin"):
                reasons.append(f"{node.reduction.kind} reduction")
            elif depth < 4:
                _, body, _ = trace_body(node)
                reasons += vector_blockers(body, depth + 1)
    return reasons
