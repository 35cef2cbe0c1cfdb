"""Traced programs for ops with no usable OpInfo sample: aten internals called through
``torch.ops.aten`` (``_softmax``, ``_to_copy``, backward ops), in-place ops on a clone,
factories, random ops, and quantized/complex ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from tests.support.e2e_suite.program import Program, Random
from tests.support.e2e_suite.registry import builds, randint, randn

aten: Any = torch.ops.aten


def _traced(op: str, fn: Callable[..., Any], *inputs: Any, **kwargs: Any) -> Program:
    return Program(op, fn, tuple(inputs), **kwargs)


def _simple(op: str, fn: Callable[..., Any], *inputs: Any, **kwargs: Any) -> None:
    """Register a program that needs no builder logic."""
    builds(op)(lambda: _traced(op, fn, *inputs, **kwargs))


# -- casts, views and copies --------------------------------------------------------------------
_simple("aten::_cast_Float", lambda x: torch._cast_Float(x), randint(-5, 5, 3, 4))  # pyright: ignore
_simple("aten::_cast_Long", lambda x: torch._cast_Long(x), randn(3, 4) * 4)  # pyright: ignore
_simple("aten::_to_copy", lambda x: aten._to_copy(x, dtype=torch.int32), randn(3, 4) * 4)
_simple("aten::type_as", lambda x, y: x.type_as(y), randn(3, 4) * 4, randint(0, 3, 2))
_simple("aten::_reshape_alias", lambda x: aten._reshape_alias(x, [4, 3], [3, 1]) * 2, randn(3, 4))
_simple("aten::_unsafe_view", lambda x: aten._unsafe_view(x * 2, [2, 6]), randn(3, 4))
_simple("aten::alias", lambda x: aten.alias(x) + 1, randn(3, 4))
_simple("aten::detach", lambda x: x.detach() * 3, randn(3, 4))
_simple("aten::lift_fresh_copy", lambda x: aten.lift_fresh_copy(x) - 1, randn(3, 4))

# -- in-place ops, on a clone of the input --------------------------------------------------------
_simple("aten::add_", lambda x, y: x.clone().add_(y, alpha=2), randn(3, 4), randn(3, 4, seed=1))
_simple("aten::clamp_min_", lambda x: x.clone().clamp_min_(0.25), randn(3, 4))
_simple("aten::copy_", lambda x, y: x.clone().copy_(y), randn(3, 4), randint(0, 9, 4))
_simple("aten::fill_", lambda x: x.clone().fill_(1.5), randn(3, 4))
_simple("aten::_index_put_impl_",
        lambda x, i, v: aten._index_put_impl_(x.clone(), (i,), v, True), randn(5, 3), torch.tensor([0, 3, 3]),
        randn(3, 3, seed=1))
_simple("aten::_unsafe_index_put", lambda x, i, v: aten._unsafe_index_put(x, [i], v, False), randn(5, 3),
        torch.tensor([4, 0]), randn(2, 3, seed=1))
_simple("aten::slice_scatter", lambda x, y: torch.slice_scatter(x, y, 1, 1, 4, 2), randn(3, 5), randn(3, 2, seed=1))

# -- factories ----------------------------------------------------------------------------------
_simple("aten::arange", lambda x: x + torch.arange(4, dtype=torch.float32), randn(3, 4))
_simple("aten::eye", lambda x: x + torch.eye(3, 4), randn(3, 4))
_simple("aten::full", lambda x: x * torch.full((3, 4), 2.5), randn(3, 4))
_simple("aten::ones", lambda x: x + torch.ones(3, 4), randn(3, 4))
_simple("aten::zeros", lambda x: torch.cat([x, torch.zeros(1, 4)]), randn(3, 4))
_simple("aten::scalar_tensor", lambda x: x + torch.scalar_tensor(3.5), randn(3, 4))
_simple("aten::hann_window", lambda x: x * torch.hann_window(4), randn(3, 4))
_simple("aten::linspace", lambda x: x + torch.linspace(-1.0, 2.0, 4), randn(3, 4))
_simple("aten::tril_indices", lambda x: torch.tril_indices(3, 4, 1) + x, randint(0, 5, 2, 1))
_simple("aten::triu_indices", lambda x: torch.triu_indices(4, 3, -1) * x, randint(0, 5, 2, 1))
_simple("aten::empty", lambda x: torch.empty(3, 4), randn(3, 4), random=Random())
_simple("aten::empty_strided", lambda x: torch.empty_strided((3, 4), (1, 3)), randn(3, 4), random=Random())

# -- random ops ---------------------------------------------------------------------------------
_simple("aten::rand", lambda x: torch.rand(3, 4), randn(3, 4), random=Random(0.0, 1.0))
_simple("aten::randn", lambda x: torch.randn(3, 4), randn(3, 4), random=Random())
_simple("aten::randint", lambda x: torch.randint(2, 7, (3, 4)), randn(3, 4), random=Random(2, 6))
_simple("aten::rand_like", lambda x: torch.rand_like(x), randn(3, 4), random=Random(0.0, 1.0))
_simple("aten::bernoulli_", lambda x: x.clone().bernoulli_(0.3), randn(3, 4), random=Random(0.0, 1.0))
_simple("aten::uniform", lambda x: aten.uniform(x, -2.0, 3.0), randn(3, 4), random=Random(-2.0, 3.0))
_simple("aten::exponential", lambda x: aten.exponential(x, 2.0), randn(3, 4), random=Random(0.0))
_simple("aten::normal_functional", lambda x: aten.normal_functional(x, 1.0, 0.5), randn(3, 4), random=Random())
_simple("aten::native_dropout", lambda x: aten.native_dropout(x, 0.5, True), randn(3, 4), random=Random())
_simple("aten::rrelu_with_noise_functional",
        lambda x, noise: aten.rrelu_with_noise_functional(x, noise, 0.1, 0.3, True), randn(3, 4), torch.zeros(3, 4),
        random=Random())

# -- softmax, norms, losses ---------------------------------------------------------------------
_simple("aten::_softmax", lambda x: aten._softmax(x, 1, False), randn(3, 4))
_simple("aten::_log_softmax", lambda x: aten._log_softmax(x, 0, False), randn(3, 4))
_simple("aten::_log_softmax_backward_data",
        lambda g, y: aten._log_softmax_backward_data(g, y, 1, torch.float32), randn(3, 4),
        torch.log_softmax(randn(3, 4, seed=1), 1))
_simple("aten::norm", lambda x: aten.norm(x, 3, [1], True), randn(3, 4))
_simple("aten::frobenius_norm", lambda x: aten.frobenius_norm(x, [0, 1]), randn(3, 4))
_simple("aten::nll_loss_forward", lambda x, t: aten.nll_loss_forward(x, t, None, 1, -100), torch.log_softmax(
    randn(4, 5), 1), torch.tensor([0, 4, 2, 1]))
_simple("aten::nll_loss_backward",
        lambda g, x, t, w: aten.nll_loss_backward(g, x, t, None, 1, -100, w), torch.tensor(1.5),
        torch.log_softmax(randn(4, 5), 1), torch.tensor([0, 4, 2, 1]), torch.tensor(4.0))
_simple("aten::_weight_norm_interface", lambda v, g: aten._weight_norm_interface(v, g, 0), randn(4, 3),
        randn(4, 1, seed=1).abs() + 0.5)
_simple("aten::_trilinear", lambda a, b, w: aten._trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3]), randn(3, 4),
        randn(3, 5, seed=1), randn(2, 4, 5, seed=2))

# -- activation backward ops ----------------------------------------------------------------------
_simple("aten::elu_backward", lambda g, x: aten.elu_backward(g, 1.0, 1.0, 1.0, False, x), randn(3, 4), randn(3, 4, seed=1))
_simple("aten::gelu_backward", lambda g, x: aten.gelu_backward(g, x, approximate="tanh"), randn(3, 4), randn(3, 4, seed=1))
_simple("aten::hardtanh_backward", lambda g, x: aten.hardtanh_backward(g, x, -0.5, 0.5), randn(3, 4), randn(3, 4, seed=1))
_simple("aten::leaky_relu_backward", lambda g, x: aten.leaky_relu_backward(g, x, 0.1, False), randn(3, 4),
        randn(3, 4, seed=1))
_simple("aten::sigmoid_backward", lambda g, y: aten.sigmoid_backward(g, y), randn(3, 4), torch.sigmoid(randn(3, 4, seed=1)))
_simple("aten::tanh_backward", lambda g, y: aten.tanh_backward(g, y), randn(3, 4), torch.tanh(randn(3, 4, seed=1)))
_simple("aten::softplus_backward", lambda g, x: aten.softplus_backward(g, x, 2.0, 3.0), randn(3, 4), randn(3, 4, seed=1))
_simple("aten::threshold_backward", lambda g, x: aten.threshold_backward(g, x, 0.1), randn(3, 4), randn(3, 4, seed=1))
_simple("aten::rrelu_with_noise_backward",
        lambda g, x, noise: aten.rrelu_with_noise_backward(g, x, noise, 0.1, 0.3, True, False), randn(3, 4),
        randn(3, 4, seed=1), torch.rand(3, 4, generator=torch.Generator().manual_seed(2)) * 0.2 + 0.1)

# -- convolution, pooling, padding, upsampling ------------------------------------------------------
_simple("aten::conv_tbc", lambda x, w, b: torch.conv_tbc(x, w, b, 1), randn(5, 2, 3), randn(3, 3, 4, seed=1),
        randn(4, seed=2))
_simple("aten::im2col", lambda x: F.unfold(x, (2, 3), padding=1, stride=2), randn(1, 2, 5, 5))
_simple("aten::max_pool1d_with_indices", lambda x: F.max_pool1d(x, 3, 2, return_indices=True), randn(1, 2, 9))
_simple("aten::max_pool2d_with_indices", lambda x: F.max_pool2d(x, 2, return_indices=True), randn(1, 2, 4, 6))
_simple("aten::max_pool3d_with_indices", lambda x: F.max_pool3d(x, 2, 1, 1, return_indices=True), randn(1, 2, 3, 4, 4))
for _n, _shape in ((1, (1, 2, 6)), (2, (1, 2, 4, 5)), (3, (1, 2, 3, 4, 4))):
    _simple(f"aten::reflection_pad{_n}d", lambda x, n=_n: getattr(aten, f"reflection_pad{n}d")(x, [2, 1] * n),
            randn(*_shape))
    _simple(f"aten::replication_pad{_n}d", lambda x, n=_n: getattr(aten, f"replication_pad{n}d")(x, [1, 2] * n),
            randn(*_shape))
_simple("aten::upsample_nearest2d", lambda x: F.interpolate(x, scale_factor=2.0, mode="nearest"), randn(1, 2, 3, 4))
_simple("aten::upsample_nearest3d", lambda x: F.interpolate(x, size=(3, 4, 6), mode="nearest"), randn(1, 2, 2, 2, 3))
_simple("aten::upsample_nearest2d_backward",
        lambda g: aten.upsample_nearest2d_backward(g, [6, 8], [1, 2, 3, 4], 2.0, 2.0), randn(1, 2, 6, 8))
_simple("aten::_upsample_nearest_exact2d", lambda x: F.interpolate(x, size=(5, 7), mode="nearest-exact"),
        randn(1, 2, 3, 4))
_simple("aten::_upsample_nearest_exact3d", lambda x: F.interpolate(x, size=(3, 5, 4), mode="nearest-exact"),
        randn(1, 2, 2, 3, 3))
_simple("aten::_upsample_bilinear2d_aa",
        lambda x: F.interpolate(x, size=(3, 2), mode="bilinear", antialias=True), randn(1, 2, 6, 5))
_simple("aten::_upsample_bicubic2d_aa",
        lambda x: F.interpolate(x, size=(3, 2), mode="bicubic", antialias=True), randn(1, 2, 6, 5))
_simple("aten::_upsample_lanczos2d_aa",
        lambda x: aten._upsample_lanczos2d_aa(x, [3, 2], False), randn(1, 2, 6, 5))

# -- embeddings and integer matmul ------------------------------------------------------------------
_simple("aten::_embedding_bag", lambda w, i, o: aten._embedding_bag(w, i, o, False, 1)[0], randn(6, 3),
        torch.tensor([0, 2, 5, 1, 1]), torch.tensor([0, 2]))
_simple("aten::_int_mm", lambda a, b: torch._int_mm(a, b), randint(-8, 8, 32, 16, dtype=torch.int8),  # pyright: ignore
        randint(-8, 8, 16, 8, seed=1, dtype=torch.int8))

# -- quantized and complex tensors ------------------------------------------------------------------
_simple("aten::quantize_per_tensor",
        lambda x: torch.quantize_per_tensor(x, 0.1, 3, torch.quint8).dequantize(), randn(3, 4))
_simple("aten::dequantize",
        lambda x: torch.quantize_per_tensor(x, 0.1, 3, torch.quint8).dequantize(), randn(3, 4))
_simple("aten::int_repr", lambda x: torch.quantize_per_tensor(x, 0.1, 3, torch.quint8).int_repr(), randn(3, 4))
_simple("aten::_make_per_tensor_quantized_tensor",
        lambda x: torch._make_per_tensor_quantized_tensor(x, 0.1, 2).dequantize(),  # pyright: ignore
        randint(0, 50, 3, 4, dtype=torch.uint8))
_simple("aten::_make_per_channel_quantized_tensor",
        lambda x, s, z: torch._make_per_channel_quantized_tensor(x, s, z, 1).dequantize(),  # pyright: ignore
        randint(0, 50, 3, 4, dtype=torch.uint8), torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64),
        torch.tensor([1, 2, 3, 4]))
_simple("aten::fake_quantize_per_tensor_affine",
        lambda x: torch.fake_quantize_per_tensor_affine(x, 0.1, 3, 0, 255), randn(3, 4))
_simple("aten::fake_quantize_per_tensor_affine_cachemask",
        lambda x: aten.fake_quantize_per_tensor_affine_cachemask(x, 0.1, 3, 0, 255), randn(3, 4))
_simple("aten::_scaled_mm",
        lambda a, b: torch._scaled_mm(a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t(),  # pyright: ignore
                                      torch.tensor(1.0), torch.tensor(1.0), out_dtype=torch.float32),
        randn(16, 32), randn(16, 32, seed=1))
_simple("aten::view_as_real", lambda x: torch.view_as_real(torch.view_as_complex(x) * 2), randn(3, 2))
_simple("aten::imag", lambda x: torch.view_as_complex(x).imag * 2, randn(3, 2))
