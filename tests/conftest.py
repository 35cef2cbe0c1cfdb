"""Shared pytest configuration: tests import helpers as ``tests.support.*``.

Without a GPU, ``torch.manual_seed`` seeds the CPU generator only.  torch's own queues a lazy
CUDA seeding with a formatted stack trace on every call when CUDA was never initialized
(``torch.cuda._lazy_call``, torch 2.13): 0.36 ms a call and a list that grows without bound,
and OpInfo's sample iterators call it once per sample.  The suite seeds ~10,000 times while it
collects (``pytest --collect-only``: 45 s -> 21 s on 2 vCPUs, and each xdist worker collects).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _seed_cpu_generator(seed: int) -> torch.Generator:
    return torch.default_generator.manual_seed(int(seed))


if not torch.cuda.is_available():
    torch.manual_seed = _seed_cpu_generator  # type: ignore[assignment]
    torch.random.manual_seed = _seed_cpu_generator  # type: ignore[assignment]
