"""Indexing: constant index tensors with negative entries, index inputs (checked at run
time), gathers, scatters (unique indices where torch leaves the order of writes open),
embeddings, one-hot, bucketize, and the scatter-style updates."""

from __future__ import annotations

import math

import torch

from tests.fuzz.builder import Builder, Emit, Reject, Value
from tests.fuzz.registry import spec

ALL = (torch.float32, torch.int64, torch.int32, torch.bool)
NUMS = (torch.float32, torch.int64, torch.int32)


def _index_tensor(b: Builder, n: int, shape: list[int], negative: bool = True) -> Value:
    """A constant (negative entries included) or an input of indices into a dim of size ``n``."""
    if b.chance(0.7):
        return b.index_const(n, shape, negative)
    domain = f"index:{n}" if negative else f"range:{n}"
    return b.new_input(shape, b.choice([torch.int64, torch.int64, torch.int32]), domain, "contiguous")


@spec("index", weight=2.0)
def _index(b: Builder) -> Emit:
    x = b.pick(ALL, min_rank=1)
    d = b.rng.randrange(x.rank)
    idx_shape = [b.size(1, 7) for _ in range(b.rng.randint(1, 2))]
    idx = _index_tensor(b, x.shape[d], idx_shape)
    prefix = ":, " * d
    if b.chance(0.25) and x.rank > d + 1:  # two index tensors, broadcast against each other
        idx2 = _index_tensor(b, x.shape[d + 1], [1] * (len(idx_shape) - 1) + [idx_shape[-1]])
        return f"{x}[{prefix}{idx}, {idx2}]"
    return f"{x}[{prefix}{idx}]"


@spec("index_select")
def _index_select(b: Builder) -> Emit:
    x = b.pick(ALL, min_rank=1)
    d = b.dim(x.rank)
    idx = _index_tensor(b, x.shape[d], [b.size(1, 7)], negative=False)
    return f"torch.index_select({x}, {d}, {idx})"


@spec("gather")
def _gather(b: Builder) -> Emit:
    x = b.pick(ALL, min_rank=1)
    d = b.dim(x.rank)
    shape = [b.rng.randint(1, s) for s in x.shape]
    shape[d] = b.size(1, 7)
    idx = _index_tensor(b, x.shape[d], shape, negative=False)
    if b.chance(0.3):
        return f"torch.take_along_dim({x}, {idx}, dim={d})"
    return f"torch.gather({x}, {d}, {idx})"


@spec("embedding")
def _embedding(b: Builder) -> Emit:
    n, dim = b.size(2, 17), b.size(1, 13)
    weight = b.new_const([n, dim], torch.float32) if b.chance(0.7) else b.pick_float(2, 2)
    n = weight.shape[0]
    ids = _index_tensor(b, n, [b.size(1, 7) for _ in range(b.rng.randint(1, 2))], negative=False)
    if b.chance(0.3):
        return f"F.embedding({ids}, {weight}, padding_idx={b.rng.randrange(n)})"
    return f"F.embedding({ids}, {weight})"


@spec("one_hot", weight=0.7)
def _one_hot(b: Builder) -> Emit:
    n = b.size(2, 11)
    ids = _index_tensor(b, n, [b.size(1, 7) for _ in range(b.rng.randint(1, 2))], negative=False)
    if ids.dtype != torch.int64:
        return f"F.one_hot({ids}.long(), {n})"
    return f"F.one_hot({ids}, {n})"


@spec("bucketize", weight=0.7)
def _bucketize(b: Builder) -> Emit:
    x = b.pick_number()
    k = b.rng.randint(1, 6)
    bounds = sorted(b.rng.sample([v / 4 for v in range(-12, 13)], k))
    if not x.is_float:
        bounds = sorted({int(v) for v in bounds})
    c = b.new_const([len(bounds)], x.dtype, "literal", literal=bounds)
    return f"torch.bucketize({x}, {c}, right={b.chance(0.5)}, out_int32={b.chance(0.3)})"


