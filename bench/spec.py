"""`ModelSpec`: one zoo entry (name, constructor, example inputs, tolerance) and seeding helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import nn

# Tags that select which runs a zoo entry belongs to.
TAG_ZOO = "zoo"  # the default full benchmark run
TAG_SMOKE = "smoke"  # the fast CI path (`--smoke`)


@dataclass(frozen=True)
class ModelSpec:
    """One benchmark model.

    `build` returns the model in eval mode with fixed (seeded) weights; `example_inputs`
    returns fixed (seeded) inputs. Both are deterministic: calling them twice gives
    bit-identical weights and inputs. `tolerance` is the largest acceptable max relative
    error (max |a - b| / max |b|) of a compiled backend against eager in fp32.
    """

    name: str
    description: str
    build: Callable[[], nn.Module]
    example_inputs: Callable[[], tuple[torch.Tensor, ...]]
    tolerance: float
    tags: frozenset[str] = field(default_factory=lambda: frozenset({TAG_ZOO}))


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the body with torch's CPU RNG seeded, restoring the caller's RNG state afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def randomize_norm_affine(model: nn.Module, spread: float = 0.2) -> None:
    """Give every BatchNorm/LayerNorm a non-trivial affine (weight near 1, bias near 0).

    Default init (weight 1, bias 0) would let a compiler that drops the affine pass a test.
    """
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)) and m.weight is not None:
                m.weight.uniform_(1.0 - spread, 1.0 + spread)
                assert m.bias is not None
                m.bias.normal_(0.0, spread / 2)


def calibrate_batchnorm(model: nn.Module, calibration_input: torch.Tensor) -> None:
    """Set BatchNorm running statistics from one train-mode pass over `calibration_input`.

    This gives realistic, non-trivial running mean/var (not the 0/1 defaults) while keeping
    activations well scaled through deep residual stacks. The model is left in eval mode.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    momenta = [bn.momentum for bn in bns]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average: one batch -> exactly that batch's statistics
    model.train()
    with torch.no_grad():
        model(calibration_input)
    for bn, momentum in zip(bns, momenta):
        bn.momentum = momentum
    model.eval()


def init_transformer_weights(model: nn.Module, std: float = 0.02) -> None:
    """BERT/GPT-2 style init: N(0, std) weights, small random biases, non-trivial LayerNorm."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                m.weight.normal_(0.0, std)
                if m.bias is not None:
                    m.bias.normal_(0.0, std)
            elif isinstance(m, nn.Embedding):
                m.weight.normal_(0.0, std)
    randomize_norm_affine(model, spread=0.2)
