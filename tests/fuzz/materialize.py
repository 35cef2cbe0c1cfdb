"""Tensors of a fuzz program: graph inputs and constant buffers, from a seed.

Everything here depends on torch only: ``repro.py`` copies these functions verbatim into
every standalone repro (``inspect.getsource``), so a repro rebuilds bit-identical inputs.

A *domain* says which values an input holds; a *layout* says how they sit in memory
(the values never depend on the layout, only the strides and the storage offset do).
"""

from __future__ import annotations

import torch

#: float domains: standard normal, a grid of quarters in [-4, 4] (exact sums/products,
#: ties), strictly positive, and normal values with a few specials (0, -0, +-inf, nan); and, drawn
#: only where a spec asks, ``subnormal`` and ``infinite``: positive values, an eighth of them bf16
#: subnormals or +inf
FLOAT_DOMAINS = ("normal", "grid", "positive", "special", "wide")
#: int domains: small signed, small non-negative, shift amounts
INT_DOMAINS = ("small", "nonneg", "shift")
LAYOUTS = ("contiguous", "transposed", "channels_last", "offset", "strided")


def make_values(shape: list[int], dtype: torch.dtype, domain: str, seed: int) -> torch.Tensor:
    """Contiguous values of ``shape``/``dtype`` drawn from ``domain`` with a private generator."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    if dtype.is_floating_point:
        # drawn in float32 whatever the default dtype: the float64 reference run builds its
        # buffers here under default dtype float64, and randn/rand draw other numbers in
        # float64 (another stream), which made it a run of another program
        if domain == "grid":
            return (torch.randint(-16, 17, shape, generator=g) / 4.0).to(dtype)
        if domain == "positive":
            return (torch.rand(shape, generator=g, dtype=torch.float32) * 2.0 + 0.25).to(dtype)
        if domain == "wide":  # magnitudes 2^-140 .. 2^127, subnormal to huge, both signs
            exponent = torch.randint(-140, 128, shape, generator=g).to(torch.float64)
            mantissa = 1.0 + torch.rand(shape, generator=g, dtype=torch.float64)
            sign = torch.randint(0, 2, shape, generator=g).to(torch.float64) * 2 - 1
            return (sign * mantissa * torch.exp2(exponent)).to(torch.float32).to(dtype)
        x = torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)
        if domain in ("subnormal", "infinite") and x.numel() > 0:
            # positive values, an eighth of them bf16 subnormals (2^-133 .. 2^-127) or +inf: a
            # product's sum is +inf wherever one of its terms is, and NaN only where 0 * inf is
            x = (torch.rand(shape, generator=g, dtype=torch.float32) * 2.0 + 0.25).to(dtype)
            flat = x.view(-1)
            picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 8),), generator=g)
            if domain == "subnormal":
                flat[picks] = torch.exp2(torch.randint(-133, -126, picks.shape, generator=g).to(torch.float32)).to(dtype)
            else:
                flat[picks] = float("inf")
            return x
        if domain == "special" and x.numel() > 0:
            specials = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan")], dtype=dtype)
            flat = x.view(-1)
            picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 8),), generator=g)
            flat[picks] = specials[torch.randint(0, 5, picks.shape, generator=g)]
        return x
    if domain.startswith("index:"):  # valid indices into a dim of that size, negative ones too
        n = int(domain.split(":")[1])
        return torch.randint(-n, n, shape, generator=g).to(dtype)
    if domain.startswith("range:"):  # valid non-negative indices (gather, scatter, one_hot)
        n = int(domain.split(":")[1])
        return torch.randint(0, n, shape, generator=g).to(dtype)
    if domain == "int8":  # a quantized weight's values
        return torch.randint(-127, 128, shape, generator=g).to(dtype)
    if domain == "nonneg":
        return torch.randint(0, 10, shape, generator=g).to(dtype)
    if domain == "shift":
        return torch.randint(0, 8, shape, generator=g).to(dtype)
    return torch.randint(-9, 10, shape, generator=g).to(dtype)


def with_layout(values: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values in another memory layout (strides / storage offset)."""
    shape = list(values.shape)
    if layout == "transposed" and len(shape) >= 2:
        base = torch.empty(shape[:-2] + [shape[-1], shape[-2]], dtype=values.dtype)
        out = base.transpose(-1, -2)
    elif layout == "channels_last" and len(shape) in (4, 5):
        fmt = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
        out = torch.empty(shape, dtype=values.dtype).contiguous(memory_format=fmt)
    elif layout == "offset":
        storage = torch.zeros(values.numel() + 7, dtype=values.dtype)
        out = storage[7:].view(shape) if shape else storage[7:8].view(())
    elif layout == "strided" and len(shape) >= 1:
        base = torch.zeros(shape[:-1] + [2 * shape[-1]], dtype=values.dtype)
        out = base[..., ::2]
    else:
        return values.clone()
    out.copy_(values)
    return out


def make_input(shape: list[int], dtype: torch.dtype, domain: str, layout: str, seed: int) -> torch.Tensor:
    return with_layout(make_values(shape, dtype, domain, seed), layout)


def from_literal(values: list, shape: list[int], dtype: torch.dtype, layout: str, seed: int) -> torch.Tensor:
    """Given values (seed 0), or, as call-time inputs, the same values moved (seed != 0):
    floats scaled by factors in [0.5, 1.5], integers and booleans permuted."""
    t = torch.tensor(values, dtype=dtype).reshape(shape)
    if seed:
        g = torch.Generator().manual_seed(seed)
        if dtype.is_floating_point:
            t = t * (0.5 + torch.rand(t.shape, generator=g, dtype=torch.float32)).to(dtype)
        elif t.numel() > 1:
            t = t.reshape(-1)[torch.randperm(t.numel(), generator=g)].reshape(shape)
    return with_layout(t, layout)


def make_const(shape: list[int], dtype: torch.dtype, domain: str, seed: int) -> torch.Tensor:
    return make_values(shape, dtype, domain, seed)
