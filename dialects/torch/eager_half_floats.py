"""Which aten ops' eager bf16 and float16 kernels compute in float32 and round their result once
-- facts about eager's CPU kernels, checked bit for bit against them (see each group's note),
which the CPU backend's ``widen-half-floats`` and the TensorRT converters both rely on: a
16-bit op off these lists rounds inside in eager, and runs in torch."""

from __future__ import annotations

import torch

from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.op_registry import op_key

#: Ops whose eager bf16 and float16 kernels compute in float32 and round once.
WIDENED = frozenset({
    "aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::multiply.Tensor", "aten::div.Tensor", "aten::neg",
    "aten::relu", "aten::gelu", "aten::silu", "aten::sigmoid", "aten::tanh", "aten::exp",
    "aten::hardtanh", "aten::hardswish", "aten::hardsigmoid", "aten::leaky_relu", "aten::clamp",
    "aten::clamp.Tensor", "aten::clamp_min", "aten::clamp_max", "aten::clamp_min.Tensor", "aten::clamp_max.Tensor",
    "aten::clip", "aten::clip.Tensor",
    "aten::softmax.int", "aten::_softmax", "aten::layer_norm",
    # reductions and pools: eager accumulates a bf16 sum in float32 and rounds the result once
    # (a max or min is exact either way)
    "aten::sum", "aten::sum.dim_IntList", "aten::mean", "aten::mean.dim", "aten::amax", "aten::amin",
    "aten::max_pool2d", "aten::adaptive_avg_pool2d", "aten::avg_pool2d",
    # ... and so do var/std (float32 moments), the vector norm and cumsum (a float32 running
    # sum, each output rounded; checked bit for bit against eager's bf16 kernels).  Not prod,
    # cumprod or softmax over another dim: eager's bf16 results there are not float32's
    # rounded once (log_softmax and logsumexp round inside too: ``WidenLogSoftmax`` and
    # ``WidenLogsumexp`` write eager's roundings out).
    "aten::var", "aten::var.dim", "aten::var.correction", "aten::std", "aten::std.dim", "aten::std.correction",
    "aten::linalg_vector_norm", "aten::cumsum",
    # exact in float32 then rounded once: eager's result too (sqrt's double rounding is
    # innocuous: float32 has more than twice the bits plus two of bf16 and float16)
    "aten::abs", "aten::relu6", "aten::ceil", "aten::floor", "aten::trunc", "aten::sign", "aten::sqrt",
    "aten::rsub.Tensor", "aten::addcmul", "aten::reciprocal", "aten::square", "aten::maximum", "aten::minimum",
    # float32 element functions rounded once, as eager's (bit for bit over 2^16 values of each
    # type on every ISA; not erf, whose eager result is not, nor mish, 12 of them an ulp off)
    "aten::log", "aten::exp2", "aten::elu", "aten::softplus", "aten::log_sigmoid",
    # checked the same way on both types and every ISA (tests/cpu_backend/test_widen_half_floats.py,
    # and test_widen_half_floats_exhaustive.py, -m slow): bit for bit, but for sin, tan, acos,
    # atan and asinh in float16 (2-4 values of 65,536 an ulp off, where float32's result sits a
    # float32 ulp from a float16 rounding boundary; tan in bf16: 2), as sigmoid, silu and
    # softplus in float16 already were (7, 2 and 1), and logsigmoid (2 and 19: zeros of the
    # other sign past x = 102.875).  hardshrink compares with its lambd rounded to the 16-bit
    # type (``WidenHardshrink``).  Not logit, softshrink (eager's scalar loop, which takes
    # strided operands and a vector's tail, rounds inside: 1,168 of 65,536 bf16 values off in
    # tails), nan_to_num (eager writes the 16-bit type's largest value: ``WidenNanToNum``
    # writes those defaults out), rsqrt (eager's scalar loop, which takes strided operands and a vector's tail, rounds the square root to
    # the 16-bit type first: 9,033 bf16 values an ulp off its vector loop's)
    "aten::log2", "aten::log10", "aten::log1p", "aten::expm1", "aten::cosh", "aten::sinh",
    "aten::asin", "aten::atanh", "aten::erfc", "aten::round", "aten::frac", "aten::deg2rad", "aten::rad2deg",
    "aten::selu", "aten::celu", "aten::threshold", "aten::sgn", "aten::sin", "aten::cos", "aten::tan",
    "aten::acos", "aten::atan", "aten::asinh", "aten::acosh",
    # binary, checked on 2^19 random pairs of each type (half of them random bit patterns):
    # bit for bit but for logaddexp and atan2 in float16 (1 and 45 pairs an ulp off).  Not xlogy,
    # logit and trunc division (eager rounds inside: written out with its roundings,
    # ``widen_half_float_intermediates.py``), lerp by a tensor, remainder, fmod and floor
    # division (eager's scalar and vector loops round differently).  fmax and fmin select (torch
    # 2.13's bf16 ones ignore a NaN operand, as float32's do)
    "aten::logaddexp", "aten::pow.Tensor_Tensor", "aten::lerp.Scalar", "aten::addcdiv", "aten::copysign.Tensor",
    "aten::heaviside", "aten::hypot", "aten::atan2", "aten::prelu", "aten::fmax", "aten::fmin",
    # selections: exact in float32
    "aten::max", "aten::min", "aten::max_pool1d",
    # norms, pools, resizes and sums checked on OpInfo samples and a 2x6x37x53 image, bit for
    # bit (group_norm and rms_norm in float16: 4 and 1 values of 23,532 an ulp off, float32 sums
    # in another order; tests/cpu_backend/test_half_float_opinfo.py); not the linear, bilinear
    # and bicubic resizes (eager's bf16 bilinear with align_corners differs on half the
    # values) nor the element-wise losses (eager rounds inside: up to 11 ulp apart)
    "aten::group_norm", "aten::rms_norm", "aten::upsample_nearest1d.vec", "aten::upsample_nearest2d.vec",
    "aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::avg_pool1d", "aten::adaptive_avg_pool1d",
    "aten::nansum", "aten::trace",
    # the bilinear 2-d resize without align_corners: eager's float32 resize rounded once, which
    # is eager's 16-bit result bit for bit on most sizes; on others (37x53 -> 50x100) eager's
    # rounds inside, up to two ulp off, where this is within half an ulp of the float64 resize
    # (tests/cpu_backend/test_half_float_scalars_casts.py).  Not with align_corners, nor the
    # linear 1-d, bicubic and trilinear resizes: eager's 16-bit weights differ on most sizes
    "aten::upsample_bilinear2d.vec", "aten::upsample_bilinear2d",
})
#: Ops of ``WIDENED`` widened only without ``align_corners``.
ALIGNED_DIFFERENTLY = frozenset({"aten::upsample_bilinear2d.vec", "aten::upsample_bilinear2d"})
#: Ops of ``WIDENED`` widened only over the last dim: eager's 16-bit softmax over another dim
#: rounds inside (a 16-bit ulp from float32's rounded once on 545 of 6,208 bf16 values).
LAST_DIM_ONLY = frozenset({"aten::softmax.int", "aten::_softmax"})
#: ``where`` and ``masked_fill`` on 16-bit floats only select elements: eager copies their bits
#: (a NaN keeps its payload, where a round trip through float32 would change it), and so does
#: the native lowering (``lowering/driver.py``'s ``HALF_FLOAT_MOVES``); they are not widened.
#: Binary ops that promote a 16-bit operand to a float32 result (``f32 + bf16``): eager converts
#: that operand (exactly) and computes in float32, so only the operand is widened.
MIXED = frozenset({"aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::div.Tensor",
                   "aten::where.self", "aten::rsub.Tensor"})
