"""The table of hand-written programs: ``@builds("aten::op")`` registers a function returning one."""

from __future__ import annotations

from collections.abc import Callable

import torch

from tests.support.e2e_suite.program import Program

Builder = Callable[[], Program]

HANDWRITTEN: dict[str, Builder] = {}


def builds(op: str) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        assert op not in HANDWRITTEN, f"two programs for {op}"
        HANDWRITTEN[op] = fn
        return fn

    return register


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def randint(low: int, high: int, *shape: int, seed: int = 0, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
