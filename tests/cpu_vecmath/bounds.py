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

#: f64 kernels: max relative error vs an mpmath truth (30 digits) on tests/cpu_vecmath/test_f64.py inputs
MAX_REL_F64: dict[str, float] = {  # measured max in the comment
    "exp": 1.8e-16,  # 1.39e-16
    "exp2": 1.6e-16,  # 1.13e-16
    "expm1": 3.0e-16,  # 2.28e-16
    "log": 2.0e-16,  # 1.43e-16
    "log2": 2.2e-16,  # 1.63e-16
    "log10": 2.0e-16,  # 1.52e-16
    "log1p": 2.1e-16,  # 1.57e-16
    "tanh": 3.4e-16,  # 2.58e-16
    "sigmoid": 3.6e-16,  # 2.75e-16
    "silu": 3.7e-16,  # 2.81e-16
    "softplus": 3.2e-16,  # 2.41e-16
    "mish": 4.5e-16,  # 3.39e-16
    "elu": 1.9e-16,  # 1.42e-16
    "selu": 3.9e-16,  # 2.95e-16
    "celu": 1.9e-16,  # 1.42e-16
    "sqrt": 2.0 ** -53 * (1 + 2.0 ** -40),  # correctly rounded
    "rsqrt": 2.1e-16,  # 1.58e-16
    "reciprocal": 2.0 ** -53 * (1 + 2.0 ** -40),
}

assert all(b <= REQUIREMENT for b in MAX_REL_F32.values())