#: Ops with a 16-bit value and int64 indices (exact in float32: they select an element; not
#: ``topk``, whose tie order differs between eager's 16-bit and float32 kernels).
INDEXED = frozenset({"aten::max_pool2d_with_indices", "aten::max.dim", "aten::min.dim", "aten::max_pool1d_with_indices",
                     "aten::adaptive_max_pool2d", "aten::adaptive_max_pool1d"})
#: Comparisons: 16-bit operands, a bool result (exact in float32).
COMPARISONS = frozenset({f"aten::{name}.{overload}" for name in ("eq", "ne", "lt", "le", "gt", "ge")
                         for overload in ("Tensor", "Scalar")})
#: Predicates: a 16-bit operand, a bool result (exact in float32).
PREDICATES = frozenset({"aten::isnan", "aten::isinf", "aten::isfinite", "aten::signbit", "aten::logical_not",
                        "aten::logical_and", "aten::logical_or", "aten::logical_xor", "aten::any", "aten::any.dim",
                        "aten::any.dims", "aten::all", "aten::all.dim", "aten::all.dims"})
#: 16-bit operands, an index or count result (exact in float32: they compare, or test for 0).
INDEX_RESULT = frozenset({"aten::argmax", "aten::argmin", "aten::count_nonzero", "aten::count_nonzero.dim_IntList"})


