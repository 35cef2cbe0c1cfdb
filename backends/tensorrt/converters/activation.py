"""Activations -> IActivationLayer (and small compositions where TensorRT has no single type)."""

from __future__ import annotations

import math

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import (
    FLOAT_DTYPES,
    activation,
    elementwise,
    float_input,
    reshape,
    select,
    unary,
)
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import ActivationType, ElementWiseOperation, UnaryOperation

A = ActivationType
E = ElementWiseOperation
U = UnaryOperation


def float_self(args: ConverterArgs) -> str | None:
    """Validator: TensorRT activations take float tensors only."""
    dtype = args.dtype("self")
    return None if dtype in FLOAT_DTYPES else f"IActivationLayer takes float tensors, 'self' is {dtype}"


def _self(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return float_input(ctx, args.tensor("self"))


@converter("aten::relu(Tensor self) -> Tensor", "aten::relu_(Tensor(a!) self) -> Tensor(a!)", validator=float_self)
def relu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return activation(ctx, _self(ctx, args), A.kRELU)


@converter("aten::sigmoid(Tensor self) -> Tensor", "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)")
def sigmoid(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return activation(ctx, _self(ctx, args), A.kSIGMOID)


@converter("aten::tanh(Tensor self) -> Tensor", "aten::tanh_(Tensor(a!) self) -> Tensor(a!)")
def tanh(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return activation(ctx, _self(ctx, args), A.kTANH)


@converter(
    "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
    validator=float_self,
)
def leaky_relu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return leaky(ctx, _self(ctx, args), args.get_float("negative_slope"))


def leaky(ctx: ConversionContext, x: SSAValue, slope: float, suffix: str = "") -> SSAValue:
    """Eager's ``x > 0 ? x : x * slope``.  kLEAKY_RELU (``x >= 0 ? x : slope * x``) agrees for a
    finite slope >= 0; otherwise a zero input differs (``0 * inf`` is NaN, ``0 * -0.5`` is -0),
    so the select is built from layers."""
    if math.isfinite(slope) and slope >= 0:
        return activation(ctx, x, A.kLEAKY_RELU, alpha=slope, suffix=suffix)
    return positive_or(ctx, x, elementwise(ctx, x, slope, E.kPROD, suffix=f"{suffix} slope".strip()), suffix)


def positive_or(ctx: ConversionContext, x: SSAValue, other: SSAValue, suffix: str = "") -> SSAValue:
    """``x > 0 ? x : other`` (a NaN ``x`` takes ``other``)."""
    positive = elementwise(ctx, x, 0.0, E.kGREATER, suffix=f"{suffix} positive".strip())
    return select(ctx, positive, x, other, dtype=ctx.dtype(x), suffix=suffix)


def accurate_expm1(ctx: ConversionContext, x: SSAValue) -> SSAValue:
    """``expm1(x)`` to eager's accuracy from kEXP and kLOG: ``exp(x) - 1`` for ``|x| >= 0.5``
    (no cancellation there; -1, +inf and NaN at the ends), Kahan's ``(u - 1) * x / log(u)``
    with ``u = exp(x)`` below, and ``x`` itself where ``u`` rounds to 1.  TensorRT's kELU/kSELU
    compute ``exp(x) - 1``, which keeps no relative precision for tiny ``|x|`` (selu(-1e-3)
    was 6e-5 off, then amplified downstream: fuzz program s2_g290)."""
    dtype = ctx.dtype(x)
    u = unary(ctx, x, U.kEXP, "exp")
    u_minus_1 = elementwise(ctx, u, 1.0, E.kSUB, suffix="u - 1")
    kahan = elementwise(ctx, elementwise(ctx, u_minus_1, x, E.kPROD, suffix="(u - 1) x"),
                        unary(ctx, u, U.kLOG, "log u"), E.kDIV, suffix="(u - 1) x / log u")
    near_zero = elementwise(ctx, unary(ctx, x, U.kABS, "|x|"), 0.5, E.kLESS, suffix="|x| < 0.5")
    result = select(ctx, near_zero, kahan, u_minus_1, dtype=dtype, suffix="expm1")
    return select(ctx, elementwise(ctx, u, 1.0, E.kEQUAL, suffix="u = 1"), x, result, dtype=dtype, suffix="tiny")


def _elu(ctx: ConversionContext, x: SSAValue, alpha: float, scale: float, input_scale: float) -> SSAValue:
    """Eager's elu kernel: ``x < 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale``, the
    coefficients multiplied in float32 as eager's opmath does (-0 and NaN take the second
    branch: -0 stays -0 even for an infinite alpha)."""
    f32 = torch.float32
    negcoef = float(torch.tensor(alpha, dtype=f32) * torch.tensor(scale, dtype=f32))
    inner = x if input_scale == 1.0 else elementwise(ctx, x, input_scale, E.kPROD, suffix="input_scale")
    negative = elementwise(ctx, accurate_expm1(ctx, inner), negcoef, E.kPROD, suffix="alpha * scale")
    positive = x if scale == 1.0 else elementwise(ctx, x, scale, E.kPROD, suffix="scale")
    below = elementwise(ctx, x, 0.0, E.kLESS, suffix="negative")
    return select(ctx, below, negative, positive, dtype=ctx.dtype(x))


@converter("aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
           validator=float_self)
def elu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _elu(ctx, _self(ctx, args), args.get_float("alpha"), args.get_float("scale"),
                args.get_float("input_scale"))


@converter("aten::selu(Tensor self) -> Tensor", validator=float_self)
def selu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _elu(ctx, _self(ctx, args), 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0)


def _celu_alpha(args: ConverterArgs) -> str | None:
    reason = float_self(args)
    if reason is None and args.get_float("alpha") == 0.0:
        return "celu with alpha = 0 raises in eager (ZeroDivisionError)"
    return reason


@converter("aten::celu(Tensor self, Scalar alpha=1.0) -> Tensor", validator=_celu_alpha)
def celu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Eager's celu is elu(x, alpha, 1, 1 / alpha)."""
    alpha = args.get_float("alpha")
    return _elu(ctx, _self(ctx, args), alpha, 1.0, 1.0 / alpha)


def _gelu_mode(args: ConverterArgs) -> str | None:
    mode = args.get_str("approximate")
    if mode not in ("none", "tanh"):
        return f"unknown gelu approximation {mode!r}"
    return float_self(args)


@converter(
    'aten::gelu(Tensor self, *, str approximate="none") -> Tensor',
    'aten::gelu_(Tensor(a!) self, *, str approximate="none") -> Tensor(a!)',
    validator=_gelu_mode,
)
def gelu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    kind = A.kGELU_TANH if args.get_str("approximate") == "tanh" else A.kGELU_ERF
    return activation(ctx, _self(ctx, args), kind)


def clip(ctx: ConversionContext, x: SSAValue, low: float, high: float) -> SSAValue:
    """min(max(x, low), high) as torch computes it; kCLIP when low <= high (then they agree)."""
    if low <= high:
        return activation(ctx, x, A.kCLIP, alpha=low, beta=high)
    return elementwise(ctx, elementwise(ctx, x, low, E.kMAX, suffix="min"), high, E.kMIN)


@converter(
    "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> (Tensor)",
    "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
    validator=float_self,
)
def hardtanh(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kCLIP: max(alpha, min(beta, x)) with alpha = min_val, beta = max_val."""
    return clip(ctx, _self(ctx, args), args.get_float("min_val"), args.get_float("max_val"))


@converter("aten::relu6(Tensor self) -> Tensor", validator=float_self)
def relu6(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return activation(ctx, _self(ctx, args), A.kCLIP, alpha=0.0, beta=6.0)


@converter("aten::hardsigmoid(Tensor self) -> Tensor", validator=float_self)
def hardsigmoid(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return activation(ctx, _self(ctx, args), A.kHARD_SIGMOID, alpha=1.0 / 6.0, beta=0.5)


@converter("aten::hardswish(Tensor self) -> Tensor", validator=float_self)
def hardswish(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = _self(ctx, args)
    gate = activation(ctx, x, A.kHARD_SIGMOID, alpha=1.0 / 6.0, beta=0.5, suffix="hardsigmoid")
    return elementwise(ctx, x, gate, E.kPROD)


@converter("aten::silu(Tensor self) -> Tensor", validator=float_self)
def silu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = _self(ctx, args)
    return elementwise(ctx, x, activation(ctx, x, A.kSIGMOID, suffix="sigmoid"), E.kPROD)


@converter("aten::mish(Tensor self) -> Tensor", validator=float_self)
def mish(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = _self(ctx, args)
    soft = activation(ctx, x, A.kSOFTPLUS, alpha=1.0, beta=1.0, suffix="softplus")
    return elementwise(ctx, x, activation(ctx, soft, A.kTANH, suffix="tanh"), E.kPROD)


def _softplus_ok(args: ConverterArgs) -> str | None:
    if args.get_float("beta") == 0.0:
        return "softplus with beta = 0 (kSOFTPLUS takes alpha = 1 / beta)"
    return float_self(args)


@converter("aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", validator=_softplus_ok)
def softplus(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kSOFTPLUS = alpha*log(exp(beta*x)+1) with alpha = 1/beta; where ``x * beta > threshold``
    torch returns x (the product, as eager compares it: ``x > threshold / beta`` flips with a
    negative beta, and an infinite one makes it 0)."""
    beta = args.get_float("beta")
    x = _self(ctx, args)
    soft = activation(ctx, x, A.kSOFTPLUS, alpha=1.0 / beta, beta=beta, suffix="softplus")
    scaled = elementwise(ctx, x, beta, E.kPROD, suffix="beta * x")
    linear = elementwise(ctx, scaled, args.get_float("threshold"), E.kGREATER, suffix="above threshold")
    return select(ctx, linear, x, soft, dtype=ctx.dtype(x))


@converter("aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", validator=float_self)
def threshold(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """``x <= threshold ? value : x`` as torch computes it: a NaN is not at or below the
    threshold, so it stays NaN (``x > threshold ? x : value`` and kTHRESHOLDED_RELU replace it)."""
    x = _self(ctx, args)
    limit = args.get_float("threshold")
    value = args.get_float("value")
    below = elementwise(ctx, elementwise(ctx, x, limit, E.kLESS, suffix="below threshold"),
                        elementwise(ctx, x, limit, E.kEQUAL, suffix="at threshold"), E.kOR, suffix="at or below")
    return select(ctx, below, value, x, dtype=ctx.dtype(x))


@converter("aten::prelu(Tensor self, Tensor weight) -> Tensor", validator=float_self)
def prelu(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Eager's ``x > 0 ? x : weight * x``, weight per channel (dim 1) or shared.  (``max(0, x) +
    weight * min(0, x)`` made every positive x NaN for an infinite weight: ``inf * 0``.)"""
    x = _self(ctx, args)
    weight = ctx.tensor(args.tensor("weight"))
    rank = ctx.rank(x)
    count = ctx.shape(weight)[0] if ctx.rank(weight) else 1
    if count != 1 and rank >= 2:
        weight = reshape(ctx, weight, [1, count] + [1] * (rank - 2), "weight per channel")
    y = positive_or(ctx, x, elementwise(ctx, x, weight, E.kPROD, suffix="slope"))
    return reshape(ctx, y, ctx.result_shape(), "result shape")


def _static_bounds(args: ConverterArgs) -> str | None:
    reason = float_self(args)
    if reason:
        return reason
    if args.is_none("min") and args.is_none("max"):
        return "clamp needs min or max"
    return None


@converter("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", validator=_static_bounds)
def clamp(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = _self(ctx, args)
    low = args.get_optional_float("min")
    high = args.get_optional_float("max")
    if low is not None and high is not None:
        return clip(ctx, x, low, high)
    if low is not None:
        return elementwise(ctx, x, low, E.kMAX)
    assert high is not None
    return elementwise(ctx, x, high, E.kMIN)


def _numeric(args: ConverterArgs) -> str | None:
    if args.dtype("self") == torch.bool:
        return "clamp of bool tensors"
    if args.has("min") and args.has("max") and args.is_none("min") and args.is_none("max"):
        return "clamp needs min or max"
    return None


@converter("aten::clamp_min(Tensor self, Scalar min) -> Tensor", "aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
           validator=_numeric)
def clamp_min(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, args.tensor("self"), args.tensor_or_scalar("min"), E.kMAX, dtype=ctx.result_dtype())


@converter("aten::clamp_max(Tensor self, Scalar max) -> Tensor", "aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
           validator=_numeric)
def clamp_max(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return elementwise(ctx, args.tensor("self"), args.tensor_or_scalar("max"), E.kMIN, dtype=ctx.result_dtype())


@converter("aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", validator=_numeric)
def clamp_tensor(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    dtype = ctx.result_dtype()
    y: SSAValue = ctx.tensor(args.tensor("self"))
    if not args.is_none("min"):
        y = elementwise(ctx, y, args.tensor_or_scalar("min"), E.kMAX, dtype=dtype, suffix="min")
    if not args.is_none("max"):
        y = elementwise(ctx, y, args.tensor_or_scalar("max"), E.kMIN, dtype=dtype, suffix="max")
    return y
