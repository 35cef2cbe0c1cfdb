"""Views and shape ops: reshapes, permutes, slices with steps and negative bounds,
expands, flips, rolls, splits, concatenations, ``as_strided`` after views."""

from __future__ import annotations

import math

import torch

from tests.fuzz.builder import Builder, Emit, Reject, Value
from tests.fuzz.registry import spec

ALL = (torch.float32, torch.int64, torch.int32, torch.bool)


def _factor(b: Builder, n: int, rank: int) -> list[int]:
    """A random shape of ``rank`` dims whose product is ``n``."""
    dims = [1] * rank
    if rank == 0:
        if n != 1:
            raise Reject("cannot view as a scalar")
        return dims
    rest = n
    p = 2
    primes: list[int] = []
    while rest > 1:
        while rest % p == 0:
            primes.append(p)
            rest //= p
        p += 1
    for f in primes:
        dims[b.rng.randrange(rank)] *= f
    return dims


def _any(b: Builder, min_rank: int = 0, max_rank: int = 5) -> Value:
    return b.pick(ALL, min_rank=min_rank, max_rank=max_rank)


@spec("view", weight=1.5)
def _view(b: Builder) -> Emit:
    x = _any(b)
    shape = _factor(b, x.numel, b.rng.randint(0 if x.numel == 1 else 1, 5))
    if shape and b.chance(0.3):
        shape[b.rng.randrange(len(shape))] = -1
    method = b.choice(["reshape", "view", "reshape"])
    if method == "view":  # a view of a non-contiguous tensor may be impossible: eager decides
        return f"{x}.view({', '.join(map(str, shape))})" if shape else f"{x}.view(())"
    return f"torch.reshape({x}, {tuple(shape)!r})"


@spec("flatten")
def _flatten(b: Builder) -> Emit:
    x = _any(b)
    if x.rank < 2 or b.chance(0.3):
        return f"torch.flatten({x})"
    start = b.rng.randrange(x.rank - 1)
    end = b.rng.randrange(start, x.rank)
    return f"torch.flatten({x}, {start}, {end - x.rank if b.chance(0.4) else end})"


@spec("unflatten")
def _unflatten(b: Builder) -> Emit:
    x = _any(b, 1)
    d = b.dim(x.rank)
    sizes = _factor(b, x.shape[d], b.rng.randint(1, 3))
    return f"torch.unflatten({x}, {d}, {tuple(sizes)!r})"


@spec("ravel", weight=0.5)
def _ravel(b: Builder) -> Emit:
    return f"torch.ravel({_any(b)})"


@spec("squeeze")
def _squeeze(b: Builder) -> Emit:
    x = _any(b)
    ones = [i for i, s in enumerate(x.shape) if s == 1]
    form = b.rng.randrange(3)
    if form == 0 or not ones:
        return f"torch.squeeze({x})"
    if form == 1:
        return f"{x}.squeeze({b.choice(ones)})"
    return f"torch.squeeze({x}, {tuple(b.rng.sample(ones, b.rng.randint(1, len(ones))))!r})"


@spec("unsqueeze")
def _unsqueeze(b: Builder) -> Emit:
    x = _any(b, 0, 4)
    d = b.rng.randint(-x.rank - 1, x.rank)
    return f"torch.unsqueeze({x}, {d})" if b.chance(0.5) else f"{x}[..., None]" if b.chance(0.5) else f"{x}[None]"


@spec("permute", weight=1.5)
def _permute(b: Builder) -> Emit:
    x = _any(b, 2)
    perm = b.rng.sample(range(x.rank), x.rank)
    return f"{x}.permute({', '.join(map(str, perm))})" if b.chance(0.5) else f"torch.permute({x}, {tuple(perm)!r})"


@spec("transpose")
def _transpose(b: Builder) -> Emit:
    x = _any(b, 2)
    d0, d1 = b.dim(x.rank), b.dim(x.rank)
    return b.choice([f"torch.transpose({x}, {d0}, {d1})", f"{x}.swapaxes({d0}, {d1})", f"torch.swapdims({x}, {d0}, {d1})"])


@spec("t", weight=0.5)
def _t(b: Builder) -> Emit:
    x = _any(b, 1, 2)
    return b.choice([f"torch.t({x})", f"{x}.t()", f"{x}.T"])


@spec("movedim")
def _movedim(b: Builder) -> Emit:
    x = _any(b, 2)
    if b.chance(0.5):
        return f"torch.movedim({x}, {b.dim(x.rank)}, {b.dim(x.rank)})"
    k = b.rng.randint(1, x.rank)
    src, dst = b.rng.sample(range(x.rank), k), b.rng.sample(range(x.rank), k)
    return f"torch.movedim({x}, {tuple(src)!r}, {tuple(dst)!r})"


