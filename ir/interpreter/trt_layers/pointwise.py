"""Reference semantics of activation, unary, elementwise, select, scale, identity and cast."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ziggurat.dialects.trt.enums import ActivationType, ElementWiseOperation, ScaleMode, UnaryOperation
from ziggurat.dialects.trt.pointwise import (
    ActivationOp,
    CastOp,
    ElementWiseOp,
    IdentityOp,
    ScaleOp,
    SelectOp,
    UnaryOp,
)
from ziggurat.ir.interpreter.trt_layers.common import compute, layer, result_dtype, result_shape

A = ActivationType


def activation(kind: ActivationType, x: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    """IActivationLayer's documented formulas (x in f32)."""
    if kind == A.kRELU:
        return torch.clamp_min(x, 0.0)
    if kind == A.kSIGMOID:
        return 1.0 / (1.0 + torch.exp(-x))
    if kind == A.kTANH:
        return torch.tanh(x)
    if kind == A.kLEAKY_RELU:
        return torch.where(x >= 0, x, alpha * x)
    if kind == A.kELU:
        return torch.where(x >= 0, x, alpha * (torch.exp(x) - 1.0))
    if kind == A.kSELU:
        return torch.where(x > 0, beta * x, beta * (alpha * torch.exp(x) - alpha))
    if kind == A.kSOFTSIGN:
        return x / (1.0 + torch.abs(x))
    if kind == A.kSOFTPLUS:
        return alpha * torch.logaddexp(beta * x, torch.zeros_like(x))
    if kind == A.kCLIP:
        return torch.maximum(torch.minimum(x, torch.tensor(beta)), torch.tensor(alpha))
    if kind == A.kHARD_SIGMOID:
        return torch.clamp(alpha * x + beta, 0.0, 1.0)
    if kind == A.kSCALED_TANH:
        return alpha * torch.tanh(beta * x)
    if kind == A.kTHRESHOLDED_RELU:
        return torch.where(x > alpha, x, torch.zeros_like(x))
    if kind == A.kGELU_ERF:
        # x/2 * (1 + erf(x/sqrt 2)) as written, which eager's gelu computes: 1 + erf cancels to
        # exactly 0 below x = -5.54 (f32), as with a CUDA erff, and a later `== 0` depends on it
        return torch.nn.functional.gelu(x)
    if kind == A.kGELU_TANH:
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    raise NotImplementedError(f"activation {kind}")


