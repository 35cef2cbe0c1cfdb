"""Converters whose parameters are infinite or NaN, on inputs holding NaN, +-inf and signed
zeros, against eager on the reference executor (fuzz program trtref_prelu_inf).

* prelu was ``max(x, 0) + weight * min(x, 0)``: an infinite weight made every positive input
  NaN (``inf * 0``); it is eager's ``x > 0 ? x : weight * x``.
* leaky_relu (and the fused post-op): kLEAKY_RELU is ``x >= 0 ? x : slope * x``, eager
  ``x > 0 ? x : x * slope``; they differ at 0 for an infinite, NaN or negative slope.
* elu with an infinite alpha: ``alpha * (exp(x) - 1)`` is NaN where exp(x) - 1 rounds to 0.
* softplus compared ``x > threshold / beta``, which flips for a negative beta: eager compares
  ``x * beta > threshold``.
* instance/group norm (INormalizationLayer: ``(x - mean) * rstd * w + b``, no longer used for
  them) and batch norm with run-time statistics against eager's ``x * a + (b - mean * a)``,
  ``a = rstd * w``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import Converted, convert_and_run

INF, NAN = float("inf"), float("nan")
X = torch.tensor([[NAN, INF, -INF, 0.0, -0.0, 1.5, -2.0, 30.0, -30.0, 1e-8, -1e-8, 0.5, -0.25]])


def _check(fn: Callable[..., Any], inputs: list[torch.Tensor]) -> Converted:
    converted = convert_and_run(fn, inputs)
    assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
    for got, expected in zip(converted.outputs, converted.expected, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)
        zeros = (got == 0) & (expected == 0)
        assert torch.equal(got[zeros].signbit(), expected[zeros].signbit()), "a zero of the wrong sign"
    return converted


ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    **{f"prelu_{w}": (lambda t, w=w: F.prelu(t, torch.tensor([w]))) for w in (INF, -INF, NAN, 0.0, 0.25)},
    **{f"leaky_relu_{s}": (lambda t, s=s: F.leaky_relu(t, s)) for s in (INF, -INF, NAN, -0.5, 0.01)},
    **{f"elu_{a}": (lambda t, a=a: F.elu(t, a)) for a in (INF, -INF, NAN, -1.0, 1.0)},
    **{f"softplus_{b}_{th}": (lambda t, b=b, th=th: F.softplus(t, b, th))
       for b, th in ((1.0, 20.0), (-1.0, 20.0), (INF, 20.0), (-INF, 20.0), (-2.0, -1.0), (0.5, INF), (1.0, NAN))},
}


@pytest.mark.parametrize("case", sorted(ACTIVATIONS))
def test_activation_special_parameters(case: str) -> None:
    fn = ACTIVATIONS[case]
    _check(lambda t: fn(t * 1.0) * 1.0, [X])


def test_prelu_per_channel_infinite_weights() -> None:
    x = torch.tensor([[[NAN, INF, -INF], [0.0, -0.0, 1.5], [-2.0, 3.0, -30.0]]])
    _check(lambda t: F.prelu(t * 1.0, torch.tensor([INF, -INF, NAN])) * 1.0, [x])


@pytest.mark.parametrize("slope", [INF, -0.5])
def test_fused_leaky_relu_post_op(slope: float) -> None:
    w = torch.tensor([[1.0, 0.0], [0.0, -1.0], [1.0, 1.0]])
    x = torch.tensor([[0.0, 1.0], [2.0, -3.0], [NAN, 0.5], [INF, 1.0], [-5.0, 0.0]])
    converted = convert_and_run(lambda t: F.leaky_relu(F.linear(t, w), slope), [x], pre_passes="graph-opt")
    assert "fused.linear" in str(converted.module)
    for got, expected in zip(converted.outputs, converted.expected, strict=True):
        torch.testing.assert_close(got, expected, equal_nan=True)


C = 5
WEIGHT = torch.tensor([INF, -INF, NAN, 0.0, 2.0])
BIAS = torch.tensor([0.0, INF, 1.0, NAN, -1.0])


def _norm_input(spatial: int = 7) -> torch.Tensor:
    """A constant instance, an instance of zeros, an infinity and a NaN; no mean near 0."""
    x = torch.randn(2, C, spatial, generator=torch.Generator().manual_seed(0)) + 0.25
    x[0, 1] = 0.5
    x[0, 3] = 0.0
    x[1, 2, 0] = INF
    x[1, 4, spatial - 1] = NAN
    return x


NORMS: dict[str, Callable[..., torch.Tensor]] = {
    "instance_norm": lambda x: F.instance_norm(x, weight=WEIGHT, bias=BIAS),
    "instance_norm_weight": lambda x: F.instance_norm(x, weight=WEIGHT),
    "group_norm_per_channel": lambda x: F.group_norm(x, C, WEIGHT, BIAS),
    "group_norm_one_group": lambda x: F.group_norm(x, 1, WEIGHT),
    "group_norm_4d": lambda x: F.group_norm(x.reshape(2, C, 7, 1), C, None, BIAS),
    "layer_norm": lambda x: F.layer_norm(x.transpose(1, 2), (C,), WEIGHT, BIAS),
}


@pytest.mark.parametrize("case", sorted(NORMS))
def test_norm_special_parameters(case: str) -> None:
    converted = _check(NORMS[case], [_norm_input()])
    if case != "layer_norm":  # eager's scale-shift form, not INormalizationLayer
        assert "trt.normalization" not in str(converted.module)


def test_norm_parameters_as_inputs() -> None:
    mean, var = torch.tensor([0.5, 0.0, INF, 1.0, -1.0]), torch.tensor([1.0, 0.0, 2.0, INF, -1e-5])
    _check(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [_norm_input(), WEIGHT, BIAS])
    _check(lambda x, w, b: F.group_norm(x, C, w, b), [_norm_input(), WEIGHT, BIAS])
    _check(lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b), [_norm_input(), WEIGHT, BIAS, mean, var])
    _check(lambda x, m, v: F.batch_norm(x, m, v, WEIGHT, BIAS), [_norm_input(), mean, var])


def test_finite_norms_are_eagers_formula_too() -> None:
    """Finite constant parameters build the same reduce/elementwise form (no INormalizationLayer,
    whose statistics' overflow is not eager's: test_norm_overflow.py)."""
    w, b = torch.tensor([0.5, 1.0, 2.0, 0.0, -1.0]), torch.tensor([0.0, 1.0, -1.0, 2.0, 0.5])
    for fn in (lambda x: F.instance_norm(x, weight=w, bias=b), lambda x: F.group_norm(x, C, w, b)):
        converted = _check(fn, [_norm_input()])
        assert "trt.normalization" not in str(converted.module)
        assert "trt.reduce kSUM" in str(converted.module)
