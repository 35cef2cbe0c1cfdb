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
* Where torch runs its AVX2 kernels (``torch.backends.cpu.get_cpu_capability()``: a host
  without AVX-512, or ``ATEN_CPU_CAPABILITY=avx2``), float32 GELU (erf) is another
  approximation: nonzero down to -5.54304, without the band, and +0 below, not -0
  (``AVX2_ZERO_BELOW``, measured on an AMD EPYC host with AVX2 only; every other entry is the
  same there).  :func:`eager_zero_below` gives the host's.
"""

from __future__ import annotations

import torch
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


#: The zero eager returns below a threshold: ``x * 0`` (-0, NaN for -inf), ``+0``, or
#: ``|x * 0|`` (+0, NaN for -inf).
SIGNED, POSITIVE, POSITIVE_NAN_AT_INF = "x*0", "+0", "|x*0|"

#: ``ZERO_BELOW``'s entries where torch runs its AVX2 kernels: (threshold, zero).
AVX2_ZERO_BELOW: dict[tuple[str, str], tuple[float, str]] = {
    ("gelu_erf", "f32"): (-5.5430402755737305, POSITIVE_NAN_AT_INF)}


def eager_zero_below(kind: str, fmt: str, signed: bool) -> tuple[float, str]:
    """Eager's threshold for ``kind`` in ``fmt`` (``"f32"``, ``"f64"``) on this host's torch
    kernels, and its zero below (``signed``: ``x * 0`` on the AVX-512 kernels, else +0)."""
    if torch.backends.cpu.get_cpu_capability() == "AVX2" and (kind, fmt) in AVX2_ZERO_BELOW:
        return AVX2_ZERO_BELOW[kind, fmt]
    return ZERO_BELOW[kind][fmt], SIGNED if signed else POSITIVE


def zero_below(v: VB, kind: str, x: ir.Value, res: ir.Value, signed: bool) -> ir.Value:
    """``res`` with eager's zero below its threshold (:func:`eager_zero_below`)."""
    threshold, form = eager_zero_below(kind, v.fmt.name, signed)
    below = v.lt(x, v.c(threshold))
    zero = v.c(0.0) if form == POSITIVE else v.mul(x, v.c(0.0))
    return v.sel(below, v.abs(zero) if form == POSITIVE_NAN_AT_INF else zero, res)
