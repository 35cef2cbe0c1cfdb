"""``loop.unary`` kinds as LLVM IR.

Float kinds go to ``backends/cpu/vecmath/`` (polynomial vector code, no libm) or to an
LLVM rounding intrinsic; predicates (``isnan``...) compare; integer kinds use integer
arithmetic.  Compositions (tan, asinh, atan2...) are built by the lowering from these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir, vecmath
from ziggurat.backends.cpu.codegen.types import CodegenError
from ziggurat.backends.cpu.llvm_ir import splat_constant, value_type
from ziggurat.backends.cpu.vecmath.builder import VB

_ROUNDING = {"floor": "floor", "ceil": "ceil", "round": "rint", "trunc": "trunc"}
PREDICATES = ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit")
INT_KINDS = ("abs", "neg", "bitwise_not", "relu", "square")

#: Every kind ``loop.unary`` accepts (float kinds of vecmath, rounding, predicates, integer kinds).
UNARY_KINDS = frozenset(vecmath.UNARY_KINDS) | frozenset(_ROUNDING) | frozenset(PREDICATES) | frozenset(INT_KINDS)


def _elem(ty: ir.Type) -> ir.Type:
    return ty.element if isinstance(ty, ir.VectorType) else ty


def emit_unary(b: ir.IRBuilder, kind: str, x: ir.Value, params: Mapping[str, float], result: ir.Type) -> ir.Value:
    ty = value_type(x)
    elem = _elem(ty)
    if isinstance(elem, ir.IntType):
        return _int_unary(b, kind, x)
    if kind in _ROUNDING:
        return VB(b, x).intrinsic(_ROUNDING[kind], ty, [x])
    if kind in PREDICATES:
        return _predicate(b, kind, x)
    if kind not in vecmath.UNARY_KINDS:
        raise CodegenError(f"loop.unary: unknown kind '{kind}'")
    p: dict[str, float | None] = dict(params)
    return vecmath.apply_unary(b, kind, x, p)


def _predicate(b: ir.IRBuilder, kind: str, x: ir.Value) -> ir.Value:
    v = VB(b, x)
    if kind == "isnan":
        return b.fcmp_unordered("uno", x, x)
    if kind == "signbit":
        ity = v.ity
        bits = b.bitcast(x, ity)
        return b.icmp_signed("<", bits, splat_constant(ity, 0))
    ax = v.abs(x)
    inf = v.c(math.inf)
    if kind == "isinf":
        return b.fcmp_ordered("==", ax, inf)
    if kind == "isfinite":
        return b.fcmp_ordered("<", ax, inf)
    if kind == "isposinf":
        return b.fcmp_ordered("==", x, inf)
    if kind == "isneginf":
        return b.fcmp_ordered("==", x, v.c(-math.inf))
    raise CodegenError(f"unknown predicate {kind}")


def _int_unary(b: ir.IRBuilder, kind: str, x: ir.Value) -> ir.Value:
    ty = value_type(x)
    zero = splat_constant(ty, 0)
    if kind == "abs":
        return b.select(b.icmp_signed("<", x, zero), llvm_ir.sub(b, zero, x), x)
    if kind == "neg":
        return llvm_ir.sub(b, zero, x)
    if kind == "bitwise_not":
        return b.xor(x, splat_constant(ty, -1))  # pyright: ignore[reportReturnType]  # llvmlite: decorated IRBuilder ops infer as None
    if kind == "relu":
        return b.select(b.icmp_signed("<", x, zero), zero, x)
    if kind == "square":
        return llvm_ir.mul(b, x, x)
    if kind in ("floor", "ceil", "round", "trunc"):
        return x
    raise CodegenError(f"loop.unary '{kind}' has no integer form")
