"""Seeded random float16 GEMMs and convolutions against eager: linears with a bias or none, an
activation and a residual; batched matmuls with broadcasting; convolutions with kernel sizes
1-7, strides, padding, dilation, groups (dense, grouped, depthwise) and channels-last images;
1-d, 3-d, ``padding="same"`` and transposed convolutions and ``addbmm``.
``widen-half-floats`` runs them on the float32 kernels with one rounding to float16; each result
must be as close to the float64 result as eager's own float16 result is (at most twice its
error, or one float16 ulp of the output's scale), and every op must run natively."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import torch
from torch import nn

import ziggurat

UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "none": lambda x: x, "relu": torch.relu, "gelu": nn.functional.gelu, "silu": nn.functional.silu,
    "tanh": torch.tanh,
}
ULP = 2.0 ** -10


class LinearCase(nn.Module):
    def __init__(self, linear: nn.Linear, unary: str, residual: bool) -> None:
        super().__init__()
        self.linear, self.unary, self.residual = linear, unary, residual

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        y = UNARY[self.unary](self.linear(x))
        return y + r if self.residual else y


class MatmulCase(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b) * 0.5


class ConvCase(nn.Module):
    def __init__(self, conv: nn.Conv2d, unary: str) -> None:
        super().__init__()
        self.conv, self.unary = conv, unary

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return UNARY[self.unary](self.conv(x)) + r


def _linear(rng: random.Random, seed: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    k, n = rng.choice((1, 7, 16, 33, 64, 130)), rng.choice((1, 5, 16, 31, 48, 100))
    lead = rng.choice(((3,), (2, 5), (17,), (1,)))
    torch.manual_seed(seed)
    model = LinearCase(nn.Linear(k, n, bias=rng.random() < 0.7), rng.choice(list(UNARY)), rng.random() < 0.5)
    return model.eval(), (torch.randn(*lead, k), torch.randn(*lead, n))


def _matmul(rng: random.Random, seed: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    m, k, n = rng.randint(1, 40), rng.randint(1, 70), rng.randint(1, 50)
    batch_a, batch_b = rng.choice((((), ()), ((3,), (3,)), ((2, 3), (3,)), ((4,), ()))) 
    torch.manual_seed(seed)
    return MatmulCase(), (torch.randn(*batch_a, m, k), torch.randn(*batch_b, k, n))


def _conv(rng: random.Random, seed: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    groups = rng.choice((1, 1, 2, 4, "depthwise"))
    cin = 8 * rng.choice((1, 2, 3)) if groups != "depthwise" else rng.choice((3, 8, 17))
    g = cin if groups == "depthwise" else int(groups)
    cout = g * rng.choice((1, 2, 3)) if groups != 1 else rng.choice((1, 5, 16, 33))
    kh, kw = rng.choice((1, 2, 3, 5, 7)), rng.choice((1, 3, 5))
    sh, sw, dh = rng.choice((1, 1, 2, 3)), rng.choice((1, 2)), rng.choice((1, 1, 2))
    ph, pw = rng.randint(0, kh // 2 * dh), rng.randint(0, kw // 2)
    h, w = rng.randint((kh - 1) * dh + 1, 21), rng.randint(kw, 27)
    torch.manual_seed(seed)
    conv = nn.Conv2d(cin, cout, (kh, kw), (sh, sw), (ph, pw), (dh, 1), groups=g, bias=rng.random() < 0.6)
    model = ConvCase(conv, rng.choice(list(UNARY))).eval()
    x = torch.randn(rng.choice((1, 2)), cin, h, w)
    if rng.random() < 0.3:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        r = torch.randn_like(conv(x))
    return model, (x, r)


class OtherCase(nn.Module):
    def __init__(self, op: nn.Module) -> None:
        super().__init__()
        self.op = op

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return self.op(x) - r


class AddBmm(nn.Module):
    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.addbmm(r, x, x.transpose(1, 2), beta=0.5, alpha=2)


def _other(rng: random.Random, seed: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(seed)
    kind = ("conv1d", "conv1d_same", "conv3d", "conv_transpose1d", "conv_transpose2d", "addbmm")[seed % 6]
    c, o = rng.choice((3, 8, 13)), rng.choice((4, 9, 16))
    if kind == "addbmm":
        x = torch.randn(rng.randint(1, 4), rng.randint(1, 20), rng.randint(1, 30))
        return AddBmm(), (x, torch.randn(x.shape[1], x.shape[1]))
    op: nn.Module = {
        "conv1d": lambda: nn.Conv1d(c, o, rng.choice((1, 3, 5)), rng.choice((1, 2)), rng.randint(0, 1)),
        "conv1d_same": lambda: nn.Conv1d(c, o, rng.choice((2, 3, 4)), padding="same", dilation=rng.choice((1, 2))),
        "conv3d": lambda: nn.Conv3d(c, o, rng.choice((1, 2, 3)), rng.choice((1, 2)), 1),
        "conv_transpose1d": lambda: nn.ConvTranspose1d(c, o, rng.choice((2, 3)), rng.choice((1, 2)), rng.randint(0, 1)),
        "conv_transpose2d": lambda: nn.ConvTranspose2d(c, o, rng.choice((2, 3)), rng.choice((1, 2)), rng.randint(0, 1)),
    }[kind]()
    spatial = {"conv3d": (rng.randint(3, 7), rng.randint(3, 8), rng.randint(3, 9)),
               "conv_transpose2d": (rng.randint(2, 9), rng.randint(2, 11))}.get(kind, (rng.randint(5, 40),))
    x = torch.randn(rng.choice((1, 2)), c, *spatial)
    with torch.no_grad():
        r = torch.randn_like(op(x))
    return OtherCase(op).eval(), (x, r)


CASES = {"linear": _linear, "matmul": _matmul, "conv": _conv, "other": _other}


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", sorted(CASES))
def test_random_float16_gemm(kind: str, seed: int) -> None:
    _check(kind, seed, torch.float16, ULP)


@pytest.mark.parametrize("seed", range(12))
def test_random_bf16_gemm_without_a_bf16_kernel(seed: int) -> None:
    """The ``other`` cases in bf16 (1-d, 3-d, same-padded, transposed convolutions, addbmm):
    the bf16 kernels do not take them, and they are widened as float16's."""
    _check("other", seed, torch.bfloat16, 2.0 ** -7)


def _check(kind: str, seed: int, dtype: torch.dtype, ulp: float) -> None:
    model, inputs = CASES[kind](random.Random(seed), seed)
    exact_model = type(model)() if kind == "matmul" or isinstance(model, AddBmm) else None
    halves = tuple(t.to(dtype) for t in inputs)
    with torch.no_grad():
        exact = (exact_model or _copy(model).double())(*(t.double() for t in halves))
        half_model = model.to(dtype)
        eager = half_model(*halves)
    compiled = ziggurat.compile(half_model, halves, backend="cpu")
    assert compiled.report.fallback_ops == {}, compiled.report.unsupported
    got = compiled(*halves)
    assert got.dtype == dtype and got.shape == eager.shape
    scale = exact.abs().max().clamp_min(1e-30)
    ours = ((got.double() - exact).abs().max() / scale).item()
    theirs = ((eager.double() - exact).abs().max() / scale).item()
    assert ours <= max(2 * theirs, ulp), (ours, theirs)


def _copy(model: nn.Module) -> nn.Module:
    import copy

    return copy.deepcopy(model)