@layer(ActivationOp)
def _activation(op: ActivationOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    y = activation(op.type.data, compute(args[0]), op.alpha.value.data, op.beta.value.data)
    return [y.to(result_dtype(op.output))]


_UNARY = {
    UnaryOperation.kEXP: torch.exp,
    UnaryOperation.kLOG: torch.log,
    UnaryOperation.kSQRT: torch.sqrt,
    UnaryOperation.kRECIP: torch.reciprocal,
    UnaryOperation.kABS: torch.abs,
    UnaryOperation.kNEG: torch.neg,
    UnaryOperation.kSIN: torch.sin,
    UnaryOperation.kCOS: torch.cos,
    UnaryOperation.kTAN: torch.tan,
    UnaryOperation.kSINH: torch.sinh,
    UnaryOperation.kCOSH: torch.cosh,
    UnaryOperation.kASIN: torch.asin,
    UnaryOperation.kACOS: torch.acos,
    UnaryOperation.kATAN: torch.atan,
    UnaryOperation.kASINH: torch.asinh,
    UnaryOperation.kACOSH: torch.acosh,
    UnaryOperation.kATANH: torch.atanh,
    UnaryOperation.kCEIL: torch.ceil,
    UnaryOperation.kFLOOR: torch.floor,
    UnaryOperation.kERF: torch.erf,
    UnaryOperation.kNOT: torch.logical_not,
    UnaryOperation.kSIGN: torch.sign,
    UnaryOperation.kROUND: torch.round,  # half to even, as TensorRT documents
    UnaryOperation.kISINF: torch.isinf,
    UnaryOperation.kISNAN: torch.isnan,
}


@layer(UnaryOp)
def _unary(op: UnaryOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [_UNARY[op.op.data](compute(args[0])).to(result_dtype(op.output))]


def elementwise(kind: ElementWiseOperation, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    E = ElementWiseOperation
    is_int = not a.dtype.is_floating_point and a.dtype != torch.bool
    if kind == E.kSUM:
        return a + b
    if kind == E.kPROD:
        return a * b
    if kind == E.kMAX:
        return torch.maximum(a, b)
    if kind == E.kMIN:
        return torch.minimum(a, b)
    if kind == E.kSUB:
        return a - b
    if kind == E.kDIV:  # integer division truncates toward zero
        return torch.div(a, b, rounding_mode="trunc") if is_int else a / b
    if kind == E.kPOW:
        return torch.pow(a, b)
    if kind == E.kFLOOR_DIV:
        return torch.div(a, b, rounding_mode="floor") if is_int else torch.floor(a / b)
    if kind == E.kAND:
        return torch.logical_and(a, b)
    if kind == E.kOR:
        return torch.logical_or(a, b)
    if kind == E.kXOR:
        return torch.logical_xor(a, b)
    if kind == E.kEQUAL:
        return a == b
    if kind == E.kGREATER:
        return a > b
    if kind == E.kLESS:
        return a < b
    raise NotImplementedError(f"elementwise {kind}")


@layer(ElementWiseOp)
def _elementwise(op: ElementWiseOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    shape = result_shape(op.output)
    a, b = (compute(t).expand(shape) for t in args)
    return [elementwise(op.op.data, a, b).to(result_dtype(op.output))]


@layer(SelectOp)
def _select(op: SelectOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    shape = result_shape(op.output)
    cond, a, b = (t.expand(shape) for t in args)
    return [torch.where(cond, a, b)]


@layer(ScaleOp)
def _scale(op: ScaleOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    x = compute(args[0])
    coefficients = iter(args[1:])
    rank = x.dim()
    axis = op.channel_axis.value.data
    mode = op.mode.data

    def shaped(value: torch.Tensor) -> torch.Tensor:
        value = compute(value)
        if mode == ScaleMode.kUNIFORM:
            return value.reshape(())
        if mode == ScaleMode.kCHANNEL:
            return value.reshape([-1 if i == axis else 1 for i in range(rank)])
        return value.reshape(x.shape[axis:])

    shift = shaped(next(coefficients)) if op.shift is not None else None
    scale = shaped(next(coefficients)) if op.scale is not None else None
    power = shaped(next(coefficients)) if op.power is not None else None
    y = x
    if scale is not None:
        y = y * scale
    if shift is not None:
        y = y + shift
    if power is not None:
        y = torch.pow(y, power)
    return [y.to(result_dtype(op.output))]


@layer(IdentityOp)
def _identity(op: IdentityOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [args[0].clone()]


def cast(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """ICastLayer.  Float -> integer rounds toward zero and saturates, NaN giving 0, as TensorRT
    does on the GPU (NaN -> 0, +inf -> INT32_MAX: NVIDIA/TensorRT#4775; CUDA's ``cvt.rzi``), not
    as x86 does (the integer minimum for all three): a converter that needs torch's answer on
    those values must not hand them to a cast (``converters/casts.py``)."""
    if not x.dtype.is_floating_point or dtype.is_floating_point or dtype == torch.bool:
        return x.to(dtype)
    info = torch.iinfo(dtype)
    wide = x.double()
    inside = wide.nan_to_num(nan=0.0).clamp(info.min, info.max).trunc().to(dtype)
    # float64 rounds 2**63 - 1 up to 2**63, out of int64's range: saturate those explicitly
    return torch.where(wide >= 2.0 ** (info.bits - 1), torch.tensor(info.max, dtype=dtype), inside)


@layer(CastOp)
def _cast(op: CastOp, args: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [cast(args[0], result_dtype(op.output))]
