"""Type-generic LLVM IR emission helpers for the vecmath kernels.

:class:`VB` wraps an ``llvmlite.ir.IRBuilder`` together with the operand type of the value
being computed (``float``/``double`` scalar or ``<W x float|double>`` vector).  All constants
it creates are splatted to that type, integer helpers use the matching integer lanes
(``i32`` for f32, ``i64`` for f64), and intrinsics are declared on demand in the builder's
module with the overloaded name mangling (``llvm.fma.v16f32``, ``llvm.fabs.f64``, ...).

Everything emitted is straight-line code: no basic blocks are created, so the helpers can be
used in the middle of any loop body or GEMM epilogue.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import F32, F64, I1, I32, I64, declare, instr, intrinsic_suffix, value_type

SUPPORTED_WIDTHS = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class FloatFormat:
    """Bit-level facts about an IEEE binary format."""

    name: str
    elem: ir.Type
    int_elem: ir.IntType
    mant_bits: int  # explicit mantissa bits
    bias: int
    min_normal: float

    @property
    def bits(self) -> int:
        return self.int_elem.width


FMT_F32 = FloatFormat("f32", F32, I32, 23, 127, 2.0 ** -126)
FMT_F64 = FloatFormat("f64", F64, I64, 52, 1023, 2.0 ** -1022)


def f32_round(v: float) -> float:
    """Round a Python float to the nearest f32 value (returned as a Python float); a finite value
    beyond float32's range becomes the infinity of its sign, as torch converts a scalar."""
    if math.isnan(v) or math.isinf(v):
        return v
    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def _format_of(elem: ir.Type) -> FloatFormat:
    if isinstance(elem, ir.FloatType):
        return FMT_F32
    if isinstance(elem, ir.DoubleType):
        return FMT_F64
    raise TypeError(f"vecmath: expected float or double lanes, got {elem}")


def value_type_info(ty: ir.Type) -> tuple[FloatFormat, int | None]:
    """(format, vector width or None for scalars) of a supported operand type; TypeError otherwise."""
    if isinstance(ty, ir.VectorType):
        fmt = _format_of(ty.element)
        if ty.count not in SUPPORTED_WIDTHS:
            raise TypeError(f"vecmath: unsupported vector width {ty.count}; expected one of {SUPPORTED_WIDTHS}")
        return fmt, ty.count
    return _format_of(ty), None