@spec("expand", weight=1.2)
def _expand(b: Builder) -> Emit:
    x = _any(b, 0, 4)
    target = [b.size(2, 7) if s == 1 and b.chance(0.7) else s for s in x.shape]
    lead = [b.size(1, 5) for _ in range(b.rng.randint(0, 1))]
    full = lead + target
    if math.prod(full) > b.max_numel:
        raise Reject("too large")
    form = b.rng.randrange(3)
    if form == 0:
        spelled = [-1 if i >= len(lead) and b.chance(0.3) else s for i, s in enumerate(full)]
        return f"{x}.expand({', '.join(map(str, spelled))})" if spelled else f"{x}.expand(())"
    if form == 1:
        return f"torch.broadcast_to({x}, {tuple(full)!r})"
    return f"{x}.expand_as(torch.zeros({tuple(full)!r}))"


@spec("broadcast_tensors", weight=0.5)
def _broadcast_tensors(b: Builder) -> list[Value]:
    x = _any(b, 1)
    y = b.partner(x)
    return b.emit_multi("broadcast_tensors", f"torch.broadcast_tensors({y}, {x})")


@spec("repeat")
def _repeat(b: Builder) -> Emit:
    x = _any(b, 0, 4)
    reps = [b.choice([1, 1, 2, 3]) for _ in range(x.rank + b.rng.randint(0, 1))] or [2]
    fn = b.choice(["repeat", "tile"])
    if fn == "tile" and b.chance(0.5):
        reps = reps[-max(1, len(reps) - 1):]  # tile pads a shorter list with ones
    return f"{x}.{fn}({tuple(reps)!r})" if fn == "repeat" else f"torch.tile({x}, {tuple(reps)!r})"


@spec("repeat_interleave", weight=0.7)
def _repeat_interleave(b: Builder) -> Emit:
    x = _any(b, 1)
    r = b.choice([1, 2, 3])
    return f"torch.repeat_interleave({x}, {r}, dim={b.dim(x.rank)})" if b.chance(0.7) else f"{x}.repeat_interleave({r})"


@spec("flip")
def _flip(b: Builder) -> Emit:
    x = _any(b, 1)
    form = b.rng.randrange(4)
    if form == 1 and x.rank >= 2:
        return f"torch.fliplr({x})"
    if form == 2:
        return f"torch.flipud({x})"
    return f"torch.flip({x}, {tuple(b.dims_subset(x.rank))!r})"


@spec("roll")
def _roll(b: Builder) -> Emit:
    x = _any(b, 1)
    if b.chance(0.25):
        return f"torch.roll({x}, {b.rng.randint(-7, 7)})"
    dims = b.dims_subset(x.rank)
    shifts = [b.rng.randint(-9, 9) for _ in dims]
    return f"torch.roll({x}, {tuple(shifts)!r}, {tuple(dims)!r})"


@spec("diagonal")
def _diagonal(b: Builder) -> Emit:
    x = _any(b, 2)
    d1, d2 = b.rng.sample(range(x.rank), 2)
    off = b.rng.randint(-2, 2)
    return f"torch.diagonal({x}, {off}, {d1}, {d2})" if b.chance(0.7) else f"{x}.diagonal()"


@spec("narrow")
def _narrow(b: Builder) -> Emit:
    x = _any(b, 1)
    d = b.dim(x.rank)
    size = x.shape[d]
    start = b.rng.randrange(size)
    length = b.rng.randint(1, size - start)
    if b.chance(0.2):
        start -= size  # a negative start counts from the end
    return f"torch.narrow({x}, {d}, {start}, {length})"


@spec("select")
def _select(b: Builder) -> Emit:
    x = _any(b, 1)
    d = b.dim(x.rank)
    i = b.rng.randrange(-x.shape[d], x.shape[d])
    return f"torch.select({x}, {d}, {i})" if b.chance(0.5) else f"{x}.select({d}, {i})"


def slice_text(b: Builder, x: Value) -> str:
    """Subscript text of a random basic slice of ``x``: steps, negative bounds, ints, Ellipsis, None."""
    parts: list[str] = []
    for size in x.shape:
        r = b.rng.random()
        if r < 0.35:
            parts.append(":")
        elif r < 0.5:
            parts.append(str(b.rng.randrange(-size, size)))
        else:
            start = b.rng.randint(-size - 1, size)
            stop = b.rng.randint(-size - 1, size + 1)
            step = b.choice([1, 1, 2, 3])
            parts.append(f"{start if b.chance(0.7) else ''}:{stop if b.chance(0.6) else ''}"
                         + (f":{step}" if step != 1 else ""))
    while parts and parts[-1] == ":" and b.chance(0.5):
        parts.pop()
    if parts and b.chance(0.15):
        parts.insert(b.rng.randrange(len(parts) + 1), "None")
    if len(parts) > 1 and b.chance(0.15):
        parts = ["..."] + parts[b.rng.randint(1, len(parts) - 1):]
    return ", ".join(parts) or ":"


