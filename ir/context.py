"""The xDSL context with every dialect Ziggurat reads or writes."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects

from ziggurat.ir.dialects_registry import ZIGGURAT_DIALECTS

#: Upstream dialects the levels use (the loop level reuses arith/math/scf/memref/vector).
UPSTREAM_DIALECTS = ("builtin", "func", "arith", "math", "scf", "memref", "vector", "llvm")


def make_context(*, allow_unregistered: bool = False) -> Context:
    """A context with the upstream dialects eagerly and Ziggurat's registered."""
    ctx = Context(allow_unregistered=allow_unregistered)
    upstream = get_all_dialects()
    for name in UPSTREAM_DIALECTS:
        ctx.register_dialect(name, upstream[name])
    for name, factory in ZIGGURAT_DIALECTS.items():
        ctx.register_dialect(name, factory)
    ctx.load_registered_dialect("builtin")
    ctx.load_registered_dialect("func")
    ctx.load_registered_dialect("arith")
    ctx.load_registered_dialect("torch")
    return ctx
