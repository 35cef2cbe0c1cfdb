"""Where torch eager's vectorized kernels return exactly zero in a negative tail.

Ziggurat's kernels keep their relative accuracy down to the denormals.  Eager's reach zero
earlier:

* GELU (both forms) computes ``0.5 x (1 + erf(..))`` or ``0.5 x (1 + tanh(..))``; the sum
  cancels to 0 once erf or tanh rounds to -1;
* sigmoid and silu compute ``1 / (1 + exp(-x))``; ``exp(-x)`` overflows to inf;
* softplus and mish take ``log1p(exp(x))``; Sleef's ``exp`` returns 0 below about -102.87
  (f32), before the denormals.

A tiny value where eager has 0 is within any tolerance, but a later ``== 0``, ``where``,
``sign`` or division takes the other branch and the output differs completely (fuzz program
4370 of seed 13: ``c / where(gelu(v) == 0, 1, gelu(v))`` gave -inf where eager gave 1.93).  So
these kernels return zero exactly where eager's vector path does.

``ZERO_BELOW[kind][fmt]`` is the most negative argument at which eager's vector path still
returns a nonzero value; every ``x`` below it gives zero.  Measured with torch 2.x on AVX-512
hosts by scanning every f32, and 6 million f64 ulps, around each point;
``tests/cpu_vecmath/test_eager_zero.py`` checks them against the installed torch on each run.

* Eager's scalar loop (the last n mod 32 elements of a contiguous run, and each thread chunk's
  remainder) flushes a little further out: gelu_tanh f32 at -5.158, softplus and mish f32 at
  -103.97.  Those elements follow the vector path here.
* Just above the GELU erf threshold eager's vector path alternates between 0 and tiny values
  (f32: x in [-5.5426, -5.4858]; f64: [-8.37438892306752, -8.37438892306737]), from the error
  of its erf approximation.  There this kernel keeps the accurate value.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.vecmath.builder import VB

ZERO_BELOW: dict[str, dict[str, float]] = {
    "gelu_erf": {"f32": -5.542593002319336, "f64": -8.37438892306752},
    "gelu_tanh": {"f32": -5.061380386352539, "f64": -7.145065874418113},
    "sigmoid": {"f32": -88.72283172607422, "f64": -709.782712893384},
    "silu": {"f32": -88.72283172607422, "f64": -709.782712893384},
    # softplus: of z = beta * x
    "softplus": {"f32": -102.87345886230469, "f64": -744.0346068132731},
    "mish": {"f32": -102.87345886230469, "f64": -744.0346068132731},
}


def zero_below(v: VB, kind: str, x: ir.Value, res: ir.Value, signed: bool) -> ir.Value:
    """``res`` with eager's zero below ``ZERO_BELOW[kind]``: ``x * 0`` (-0, NaN for -inf) when
    ``signed``, else +0."""
    below = v.lt(x, v.c(ZERO_BELOW[kind][v.fmt.name]))
    zero = v.mul(x, v.c(0.0)) if signed else v.c(0.0)
    return v.sel(below, zero, res)
