"""Imports every lowering family (each registers its lowerings on import)."""

from ziggurat.backends.cpu.lowering import (  # noqa: F401
    elementwise,
    fused_ops,
    linalg,
    views,
)