class VB:
    """Vector builder: arithmetic on values of one operand type ``like``."""

    def __init__(self, b: ir.IRBuilder, like: ir.Type | ir.Value) -> None:
        ty = like if isinstance(like, ir.Type) else value_type(like)
        self.b = b
        self.fmt, self.width = value_type_info(ty)
        self.ty: ir.Type = ty
        self.ity: ir.Type = self.fmt.int_elem if self.width is None else ir.VectorType(self.fmt.int_elem, self.width)
        self.bty: ir.Type = I1 if self.width is None else ir.VectorType(I1, self.width)

    # ----------------------------------------------------------------- type helpers
    @property
    def is_f32(self) -> bool:
        return self.fmt is FMT_F32

    def retyped(self, elem: ir.Type) -> VB:
        """A builder for the same width with different float lanes (f32 <-> f64)."""
        ty = elem if self.width is None else ir.VectorType(elem, self.width)
        return VB(self.b, ty)

    def intrinsic(self, base: str, ret: ir.Type, args: Sequence[ir.Value],
                  overload: Sequence[ir.Type] | None = None, fastmath: Sequence[str] = ()) -> ir.Value:
        """Call ``llvm.<base>.<mangled overload types>``, declaring it if needed."""
        tys = [ret] if overload is None else list(overload)
        name = "llvm." + base + "".join("." + intrinsic_suffix(t) for t in tys)
        fn = declare(self.b.module, name, ret, [value_type(a) for a in args])
        return self.b.call(fn, list(args), fastmath=tuple(fastmath))

    # ----------------------------------------------------------------- constants
    def c(self, v: float) -> ir.Constant:
        """Float constant splatted to the operand type (rounded to the lane format)."""
        if self.width is None:
            return ir.Constant(self.ty, v)
        return ir.Constant(self.ty, [v] * self.width)

    def ci(self, v: int) -> ir.Constant:
        if self.width is None:
            return ir.Constant(self.ity, v)
        return ir.Constant(self.ity, [v] * self.width)

    def cb(self, v: bool) -> ir.Constant:
        if self.width is None:
            return ir.Constant(self.bty, int(v))
        return ir.Constant(self.bty, [int(v)] * self.width)

    # ----------------------------------------------------------------- arithmetic
    def add(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.fadd(a, c))

    def sub(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.fsub(a, c))

    def mul(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.fmul(a, c))

    def div(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.fdiv(a, c))

    def neg(self, a: ir.Value) -> ir.Value:
        return instr(self.b.fneg(a))

    def fma(self, a: ir.Value, c: ir.Value, d: ir.Value) -> ir.Value:
        """a * c + d with a single rounding (llvm.fma; the target must have FMA, as AVX2/AVX-512 do)."""
        return self.intrinsic("fma", self.ty, [a, c, d])

    def abs(self, a: ir.Value) -> ir.Value:
        return self.intrinsic("fabs", self.ty, [a])

    def sqrt(self, a: ir.Value) -> ir.Value:
        return self.intrinsic("sqrt", self.ty, [a])

    def rint(self, a: ir.Value) -> ir.Value:
        """Round to nearest integer, ties to even (llvm.rint under the default rounding mode)."""
        return self.intrinsic("rint", self.ty, [a])

    def copysign(self, mag: ir.Value, sign: ir.Value) -> ir.Value:
        return self.intrinsic("copysign", self.ty, [mag, sign])

    def poly(self, v: ir.Value, coeffs: Sequence[float]) -> ir.Value:
        """Horner evaluation of sum coeffs[k] * v**k with fused multiply-adds."""
        acc: ir.Value = self.c(coeffs[-1])
        for k in range(len(coeffs) - 2, -1, -1):
            acc = self.fma(acc, v, self.c(coeffs[k]))
        return acc

    # ----------------------------------------------------------------- comparisons / selects
    def lt(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered("<", a, c)

    def gt(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered(">", a, c)

    def eq(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered("==", a, c)

    def ne(self, a: ir.Value, c: ir.Value) -> ir.Value:
        """Unordered or not equal (true for NaN operands)."""
        return self.b.fcmp_unordered("!=", a, c)

    def isnan(self, a: ir.Value) -> ir.Value:
        return self.b.fcmp_unordered("uno", a, a)

    def uge(self, a: ir.Value, c: ir.Value) -> ir.Value:
        """a >= c or unordered."""
        return self.b.fcmp_unordered(">=", a, c)

    def ueq(self, a: ir.Value, c: ir.Value) -> ir.Value:
        """a == c or unordered."""
        return self.b.fcmp_unordered("==", a, c)

    def sel(self, cond: ir.Value, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.select(cond, a, c)

    def band(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.and_(a, c))

    def bor(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.or_(a, c))

    def bnot(self, a: ir.Value) -> ir.Value:
        return instr(self.b.xor(a, self.cb(True)))

    def keep_nan(self, x: ir.Value, res: ir.Value) -> ir.Value:
        """res, except NaN lanes of x pass through unchanged."""
        return self.sel(self.isnan(x), x, res)

    def max_prop(self, x: ir.Value, lo: ir.Value) -> ir.Value:
        """x < lo ? lo : x -- a NaN in x propagates, -0 stays -0 (torch clamp_min semantics)."""
        return self.sel(self.lt(x, lo), lo, x)

    def min_prop(self, x: ir.Value, hi: ir.Value) -> ir.Value:
        """x > hi ? hi : x -- a NaN in x propagates (torch clamp_max semantics)."""
        return self.sel(self.gt(x, hi), hi, x)

    def max_ord(self, x: ir.Value, lo: ir.Value) -> ir.Value:
        """x > lo ? x : lo -- NaN lanes become lo (one maxps); for clamping kernel inputs."""
        return self.sel(self.gt(x, lo), x, lo)

    def min_ord(self, x: ir.Value, hi: ir.Value) -> ir.Value:
        """x < hi ? x : hi -- NaN lanes become hi (one minps)."""
        return self.sel(self.lt(x, hi), x, hi)

    # ----------------------------------------------------------------- integer view
    def to_bits(self, a: ir.Value) -> ir.Value:
        return instr(self.b.bitcast(a, self.ity))

    def from_bits(self, i: ir.Value) -> ir.Value:
        return instr(self.b.bitcast(i, self.ty))

    def fptosi(self, a: ir.Value) -> ir.Value:
        return instr(self.b.fptosi(a, self.ity))

    def sitofp(self, i: ir.Value) -> ir.Value:
        return instr(self.b.sitofp(i, self.ty))

    def iadd(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.add(a, c))

    def isub(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return instr(self.b.sub(a, c))

    def shl(self, a: ir.Value, n: int) -> ir.Value:
        return instr(self.b.shl(a, self.ci(n)))

    def ashr(self, a: ir.Value, n: int) -> ir.Value:
        return instr(self.b.ashr(a, self.ci(n)))

    def imin(self, a: ir.Value, c: ir.Value) -> ir.Value:
        return self.b.select(self.b.icmp_signed("<", a, c), a, c)

    def pow2i(self, n: ir.Value) -> ir.Value:
        """2**n for an integer lane n in the normal exponent range (built from exponent bits)."""
        return self.from_bits(self.shl(self.iadd(n, self.ci(self.fmt.bias)), self.fmt.mant_bits))

    # ----------------------------------------------------------------- conversions
    def fpext(self, a: ir.Value, to: VB) -> ir.Value:
        return instr(self.b.fpext(a, to.ty))

    def fptrunc(self, a: ir.Value, to: VB) -> ir.Value:
        return instr(self.b.fptrunc(a, to.ty))
