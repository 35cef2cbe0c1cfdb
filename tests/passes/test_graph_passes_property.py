"""Property test: random chains of conv/linear + post-ops + adds with random shapes.
The graph pipeline never changes numerics beyond 1e-5 relative and never crashes."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ziggurat.ir.importer import import_torchscript
from ziggurat.ir.interpreter import run
from ziggurat.ir.pipeline import run_pipeline
from ziggurat.backends.passes import parse_pipeline

UNARY = {
    "relu": torch.relu, "relu6": F.relu6, "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu, "sigmoid": torch.sigmoid,
    "tanh": torch.tanh, "hardtanh": lambda x: F.hardtanh(x, -0.5, 0.7), "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid, "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "clamp": lambda x: torch.clamp(x, min=-0.3), "none": lambda x: x,
}


class Chain(torch.nn.Module):
    def __init__(self, steps: list[tuple[str, str, str, int]], channels: int, conv: bool) -> None:
        super().__init__()
        self.steps = steps
        self.layers = torch.nn.ModuleList()
        self.norms = torch.nn.ModuleList()
        for _, _, _, k in steps:
            if conv:
                self.layers.append(torch.nn.Conv2d(channels, channels, k, padding=k // 2))
                bn = torch.nn.BatchNorm2d(channels)
                bn.running_mean.uniform_(-0.5, 0.5)  # pyright: ignore
                bn.running_var.uniform_(0.5, 2.0)  # pyright: ignore
                self.norms.append(bn)
            else:
                self.layers.append(torch.nn.Linear(channels, channels))
                self.norms.append(torch.nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for (unary, binary, norm, _), layer, bn in zip(self.steps, self.layers, self.norms):
            y = layer(x)
            if norm == "bn":
                y = bn(y)
            if binary == "add":
                y = y + x
            elif binary == "sub":
                y = y - 0.5 * x
            x = UNARY[unary](y)
        return x


step = st.tuples(st.sampled_from(sorted(UNARY)), st.sampled_from(["add", "sub", "none"]),
                 st.sampled_from(["bn", "none"]), st.sampled_from([1, 3]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=4), channels=st.integers(1, 9),
       conv=st.booleans(), batch=st.integers(1, 3), size=st.integers(1, 7),
       isa=st.sampled_from(["avx512", "avx2"]), prepack=st.booleans())
def test_random_chains_keep_numerics(steps, channels, conv, batch, size, isa, prepack) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    model = Chain(steps, channels, conv).eval()
    x = torch.randn(batch, channels, size, size) if conv else torch.randn(batch, size, channels)
    with torch.no_grad():
        expected = model(x)
    module = import_torchscript(model, (x,))
    before = run(module, [x])[0]
    run_pipeline(module, parse_pipeline(f"graph-opt,prepack-weights{{isa={isa}}}" if prepack else "graph-opt"))
    after = run(module, [x])[0]
    scale = expected.abs().max().clamp_min(1e-6)
    assert float((after - before).abs().max() / scale) <= 1e-5
    assert float((after - expected).abs().max() / scale) <= 1e-5