@spec("slice", weight=2.0)
def _slice(b: Builder) -> Emit:
    x = _any(b, 1)
    return f"{x}[{slice_text(b, x)}]"


@spec("unfold", weight=0.7)
def _unfold(b: Builder) -> Emit:
    x = _any(b, 1, 4)
    d = b.dim(x.rank)
    size = b.rng.randint(1, x.shape[d])
    return f"{x}.unfold({d}, {size}, {b.rng.randint(1, 3)})"


@spec("split", weight=1.2)
def _split(b: Builder) -> list[Value]:
    x = _any(b, 1)
    d = b.dim(x.rank)
    n = x.shape[d]
    form = b.rng.randrange(6)
    if form == 0:
        code = f"torch.split({x}, {b.rng.randint(1, n)}, dim={d})"
    elif form == 1:
        cut = sorted(b.rng.sample(range(1, n), min(n - 1, b.rng.randint(0, 2)))) if n > 1 else []
        sizes = [e - s for s, e in zip([0] + cut, cut + [n])]
        code = f"torch.split({x}, {sizes!r}, dim={d})"
    elif form == 2:
        code = f"torch.chunk({x}, {b.rng.randint(1, 4)}, dim={d})"
    elif form == 3:
        code = f"torch.tensor_split({x}, {b.rng.randint(1, 4)}, dim={d})"
    elif form == 4:
        idx = sorted(b.rng.sample(range(-n, n + 2), min(n, 2)))
        code = f"torch.tensor_split({x}, {idx!r}, dim={d})"
    else:
        code = f"torch.unbind({x}, {d})"
    return b.emit_multi("split", code)


def _same_shaped(b: Builder, x: Value, count: int, except_dim: int | None = None) -> list[Value]:
    out = [x]
    for _ in range(count - 1):
        shape = list(x.shape)
        if except_dim is not None and shape:
            shape[except_dim] = b.size(1, 7)
        fits = [v for v in b.candidates([x.dtype]) if v.shape == shape and v not in out]
        out.append(b.choice(fits) if fits and b.chance(0.5) else b.new_tensor(shape, x.dtype))
    b.rng.shuffle(out)
    return out


@spec("cat", weight=1.5)
def _cat(b: Builder) -> Emit:
    x = _any(b, 1)
    d = b.dim(x.rank)
    parts = _same_shaped(b, x, b.rng.randint(1, 3), d)
    fn = b.choice(["torch.cat", "torch.cat", "torch.concat", "torch.concatenate"])
    names = ", ".join(p.name for p in parts)
    return f"{fn}([{names}], {'axis' if fn == 'torch.concatenate' else 'dim'}={d})"


@spec("cat_narrowed", weight=0.5)
def _cat_narrowed(b: Builder) -> Emit:
    """``torch.cat`` along the last dim of two narrowing casts (to bf16 or float16) of rows
    16k + 1 wide, read back as their bits (``view(torch.int16)``: a 16-bit result is stored, and
    compared exactly).  Each row's last vector stores one lane, and the next element is the
    next row's first, written before it.  LLVM 22 stored such a lane of a truncated vector
    (bf16's rounding) as the element before its truncation, 4 bytes for 2, over that value
    (``llvm_ir.masked_store``), where the value is provably not NaN: an integer's cast, or
    ``nan_to_num``'s."""
    width = 16 * b.rng.randint(0, 3) + 1
    x = b.pick((torch.float32, torch.int32), pred=lambda v: v.rank >= 1 and v.shape[-1] == width,
               shape=lambda: [b.rng.randint(2, 9), width], new=0.6)
    pieces = [f"({x} * 3)", f"{x}"] if not x.is_float else [f"torch.nan_to_num({x} * 3, nan=0.0)",
                                                            f"torch.nan_to_num({x}, nan=0.0)"]
    half = b.choice(["torch.bfloat16", "torch.float16"])
    return f"torch.cat([{pieces[0]}.to({half}), {pieces[1]}.to({half})], -1).view(torch.int16).int()"


