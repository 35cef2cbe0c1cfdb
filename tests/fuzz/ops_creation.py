"""Tensors made inside the graph (ranges, fills, windows, ``*_like``), each combined with
a value of the graph so that the result depends on the inputs."""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit
from tests.fuzz.registry import spec


@spec("arange", family="creation")
def _arange(b: Builder) -> Emit:
    x = b.pick_number(1)
    n = x.shape[-1]
    form = b.rng.randrange(4)
    if form == 0:
        made = f"torch.arange({n})"
    elif form == 1:
        start = b.rng.randint(-5, 5)
        made = f"torch.arange({start}, {start + n})"
    elif form == 2:
        step = b.choice([2, 3, -1])
        start = 0 if step > 0 else n - 1
        made = f"torch.arange({start}, {start + step * n}, {step})"
    else:
        made = f"torch.arange({n}, dtype=torch.float32) * 0.5"
    return f"{x} + {made}" if b.chance(0.7) else f"{x} * {made}"


@spec("linspace", weight=0.6, family="creation")
def _linspace(b: Builder) -> Emit:
    x = b.pick_float(1)
    n = x.shape[-1]
    return f"{x} + torch.linspace({b.choice([-1.0, 0.0])}, {b.choice([1.0, 2.5])}, {n})"


@spec("full_like", family="creation")
def _full_like(b: Builder) -> Emit:
    x = b.pick((torch.float32, torch.int64, torch.int32, torch.bool))
    form = b.rng.randrange(9)
    v = 1 if not x.is_float else 2.5
    calls = [f"torch.zeros_like({x})", f"torch.ones_like({x})", f"torch.full_like({x}, {v})",
             f"{x}.new_zeros({tuple(x.shape)!r})", f"{x}.new_ones({tuple(x.shape)!r})",
             f"{x}.new_full({tuple(x.shape)!r}, {v})", f"torch.empty_like({x}).fill_({v})",
             f"{x}.new_empty({tuple(x.shape)!r}).fill_({v})", f"torch.zeros({tuple(x.shape)!r}, dtype={x.dtype})"]
    made = calls[form]
    if x.is_bool:
        return f"torch.logical_xor({x}, {made})"
    return f"{x} - {made}"


@spec("fill", weight=0.6, family="creation")
def _fill(b: Builder) -> Emit:
    x = b.pick((torch.float32, torch.int64, torch.int32))
    return b.choice([f"torch.fill({x}, 3)", f"{x}.clone().zero_() + {x}", f"{x}.clone().fill_({x}.reshape(-1)[0])",
                     f"torch.full({tuple(x.shape)!r}, 2, dtype={x.dtype}) * {x}"])


@spec("eye", weight=0.5, family="creation")
def _eye(b: Builder) -> Emit:
    x = b.pick_float(2, 2)
    n, m = x.shape
    return f"{x} + torch.eye({n}, {m})" if b.chance(0.5) or n != m else f"{x} * torch.eye({n})"


@spec("scalar_tensor", weight=0.5, family="creation")
def _scalar_tensor(b: Builder) -> Emit:
    x = b.pick_number()
    made = b.choice(["torch.scalar_tensor(1.5)", "torch.tensor(2.0)", "torch.tensor(3)", "torch.tensor([1, -2])[0]"])
    return f"{x} * {made}"


@spec("window", weight=0.4, family="creation")
def _window(b: Builder) -> Emit:
    x = b.pick_float(1)
    return f"{x} * torch.hann_window({x.shape[-1]}, periodic={b.chance(0.5)})"


@spec("tri_indices", weight=0.4, family="creation")
def _tri_indices(b: Builder) -> Emit:
    x = b.pick_number(2, 2)
    fn = b.choice(["tril_indices", "triu_indices"])
    n, m = x.shape
    return f"{x}[tuple(torch.{fn}({n}, {m}, {b.rng.randint(-1, 1)}))]"


@spec("size_arith", weight=0.5, family="creation")
def _size_arith(b: Builder) -> Emit:
    x = b.pick_number(1)
    form = b.rng.randrange(3)
    if form == 0:
        return f"{x} * {x}.size({b.dim(x.rank)})"
    if form == 1:
        return f"{x} / {x}.numel()"
    return f"{x} + {x}.dim()"