def every_bit_pattern(dtype: torch.dtype) -> torch.Tensor:
    """The 65,536 values of a 16-bit type in the order of their bits (index = the bits): what
    a table of eager's 16-bit answers is made from, and what exhaustive tests feed."""
    return torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(dtype)


def onednn_has_kernels_for(dtype: torch.dtype) -> bool:
    """Whether torch sends eager's ``dtype`` GELU to oneDNN on this host, as it sends a
    contiguous float32 one: bf16 where oneDNN has bf16 kernels (AVX512-BF16), float16 where it
    has float16 ones (AVX512-FP16: the Intel hosts, not Zen 4 or 5).  Elsewhere torch's own
    vector loop computes it, whose float32 erf differs from oneDNN's by a few float32 ulps: 402
    of the 65,536 float16 GELUs round an ulp apart on Zen 4.  The other functions of
    ``codegen/lookup.py``'s tables give the same bits either way (checked on Zen 4)."""
    if dtype == torch.bfloat16:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    if dtype == torch.float16:
        return bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())
    return True


#: Lanes a row of :func:`on_eager_16_bit_path`'s rows holds: a multiple of every vector width.
ROW = 256


def on_eager_16_bit_path(wide: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``wide`` (float32, a multiple of :data:`ROW` elements) laid out so that eager's float32
    activation of it takes the path eager's ``dtype`` activation takes: as it is where torch
    sends that type to oneDNN as it sends float32 (:func:`onednn_has_kernels_for`), else as
    rows of :data:`ROW` lanes two rows apart, a tensor torch never sends to oneDNN (it is not
    contiguous) and whose rows its vector loop runs whole.  Flatten the activation's result
    for ``wide``'s order.  (Not a switch of torch's global oneDNN flag: other threads' eager
    ops keep their path.)"""
    if wide.numel() % ROW:
        raise ValueError(f"on_eager_16_bit_path: {wide.numel()} values, not rows of {ROW}")
    if onednn_has_kernels_for(dtype):
        return wide
    rows = torch.empty(2 * wide.numel() // ROW, ROW)[::2]
    rows.copy_(wide.reshape(-1, ROW))
    return rows


#: Every op of the lists: eager's 16-bit kernel computes it in float32 and rounds once, or
#: selects and compares exactly (but see :func:`rounds_inside_for`).
ROUND_ONCE = WIDENED | MIXED | INDEXED | COMPARISONS | PREDICATES | INDEX_RESULT


def rounds_inside_for(op: AtenOp) -> bool:
    """Whether eager's 16-bit kernel of ``op``, one of the lists, rounds inside for its
    arguments: a bilinear resize with ``align_corners``, a softmax over another dim than the last."""
    key = op_key(op)
    if key in ALIGNED_DIFFERENTLY:
        return op.static_value("align_corners") is not False
    if key in LAST_DIM_ONLY:
        rank = len(op.operands[0].type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        return rank > 0 and int(op.static_value("dim")) % rank != rank - 1
    return False