@spec("stack")
def _stack(b: Builder) -> Emit:
    x = _any(b, 0, 4)
    parts = _same_shaped(b, x, b.rng.randint(1, 3))
    names = ", ".join(p.name for p in parts)
    fn = b.choice(["stack", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"])
    if fn == "stack":
        return f"torch.stack([{names}], dim={b.rng.randint(-x.rank - 1, x.rank)})"
    return f"torch.{fn}([{names}])"


@spec("atleast", weight=0.3)
def _atleast(b: Builder) -> Emit:
    return f"torch.{b.choice(['atleast_1d', 'atleast_2d'])}({_any(b, 0, 2)})"


@spec("view_as", weight=0.5)
def _view_as(b: Builder) -> Emit:
    x = _any(b)
    others = [v for v in b.pool if v.numel == x.numel and v is not x]
    y = b.choice(others) if others else b.new_const(_factor(b, x.numel, b.rng.randint(1, 3)), torch.float32)
    return f"{x}.reshape_as({y})" if b.chance(0.5) else f"{x}.contiguous().view_as({y})"


@spec("contiguous_clone", weight=0.5)
def _contiguous(b: Builder) -> Emit:
    x = _any(b)
    return b.choice([f"{x}.contiguous()", f"{x}.clone()", f"torch.clone({x})", f"{x}.detach()",
                     f"torch.ops.aten.alias({x})", f"{x}.clone(memory_format=torch.contiguous_format)"])


@spec("pixel_shuffle", weight=0.7)
def _pixel_shuffle(b: Builder) -> Emit:
    r = b.choice([2, 3])
    if b.chance(0.5):
        x = b.pick(ALL, pred=lambda v: v.rank >= 3 and v.shape[-3] % (r * r) == 0,
                   shape=lambda: [b.size(1, 3), r * r * b.size(1, 3), b.size(1, 5), b.size(1, 5)])
        return f"F.pixel_shuffle({x}, {r})"
    x = b.pick(ALL, pred=lambda v: v.rank >= 3 and v.shape[-1] % r == 0 and v.shape[-2] % r == 0,
               shape=lambda: [b.size(1, 3), b.size(1, 3), r * b.size(1, 3), r * b.size(1, 3)])
    return f"F.pixel_unshuffle({x}, {r})"


@spec("channel_shuffle", weight=0.5)
def _channel_shuffle(b: Builder) -> Emit:
    g = b.choice([2, 3])
    x = b.pick(ALL, pred=lambda v: v.rank >= 3 and v.shape[1] % g == 0,
               shape=lambda: [b.size(1, 3), g * b.size(1, 3), b.size(1, 5), b.size(1, 5)])
    return f"F.channel_shuffle({x}, {g})"


@spec("as_strided", weight=1.2)
def _as_strided(b: Builder) -> Emit:
    """as_strided over a view of a tensor whose storage is well defined (a contiguous copy)."""
    x = _any(b, 1)
    base = f"{x}.clone(memory_format=torch.contiguous_format)"
    views = ["", ".t()" if x.rank == 2 else "", f".transpose(0, {x.rank - 1})",
             f".narrow(0, {x.shape[0] // 2}, {max(1, x.shape[0] - x.shape[0] // 2)})",
             f".select(0, {x.shape[0] - 1})" if x.rank > 1 else "", "[1::2]" if x.shape[0] > 1 else "",
             ".unsqueeze(0).expand(2, *[-1] * " + str(x.rank) + ")", ".flatten()[1:]" if x.numel > 1 else ""]
    view = b.choice(views)
    n = x.numel
    size = [b.rng.randint(1, 4) for _ in range(b.rng.randint(1, 3))]
    strides = [b.rng.randint(0, 3) for _ in size]
    span = sum((s - 1) * st for s, st in zip(size, strides))
    if span >= n:
        raise Reject("as_strided would leave the storage")
    offset = b.rng.randint(0, n - 1 - span)
    off_text = f", {offset}" if b.chance(0.5) else ""
    return f"{base}{view}.as_strided({tuple(size)!r}, {tuple(strides)!r}{off_text})"


@spec("meshgrid", weight=0.4)
def _meshgrid(b: Builder) -> list[Value]:
    xs = [b.pick_number(1, 1) for _ in range(b.rng.randint(1, 3))]
    names = ", ".join(x.name for x in xs)
    if len({x.dtype for x in xs}) > 1:
        raise Reject("meshgrid needs one dtype")
    indexing = b.choice(["ij", "xy"])
    return b.emit_multi("meshgrid", f"torch.meshgrid({names}, indexing={indexing!r})")


@spec("tril_triu")
def _tril(b: Builder) -> Emit:
    x = _any(b, 2)
    fn = b.choice(["tril", "triu"])
    k = b.rng.randint(-2, 2)
    return f"torch.{fn}({x}, {k})" if b.chance(0.7) else f"{x}.clone().{fn}_({k})"


@spec("diag")
def _diag(b: Builder) -> Emit:
    x = _any(b, 1, 2)
    k = b.rng.randint(-2, 2)
    if b.chance(0.3):
        return f"torch.diag_embed({x}, {k})"
    return f"torch.diag({x}, {k})"


@spec("unsafe_view", weight=0.3)
def _unsafe_view(b: Builder) -> Emit:
    x = _any(b)
    shape = _factor(b, x.numel, b.rng.randint(1, 3))
    return f"torch.ops.aten._unsafe_view({x}.contiguous(), {shape!r})"
