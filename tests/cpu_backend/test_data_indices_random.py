"""Seeded random shapes for the scatters and ``index_put``: ranks 1-3, any dim, an index longer
than the output along it, index tensors of broadcast shapes, negative indices that wrap,
duplicates.  Values must equal eager's (integers, bit-exact; plain assignment only where
one source writes), and a single bad index anywhere must raise an ``InputError``."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu, host_isas
from tests.support.opinfo import OpModule
from ziggurat.ir.errors import InputError

KINDS = ("scatter", "scatter_add", "sum", "prod", "amax", "amin")


def _written_once(shape: list[int], write: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Where at most one source writes (a plain assignment's colliding writes are unspecified)."""
    return write(torch.zeros(shape, dtype=torch.long)) <= 1


def _check(compiled: object, fn: Callable[..., torch.Tensor], args: tuple[torch.Tensor, ...],
           once: torch.Tensor | None) -> None:
    actual, expected = compiled(*args), fn(*args)  # type: ignore[operator]
    if once is None:
        assert torch.equal(actual, expected), (actual, expected)
    else:
        assert torch.equal(actual[once], expected[once]), (actual, expected)


def _seeded(seed: int, size: int) -> tuple[random.Random, torch.Generator, list[int]]:
    """The random streams of a seed and an output shape of rank 1-3, sizes 1 to ``size``."""
    rng = random.Random(seed)
    return rng, torch.Generator().manual_seed(seed), [rng.randint(1, size) for _ in range(rng.randint(1, 3))]


@pytest.mark.parametrize("seed", range(12))
def test_random_scatter(seed: int) -> None:
    rng, g, xs = _seeded(seed, 6)
    rank = len(xs)
    dim = rng.randrange(rank)
    ish = [rng.randint(1, xs[d]) if d != dim else rng.randint(1, 7) for d in range(rank)]
    src = torch.randint(-9, 9, [max(s, rng.randint(1, 7)) for s in ish], generator=g)
    x = torch.randint(-9, 9, xs, generator=g)
    kind = KINDS[seed % len(KINDS)]
    include_self = rng.random() < 0.5
    if kind == "scatter":
        def fn(a: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
            return a.scatter(dim, i, src)
    elif kind == "scatter_add":
        def fn(a: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
            return a.scatter_add(dim, i, src)
    else:
        def fn(a: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
            return a.scatter_reduce(dim, i, src, kind, include_self=include_self)
    isa = rng.choice(host_isas())
    compiled = compile_cpu(OpModule(fn), (x, torch.zeros(ish, dtype=torch.long)), isa=isa,
                           frontend=rng.choice(["torchscript", "export"]))
    assert not compiled.report.fallback_ops, compiled.report.format()
    for _ in range(3):
        index = torch.randint(0, xs[dim], ish, generator=g)
        once = _written_once(xs, lambda z: z.scatter_add(dim, index, torch.ones_like(index))) \
            if kind == "scatter" else None
        _check(compiled, fn, (x, index), once)
        bad = index.clone()
        bad.view(-1)[rng.randrange(bad.numel())] = rng.choice([-1, xs[dim], 100, -100])
        with pytest.raises(InputError, match="scatter"):
            compiled(x, bad)


@pytest.mark.parametrize("seed", range(12))
def test_random_index_put(seed: int) -> None:
    rng, g, xs = _seeded(seed, 5)
    k = rng.randint(1, len(xs))
    bshape = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    shapes = [[s if rng.random() < 0.6 else 1 for s in bshape][rng.randint(0, len(bshape)):] for _ in range(k)]
    vshape = list(torch.broadcast_shapes(*[tuple(s) for s in shapes])) + xs[k:]
    values = torch.randint(-9, 9, vshape[rng.randint(0, len(vshape)):], generator=g)
    x = torch.randint(-9, 9, xs, generator=g)
    accumulate = seed % 2 == 0

    def indices() -> list[torch.Tensor]:
        return [torch.randint(-xs[d], xs[d], s, generator=g) for d, s in enumerate(shapes)]

    def fn(a: torch.Tensor, *index: torch.Tensor) -> torch.Tensor:
        return a.index_put(index, values, accumulate=accumulate)

    compiled = compile_cpu(OpModule(fn), (x, *indices()), isa=rng.choice(host_isas()),
                           frontend=rng.choice(["torchscript", "export"]))
    assert not compiled.report.fallback_ops, compiled.report.format()
    for _ in range(3):
        index = indices()
        once = None if accumulate else _written_once(
            xs, lambda z, ii=index: z.index_put(tuple(ii), torch.ones((), dtype=torch.long), accumulate=True))
        _check(compiled, fn, (x, *index), once)
        d = rng.randrange(k)
        if index[d].numel():
            index[d].view(-1)[0] = rng.choice([xs[d], -xs[d] - 1, 50])
            with pytest.raises(InputError, match="index_put"):
                compiled(x, *index)
