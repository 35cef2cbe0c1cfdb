"""Imports every op family (each registers its specs on import)."""

from tests.fuzz import (  # noqa: F401
    ops_backward,
    ops_creation,
    ops_index,
    ops_linalg,
    ops_losses,
    ops_mutation,
    ops_nn,
    ops_opinfo,
    ops_pointwise,
    ops_quantized,
    ops_reduce,
    ops_shape,
)
