"""Asserted error bounds (f32): max relative error vs float64 truth on the swept inputs.

Each bound is the measured maximum (see the table in backends/cpu/vecmath.py, produced by
measure_accuracy.py) rounded up with ~25% headroom, and never above the 1e-6 requirement.
Correctly rounded operations (sqrt, 1/x) are held to half an ulp.
"""

from __future__ import annotations

REQUIREMENT = 1e-6
HALF_ULP = 2.0 ** -24 * (1 + 2.0 ** -20)

MAX_REL_F32: dict[str, float] = {
    "exp": 1.2e-7,
    "exp2": 1.2e-7,
    "expm1": 1.5e-7,
    "log": 1.2e-7,
    "log2": 1.6e-7,
    "log10": 1.6e-7,
    "log1p": 1.6e-7,
    "tanh": 2.0e-7,
    "sigmoid": 2.2e-7,
    "silu": 2.5e-7,
    "erf": 3.0e-7,
    "erfc": 3.5e-7,
    "gelu_erf": 4.0e-7,
    "gelu_tanh": 2.6e-7,
    "softplus": 1.8e-7,
    "mish": 3.3e-7,
    "elu": 1.2e-7,
    "selu": 1.9e-7,
    "celu": 1.2e-7,
    "sin": 1.8e-7,
    "cos": 1.8e-7,
    "sqrt": HALF_ULP,
    "rsqrt": 1.2e-7,
    "reciprocal": HALF_ULP,
}

#: pow (f32 via f64 lanes): relative error, inputs in tests/cpu_vecmath/test_pow.py
MAX_REL_POW_F32 = 6.0e-8

#: f64 kernels: max relative error vs an mpmath truth (ulp of 2^-52 units in the comment)
MAX_REL_F64: dict[str, float] = {
    "exp": 3.0e-16,  # ~1.4 ulp
    "exp2": 3.0e-16,
    "expm1": 3.5e-16,
    "log": 3.0e-16,
    "log2": 3.0e-16,
    "log10": 3.0e-16,
    "log1p": 3.5e-16,
    "tanh": 4.5e-16,
    "sigmoid": 5.5e-16,
    "silu": 6.0e-16,
    "softplus": 4.5e-16,
    "mish": 8.0e-16,
    "elu": 3.5e-16,
    "selu": 4.0e-16,
    "celu": 3.5e-16,
    "sqrt": 1.2e-16,
    "rsqrt": 2.3e-16,
    "reciprocal": 1.2e-16,
}

assert all(b <= REQUIREMENT for b in MAX_REL_F32.values())
