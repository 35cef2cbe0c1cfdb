"""Elementwise activations applied to GEMM accumulators (fused epilogue).

The piecewise-linear kinds are emitted here; the transcendental ones
(``gelu_erf``, ``gelu_tanh``, ``silu``, ``sigmoid``, ``tanh``) come from
``ziggurat.backends.cpu.vecmath.apply_unary``.  Semantics follow ``torch.nn.functional`` including NaN
propagation through the clamps.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir, vecmath
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import value_type

# kind -> (parameter name -> default); ``None`` default = optional and absent.
UNARY_PARAMS: dict[str, dict[str, float | None]] = {
    "relu": {},
    "relu6": {},
    "hardtanh": {"min_val": -1.0, "max_val": 1.0},
    "clamp": {"min": None, "max": None},
    "leaky_relu": {"negative_slope": 0.01},
    "hardswish": {},
    "hardsigmoid": {},
    "gelu_erf": {},
    "gelu_tanh": {},
    "silu": {},
    "sigmoid": {},
    "tanh": {},
}
INLINE_KINDS = frozenset({"relu", "relu6", "hardtanh", "clamp", "leaky_relu", "hardswish", "hardsigmoid"})
VECMATH_KINDS = frozenset(UNARY_PARAMS) - INLINE_KINDS


class UnaryError(ValueError):
    """Unknown activation kind or bad parameters."""


def normalize_unary_params(kind: str, params: Mapping[str, float | None] | None) -> dict[str, float | None]:
    """Validate ``params`` for ``kind`` and fill defaults."""
    if kind not in UNARY_PARAMS:
        raise UnaryError(f"unknown unary epilogue {kind!r}; supported: {', '.join(sorted(UNARY_PARAMS))}")
    spec = UNARY_PARAMS[kind]
    params = dict(params or {})
    unknown = sorted(set(params) - set(spec))
    if unknown:
        allowed = ", ".join(spec) or "none"
        raise UnaryError(f"unary {kind!r} got unknown parameter(s) {unknown}; allowed: {allowed}")
    out: dict[str, float | None] = {}
    for name, default in spec.items():
        value = params.get(name, default)
        if value is not None:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise UnaryError(f"unary {kind!r}: parameter {name} must be a number, got {value!r}") from None
        out[name] = value
    if kind == "hardtanh" and out["min_val"] is not None and out["max_val"] is not None:
        if out["min_val"] > out["max_val"]:  # type: ignore[operator]
            raise UnaryError(f"hardtanh: min_val {out['min_val']} > max_val {out['max_val']}")
    return out


def representable(value: float, half: str) -> bool:
    """Whether ``value`` is a value of the 16-bit type ``half`` (``"bf16"`` or ``"f16"``), or infinite."""
    if math.isinf(value):
        return True
    try:
        if half == "f16":
            return struct.unpack("<e", struct.pack("<e", value))[0] == value
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:  # past the type's range
        return False
    return struct.unpack("<f", struct.pack("<I", bits))[0] == value and not bits & 0xFFFF


def commutes_with_rounding(kind: str, bounds: Iterable[float | None], half: str) -> bool:
    """Whether rounding to the 16-bit type ``half`` before the activation ``kind`` gives what
    rounding after it gives: relu, relu6, and a hardtanh or clamp whose bounds (``None``:
    unbounded) are values of that type.  Then a fused 16-bit epilogue needs no rounding (bf16
    kernels) or split (``split_half_float_epilogues.py``) before it."""
    if kind in ("relu", "relu6"):
        return True
    return kind in ("hardtanh", "clamp") and all(v is None or representable(v, half) for v in bounds)


def emit_unary(
    b: ir.IRBuilder, vec: VecOps, kind: str, x: ir.Value, params: Mapping[str, float | None] | None = None
) -> ir.Value:
    """``kind(x)`` for a value of type ``vec.ty``."""
    p = normalize_unary_params(kind, params)
    if kind in VECMATH_KINDS:
        try:
            return vecmath.apply_unary(b, kind, x, {k: v for k, v in p.items() if v is not None})
        except Exception as exc:  # noqa: BLE001 - name the epilogue that failed
            raise UnaryError(
                f"vecmath.apply_unary failed to emit the {kind!r} epilogue for {value_type(x)}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    zero = vec.const(0.0)
    if kind in ("hardtanh", "clamp") and any(v is not None and math.isnan(v) for v in p.values()):
        return vec.const(math.nan)  # torch: a NaN bound makes every element NaN
    if kind == "relu":
        return vec.max(b, x, zero)
    if kind == "relu6":
        return vec.min(b, vec.max(b, x, zero), vec.const(6.0))
    if kind == "hardtanh":
        return vec.min(b, vec.max(b, x, vec.const(p["min_val"])), vec.const(p["max_val"]))  # type: ignore[arg-type]
    if kind == "clamp":
        if p["min"] is not None:
            x = vec.max(b, x, vec.const(p["min"]))
        if p["max"] is not None:
            x = vec.min(b, x, vec.const(p["max"]))
        return x
    if kind == "leaky_relu":
        scaled = b.fmul(x, vec.const(p["negative_slope"]))  # type: ignore[arg-type]
        return b.select(b.fcmp_ordered(">", x, zero), x, scaled)
    if kind in ("hardswish", "hardsigmoid"):
        gate = vec.min(b, vec.max(b, llvm_ir.fadd(b, x, vec.const(3.0)), zero), vec.const(6.0))
        if kind == "hardswish":
            return llvm_ir.fdiv(b, llvm_ir.fmul(b, x, gate), vec.const(6.0))
        return llvm_ir.fdiv(b, gate, vec.const(6.0))
    raise UnaryError(f"unary epilogue {kind!r} is not implemented")  # pragma: no cover