def _unique_index(b: Builder, n: int, shape: list[int], d: int) -> Value:
    """Indices into a dim of size ``n``, unique along ``d`` (so no two writes collide)."""
    d %= len(shape)
    if shape[d] > n:
        raise Reject("more writes than slots")
    cols = math.prod(shape) // shape[d]
    per_col = [b.rng.sample(range(n), shape[d]) for _ in range(cols)]
    t = torch.tensor(per_col, dtype=torch.int64).T.reshape([shape[d]] + [s for i, s in enumerate(shape) if i != d])
    t = t.movedim(0, d)
    return b.new_const(shape, torch.int64, "literal", literal=t.reshape(-1).tolist())


@spec("scatter", weight=1.5)
def _scatter(b: Builder) -> Emit:
    x = b.pick(NUMS, min_rank=1)
    d = b.dim(x.rank)
    shape = [b.rng.randint(1, s) for s in x.shape]
    form = b.rng.randrange(6)
    if form in (0, 1):  # plain scatter: unique indices
        idx = _unique_index(b, x.shape[d], shape, d)
        if form == 0:
            src = b.new_tensor(shape, x.dtype)
            return f"torch.scatter({x}, {d}, {idx}, {src})"
        return f"torch.scatter({x}, {d}, {idx}, {b.choice([0, 2, -1])})"
    idx = _index_tensor(b, x.shape[d], shape, negative=False)
    src = b.new_tensor(shape, x.dtype)
    if form == 2:
        return f"torch.scatter_add({x}, {d}, {idx}, {src})"
    if form == 3:
        return f"torch.scatter({x}, {d}, {idx}, {src}, reduce={b.choice(['add', 'multiply'])!r})"
    if form == 4:
        return f"torch.scatter({x}, {d}, {idx}, {b.choice([2.0, 0.5])}, reduce={b.choice(['add', 'multiply'])!r})"
    reduce = b.choice(["sum", "prod", "mean", "amax", "amin"])
    return f"torch.scatter_reduce({x}, {d}, {idx}, {src}, {reduce!r}, include_self={b.chance(0.6)})"


@spec("index_put", weight=1.5)
def _index_put(b: Builder) -> Emit:
    x = b.pick(ALL, min_rank=1)
    n = x.shape[0]
    accumulate = b.chance(0.4) and not x.is_bool
    k = b.size(1, 7)
    idx = b.index_const(n, [k], negative=True, unique=not accumulate) if k <= n or accumulate else None
    if idx is None:
        raise Reject("too many unique indices")
    vshape = [k] + x.shape[1:]
    vals = b.new_tensor(b.broadcast_shape(vshape) if b.chance(0.4) else vshape, x.dtype)
    return f"torch.index_put({x}, ({idx},), {vals}, accumulate={accumulate})"


@spec("slice_scatter")
def _slice_scatter(b: Builder) -> Emit:
    x = b.pick(ALL, min_rank=1)
    d = b.dim(x.rank)
    n = x.shape[d]
    start = b.rng.randrange(n)
    step = b.choice([1, 1, 2])
    length = len(range(start, n, step))
    end = n if b.chance(0.5) else start + (length - 1) * step + 1
    shape = list(x.shape)
    shape[d] = length
    src = b.new_tensor(shape, x.dtype)
    return f"torch.slice_scatter({x}, {src}, {d}, {start}, {end}, {step})"


@spec("select_scatter")
def _select_scatter(b: Builder) -> Emit:
    x = b.pick(ALL, min_rank=1)
    d = b.dim(x.rank)
    i = b.rng.randrange(-x.shape[d], x.shape[d])
    shape = [s for k, s in enumerate(x.shape) if k != d % x.rank]
    src = b.new_tensor(shape, x.dtype)
    return f"torch.select_scatter({x}, {src}, {d}, {i})"


@spec("diagonal_scatter")
def _diagonal_scatter(b: Builder) -> Emit:
    x = b.pick(NUMS, min_rank=2)
    off = b.rng.randint(-1, 1)
    src_shape = list(torch.diagonal(torch.empty(x.shape), off).shape)
    if 0 in src_shape:
        raise Reject("empty diagonal")
    return f"torch.diagonal_scatter({x}, {b.new_tensor(src_shape, x.dtype)}, {off})"
