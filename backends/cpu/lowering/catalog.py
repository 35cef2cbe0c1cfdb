"""Imports every lowering family (each registers its lowerings on import)."""

from ziggurat.backends.cpu.lowering import (  # noqa: F401
    conv,
    creation,
    elementwise,
    fused_ops,
    indexing,
    linalg,
    normalization,
    padding,
    pooling,
    reductions,
    scans,
    shape_ops,
    upsample,
    views,
)
