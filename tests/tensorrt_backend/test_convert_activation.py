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
