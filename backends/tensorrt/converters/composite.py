"""Ops that TensorRT expresses as a few layers: attention, RNN cells, fake quantization."""

from __future__ import annotations

import math

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import (
    FLOAT_DTYPES,
    activation,
    cast,
    elementwise,
    reduce,
    reshape,
    select,
    slice_dim,
    transpose,
    unary,
)
from ziggurat.backends.tensorrt.converters.linear import matmul
from ziggurat.backends.tensorrt.converters.reduction import softmax
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import ActivationType, ElementWiseOperation, ReduceOperation, UnaryOperation
from ziggurat.passes.decompose_torch_ops import eager_flash_attention, math_attention_factors

A = ActivationType
E = ElementWiseOperation
R = ReduceOperation
U = UnaryOperation


def _sdpa_ok(args: ConverterArgs) -> str | None:
    if args.get_float("dropout_p") != 0.0:
        return "attention dropout"
    if args.get_bool("enable_gqa"):
        return "grouped-query attention"
    if args.dtype("query") not in FLOAT_DTYPES:
        return f"attention on {args.dtype('query')} tensors"
    if args.rank("query") < 2:
        return "attention needs [..., L, E] queries"
    return None


@converter(
    "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
    validator=_sdpa_ok,
)
def scaled_dot_product_attention(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """softmax(q @ k^T * scale + mask) @ v as eager: masks add 0 / -inf (a NaN or +inf score
    they hide stays NaN), except the causal mask of the shapes eager's flash kernel takes,
    which replaces the hidden scores; a row whose scores are all -inf gives 0 (_safe_softmax).
    The other shapes scale q and k before their product, as eager's math path does."""
    q, k, v = (ctx.tensor(args.tensor(n)) for n in ("query", "key", "value"))
    dtype = ctx.dtype(q)
    scale = args.get_optional_float("scale")
    if scale is None:
        scale = 1.0 / math.sqrt(ctx.shape(q)[-1])
    rank_k = ctx.rank(k)
    k_t = transpose(ctx, k, list(range(rank_k - 2)) + [rank_k - 1, rank_k - 2], "key transposed")
    flash = eager_flash_attention(ctx.shape(q), ctx.shape(k), ctx.shape(v))
    if flash:
        scores = elementwise(ctx, matmul(ctx, q, k_t, suffix="scores"), scale, E.kPROD, dtype=dtype, suffix="scaled")
    else:  # eager's math path scales q and k before their product
        q_factor, k_factor = math_attention_factors(scale)
        q = elementwise(ctx, q, q_factor, E.kPROD, dtype=dtype, suffix="query scaled")
        k_t = elementwise(ctx, k_t, k_factor, E.kPROD, dtype=dtype, suffix="key scaled")
        scores = matmul(ctx, q, k_t, suffix="scores")
    length, source = ctx.shape(q)[-2], ctx.shape(k)[-2]
    if args.get_bool("is_causal"):
        causal = ctx.constant(torch.ones(length, source, dtype=torch.bool).tril(), "causal mask")
        if flash:
            scores = select(ctx, causal, scores, -math.inf, dtype=dtype, suffix="causal")
        else:
            scores = _add_mask(ctx, scores, causal, dtype, "causal")
    if not args.is_none("attn_mask"):
        scores = _add_mask(ctx, scores, args.tensor("attn_mask"), dtype, "mask")
    weights = softmax(ctx, scores, -1, "softmax")
    live = elementwise(ctx, scores, -math.inf, E.kEQUAL, suffix="hidden")
    live = cast(ctx, unary(ctx, live, U.kNOT, "not hidden"), dtype, "not hidden as float")
    masked_row = elementwise(ctx, reduce(ctx, live, R.kMAX, [-1], True, "any not hidden"), 0.0, E.kEQUAL,
                             suffix="row hidden")
    weights = select(ctx, masked_row, 0.0, weights, dtype=dtype, suffix="safe softmax")
    return reshape(ctx, matmul(ctx, weights, v, suffix="weighted values"), ctx.result_shape(), "result shape")


def _add_mask(ctx: ConversionContext, scores: SSAValue, mask: SSAValue, dtype: torch.dtype, suffix: str) -> SSAValue:
    """``scores + mask``, a bool mask as 0 where True and -inf where False."""
    if ctx.dtype(ctx.tensor(mask)) == torch.bool:
        mask = select(ctx, mask, 0.0, -math.inf, dtype=dtype, suffix=f"{suffix} as float")
    return elementwise(ctx, scores, mask, E.kSUM, dtype=dtype, suffix=suffix)


# -- recurrent cells ---------------------------------------------------------------------------------


def _gates(ctx: ConversionContext, x: SSAValue, h: SSAValue, args: ConverterArgs) -> tuple[SSAValue, SSAValue]:
    """x @ w_ih^T + b_ih and h @ w_hh^T + b_hh."""
    gi = matmul(ctx, x, args.tensor("w_ih"), transpose_b=True, suffix="input gates")
    gh = matmul(ctx, h, args.tensor("w_hh"), transpose_b=True, suffix="hidden gates")
    if not args.is_none("b_ih"):
        gi = elementwise(ctx, gi, args.tensor("b_ih"), E.kSUM, suffix="input bias")
    if not args.is_none("b_hh"):
        gh = elementwise(ctx, gh, args.tensor("b_hh"), E.kSUM, suffix="hidden bias")
    return gi, gh


def _chunk(ctx: ConversionContext, x: SSAValue, count: int, suffix: str) -> list[SSAValue]:
    dim = ctx.rank(x) - 1
    size = ctx.shape(x)[dim] // count
    return [slice_dim(ctx, x, dim, i * size, size, 1, f"{suffix} {i}") for i in range(count)]


def _cell_ok(args: ConverterArgs) -> str | None:
    return None if args.dtype("input") in FLOAT_DTYPES else f"an RNN cell on {args.dtype('input')} tensors"


@converter(
    "aten::gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor",
    validator=_cell_ok,
)
def gru_cell(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """r, z = sigmoid(gi + gh); n = tanh(gi_n + r * gh_n); h' = n + z * (h - n)."""
    h = ctx.tensor(args.tensor("hx"))
    gi, gh = _gates(ctx, args.tensor("input"), h, args)
    ir, iz, i_n = _chunk(ctx, gi, 3, "input gate")
    hr, hz, h_n = _chunk(ctx, gh, 3, "hidden gate")
    r = activation(ctx, elementwise(ctx, ir, hr, E.kSUM, suffix="reset sum"), A.kSIGMOID, suffix="reset")
    z = activation(ctx, elementwise(ctx, iz, hz, E.kSUM, suffix="update sum"), A.kSIGMOID, suffix="update")
    n = activation(ctx, elementwise(ctx, i_n, elementwise(ctx, r, h_n, E.kPROD, suffix="reset hidden"), E.kSUM,
                                    suffix="new sum"), A.kTANH, suffix="new")
    return elementwise(ctx, n, elementwise(ctx, z, elementwise(ctx, h, n, E.kSUB, suffix="h - n"), E.kPROD,
                                           suffix="z * (h - n)"), E.kSUM)


@converter(
    "aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)",
    validator=_cell_ok,
)
def lstm_cell(ctx: ConversionContext, args: ConverterArgs) -> list[SSAValue]:
    """i, f, o = sigmoid; g = tanh; c' = f * c + i * g; h' = o * tanh(c')."""
    h, c = (ctx.tensor(v) for v in args.tensors("hx"))
    gi, gh = _gates(ctx, args.tensor("input"), h, args)
    gates = elementwise(ctx, gi, gh, E.kSUM, suffix="gates")
    i, f, g, o = _chunk(ctx, gates, 4, "gate")
    i = activation(ctx, i, A.kSIGMOID, suffix="input gate")
    f = activation(ctx, f, A.kSIGMOID, suffix="forget gate")
    g = activation(ctx, g, A.kTANH, suffix="cell gate")
    o = activation(ctx, o, A.kSIGMOID, suffix="output gate")
    c_next = elementwise(ctx, elementwise(ctx, f, c, E.kPROD, suffix="keep"), elementwise(ctx, i, g, E.kPROD,
                                                                                           suffix="write"),
                         E.kSUM, suffix="cell")
    h_next = elementwise(ctx, o, activation(ctx, c_next, A.kTANH, suffix="cell tanh"), E.kPROD, suffix="hidden")
    return [h_next, c_next]


# -- fake quantization -----------------------------------------------------------------------------------


def fake_quantize(ctx: ConversionContext, x: SSAValue, scale: SSAValue | float, zero_point: SSAValue | float,
                  quant_min: int, quant_max: int) -> SSAValue:
    """(clamp(round(x / scale) + zp, qmin, qmax) - zp) * scale, round half to even as torch does."""
    x = ctx.tensor(x)
    dtype = ctx.dtype(x)
    q = unary(ctx, elementwise(ctx, x, scale, E.kDIV, dtype=dtype, suffix="x / scale"), U.kROUND, "round")
    q = elementwise(ctx, q, zero_point, E.kSUM, dtype=dtype, suffix="+ zero point")
    q = elementwise(ctx, elementwise(ctx, q, float(quant_min), E.kMAX, suffix="clamp min"), float(quant_max), E.kMIN,
                    suffix="clamp max")
    return elementwise(ctx, elementwise(ctx, q, zero_point, E.kSUB, dtype=dtype, suffix="- zero point"), scale,
                       E.kPROD, dtype=dtype)


def _fq_ok(args: ConverterArgs) -> str | None:
    return None if args.dtype("self") in FLOAT_DTYPES else "fake quantization of a non-float tensor"


@converter(
    "aten::fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, int quant_max) -> Tensor",
    "aten::fake_quantize_per_tensor_affine.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, int quant_min, int quant_max) -> Tensor",
    validator=_fq_ok,
)
def fake_quantize_per_tensor(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    scale = args.tensor_or_scalar("scale")
    zero_point = args.tensor_or_scalar("zero_point")
    if isinstance(scale, SSAValue):
        scale = cast(ctx, reshape(ctx, scale, [1] * ctx.rank(x), "scale shape"), ctx.dtype(x), "scale cast")
    if isinstance(zero_point, SSAValue):
        zero_point = cast(ctx, reshape(ctx, zero_point, [1] * ctx.rank(x), "zero point shape"), ctx.dtype(x),
                          "zero point cast")
    return fake_quantize(ctx, x, scale, zero_point, args.get_int("quant_min"), args.get_int("quant_max"))  # pyright: ignore


@converter(
    "aten::fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, int quant_min, int quant_max) -> Tensor",
    validator=_fq_ok,
)
def fake_quantize_per_channel(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    rank = ctx.rank(x)
    axis = args.get_int("axis") % rank
    shape = [ctx.shape(x)[axis] if d == axis else 1 for d in range(rank)]
    scale = cast(ctx, reshape(ctx, args.tensor("scale"), shape, "scale shape"), ctx.dtype(x), "scale cast")
    zero_point = cast(ctx, reshape(ctx, args.tensor("zero_point"), shape, "zero point shape"), ctx.dtype(x),
                      "zero point cast")
    return fake_quantize(ctx, x, scale, zero_point, args.get_int("quant_min"), args.get_int("quant_max"))
