"""Asserted error bounds (f32): max relative error vs float64 truth on the swept inputs.

Each bound is the measured maximum (see the table in backends/cpu/vecmath/__init__.py, produced by
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
    "gelu_erf": 4.7e-7,
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

#: f64 kernels: max relative error vs an mpmath truth (30 digits), references.f64_points
MAX_REL_F64: dict[str, float] = {  # measured max on the 8x denser set of measure_accuracy.py
    "exp": 1.9e-16,  # 1.43e-16
    "exp2": 1.8e-16,  # 1.36e-16
    "expm1": 3.0e-16,  # 2.34e-16
    "log": 2.0e-16,  # 1.53e-16
    "log2": 2.4e-16,  # 1.81e-16
    "log10": 2.6e-16,  # 1.97e-16
    "log1p": 2.2e-16,  # 1.66e-16
    "tanh": 4.2e-16,  # 3.22e-16
    "sigmoid": 3.6e-16,  # 2.75e-16
    "silu": 4.1e-16,  # 3.14e-16
    "softplus": 3.2e-16,  # 2.39e-16
    "mish": 4.7e-16,  # 3.58e-16
    "elu": 2.7e-16,  # 2.02e-16
    "selu": 4.4e-16,  # 3.39e-16
    "celu": 2.7e-16,  # 2.02e-16
    "sqrt": 2.0 ** -53 * (1 + 2.0 ** -40),  # correctly rounded
    "rsqrt": 2.2e-16,  # 1.63e-16
    "reciprocal": 2.0 ** -53 * (1 + 2.0 ** -40),
    "erf": 9.0e-16,  # 6.75e-16 (1 - erfc near |x| = 0.5: rounding of t = 2/(2+|x|) is amplified)
    "erfc": 1.0e-15,  # 7.66e-16
    "gelu_erf": 1.0e-15,  # 7.77e-16
}

assert all(b <= REQUIREMENT for b in MAX_REL_F32.values())
