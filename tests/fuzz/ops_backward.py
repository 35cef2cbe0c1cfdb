"""Backward ops a model may call directly (``torch.ops.aten.*_backward``): valid programs
whose lowerings are otherwise only reached by training graphs."""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit
from tests.fuzz.registry import spec


@spec("activation_backward", weight=1.5, family="backward")
def _activation_backward(b: Builder) -> Emit:
    x = b.pick_float()
    g = b.new_tensor(x.shape, torch.float32) if b.chance(0.7) else x
    form = b.rng.randrange(9)
    calls = [
        f"torch.ops.aten.tanh_backward({g}, torch.tanh({x}))",
        f"torch.ops.aten.sigmoid_backward({g}, torch.sigmoid({x}))",
        f"torch.ops.aten.gelu_backward({g}, {x}, approximate={b.choice(['none', 'tanh'])!r})",
        f"torch.ops.aten.threshold_backward({g}, {x}, {b.choice([0.0, 0.5])})",
        f"torch.ops.aten.hardtanh_backward({g}, {x}, -1.0, 1.0)",
        f"torch.ops.aten.leaky_relu_backward({g}, {x}, 0.1, False)",
        f"torch.ops.aten.elu_backward({g}, 1.0, 1.0, 1.0, False, {x})",
        f"torch.ops.aten.softplus_backward({g}, {x}, 1.0, 20.0)",
        f"torch.ops.aten.elu_backward({g}, 1.0, 1.0, 1.0, True, F.elu({x}))",
    ]
    return calls[form]


@spec("softmax_backward", weight=1.0, family="backward")
def _softmax_backward(b: Builder) -> Emit:
    x = b.pick_float(1)
    d = b.dim(x.rank)
    g = b.new_tensor(x.shape, torch.float32)
    if b.chance(0.5):
        return f"torch.ops.aten._softmax_backward_data({g}, torch.softmax({x}, {d}), {d}, torch.float32)"
    return f"torch.ops.aten._log_softmax_backward_data({g}, torch.log_softmax({x}, {d}), {d}, torch.float32)"
