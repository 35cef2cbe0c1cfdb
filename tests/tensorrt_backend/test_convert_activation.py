"""Activation converters through the reference executor vs eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts

X = torch.linspace(-8.0, 8.0, 60).reshape(3, 4, 5)

CASES = {
    "relu": lambda x: F.relu(x),
    "relu_": lambda x: torch.relu_(x * 1.0),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, 0.5),
    "selu": F.selu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "hardtanh": lambda x: F.hardtanh(x, -2.0, 3.0),
    "hardtanh_inverted": lambda x: torch.ops.aten.hardtanh(x, 2.0, -1.0),
    "relu6": F.relu6,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "silu": F.silu,
    "mish": F.mish,
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=5.0),
    "threshold": lambda x: F.threshold(x, 1.0, -3.0),
    "threshold_zero": lambda x: F.threshold(x, 0.5, 0.0),
    "clamp": lambda x: torch.clamp(x, -1.0, 2.0),
    "clamp_min_only": lambda x: torch.clamp(x, min=-1.0),
    "clamp_max_only": lambda x: torch.clamp(x, max=1.5),
    "clamp_min": lambda x: torch.clamp_min(x, 0.5),
    "clamp_max": lambda x: torch.clamp_max(x, 0.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_activation(name: str) -> None:
    check_converts(CASES[name], [X.clone()])


def test_prelu_per_channel_and_shared() -> None:
    x = torch.randn(2, 3, 4, 4)
    check_converts(torch.nn.PReLU(3).eval(), [x])
    check_converts(torch.nn.PReLU().eval(), [x])


def test_clamp_tensor_bounds() -> None:
    x = torch.randn(2, 5)
    low = torch.full((1, 5), -0.5)
    high = torch.full((2, 1), 0.5)
    check_converts(lambda a, lo, hi: torch.clamp(a, lo, hi), [x, low, high])


def test_hardtanh_becomes_one_clip_layer() -> None:
    from ziggurat.dialects.trt import ActivationOp, ActivationType

    result = check_converts(lambda x: F.hardtanh(x, -0.25, 0.75), [X.clone()])
    layers = [op for op in result.module.walk() if isinstance(op, ActivationOp)]
    assert len(layers) == 1
    clip = layers[0]
    assert clip.type.data == ActivationType.kCLIP
    assert clip.alpha.value.data == -0.25 and clip.beta.value.data == 0.75
    assert clip.layer.startswith("aten::hardtanh @ ") and "test_convert_activation.py" in clip.layer


#: tiny, denormal, signed-zero, huge and non-finite inputs: the elu family's negative branch
#: needs expm1's relative precision (exp(x) - 1 keeps none for tiny |x|) and eager's branches
ELU_X = torch.tensor([-1e-3, -3e-5, -1e-7, -1e-30, -1e-45, -0.0, 0.0, 1e-7, -0.5, -20.0, -88.0, -104.0, -200.0,
                      float("-inf"), float("inf"), float("nan"), 3.0, 1e30])

ELU_CASES = {
    "elu": lambda x: F.elu(x),
    "elu_alpha": lambda x: F.elu(x, 0.3),
    "elu_scaled": lambda x: torch.ops.aten.elu(x, 1.5, 2.0, 0.5),
    "elu_alpha_inf": lambda x: F.elu(x, float("inf")),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, 0.7),
}


@pytest.mark.parametrize("name", sorted(ELU_CASES))
def test_elu_family_keeps_expm1_precision_and_signs(name: str) -> None:
    """Relative precision near 0 (selu(-1e-3) was 6e-5 off through kSELU's exp(x) - 1), the
    sign of -0 and NaN/inf exactly as eager."""
    fn = ELU_CASES[name]
    out = check_converts(fn, [ELU_X.clone()], rtol=4e-7, atol=0.0).outputs[0]
    expected = fn(ELU_X.clone())
    same_sign = torch.signbit(out) == torch.signbit(expected)
    assert bool((same_sign | expected.isnan()).all()), (out, expected)
