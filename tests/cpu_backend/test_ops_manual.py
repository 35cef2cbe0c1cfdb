"""Ops whose OpInfo samples do not reach the backend (tensor lists, equations, keyword-only
arguments) or whose edge cases need a hand-made input: einsum, attention, sorting with ties
and NaN, scatter with duplicate indices, conv/pool/upsample variants, creation ops."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import WIDEST_ISA, compile_cpu
from tests.support.opinfo import OpModule


def check(fn: Callable[..., object], *inputs: torch.Tensor, isa: str = WIDEST_ISA, rtol: float = 1e-5,
          atol: float = 1e-5, native: bool = True) -> None:
    compiled = compile_cpu(OpModule(fn), inputs, isa=isa)
    with torch.no_grad():
        expected = fn(*[t.clone() for t in inputs])
    actual = compiled(*inputs)
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    if native:
        assert not compiled.report.fallback_ops, compiled.report.fallback_ops


EINSUMS = ["ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->", "bhqd,bhkd->bhqk", "i,j->ij", "ijk->kji",
           "...ij,...jk->...ik", "ij,ij->i", "abc,cd,de->abe"]


@pytest.mark.parametrize("equation", EINSUMS)
def test_einsum(equation: str) -> None:
    torch.manual_seed(0)
    sizes = {"a": 2, "b": 3, "c": 4, "d": 5, "e": 6, "h": 2, "i": 4, "j": 4, "k": 7, "q": 5}
    lhs = equation.split("->")[0].split(",")
    inputs = []
    for term in lhs:
        shape = [2] + [sizes[c] for c in term.replace("...", "")] if "..." in term else [sizes[c] for c in term]
        inputs.append(torch.randn(*shape))
    check(lambda *ts: torch.einsum(equation, *ts), *inputs, rtol=1e-4)


@pytest.mark.parametrize("variant", ["plain", "causal", "bool_mask", "float_mask", "scale"])
def test_attention(variant: str, isa: str) -> None:
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)
    mask_b = torch.rand(5, 7) > 0.3
    mask_b[:, 0] = True
    mask_f = torch.randn(2, 1, 5, 7)
    kwargs: dict[str, object] = {"plain": {}, "causal": {"is_causal": True}, "bool_mask": {"attn_mask": mask_b},
                                 "float_mask": {"attn_mask": mask_f}, "scale": {"scale": 0.3}}[variant]
    if variant == "causal":
        k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 5, 4)
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kwargs), q, k, v, isa=isa, rtol=1e-4)


def test_sort_ties_nan_and_topk(isa: str) -> None:
    x = torch.tensor([[3.0, 1.0, float("nan"), 1.0, -0.0, 0.0, 7.0, 1.0],
                      [2.0, 2.0, 2.0, -1.0, float("nan"), float("nan"), 5.0, -3.0]])
    check(lambda t: torch.sort(t, dim=-1, stable=True), x, isa=isa)
    check(lambda t: torch.sort(t, dim=-1, descending=True, stable=True), x, isa=isa)
    check(lambda t: torch.argsort(t, dim=0, stable=True), x, isa=isa)
    y = torch.randn(4, 33)
    check(lambda t: torch.topk(t, 5, dim=-1), y, isa=isa)
    check(lambda t: torch.topk(t, 3, dim=0, largest=False), y, isa=isa)
    check(lambda t: torch.kthvalue(t, 7, dim=-1, keepdim=True), y, isa=isa)


def test_scatter_duplicates_and_index_put(isa: str) -> None:
    x = torch.zeros(3, 6)
    idx = torch.tensor([[0, 2, 2, 5], [1, 1, 1, 1], [5, 4, 3, 2]])
    src = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    check(lambda a, i, s: a.scatter(1, i, s), x, idx, src, isa=isa)
    check(lambda a, i, s: a.scatter_add(1, i, s), x, idx, src, isa=isa)
    check(lambda a, i, s: a.scatter_reduce(1, i, s, "amax", include_self=False), x, idx, src, isa=isa)
    rows = torch.tensor([0, 2, 0, -1])
    vals = torch.randn(4, 6)
    check(lambda a, r, v: torch.index_put(a, (r,), v, accumulate=True), x, rows, vals, isa=isa)
    check(lambda a, r, v: torch.index_put(a, (r,), v), x, rows[1:], vals[1:], isa=isa)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_variants(dims: int, isa: str) -> None:
    torch.manual_seed(dims)
    conv = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[dims]
    m = conv(4, 6, 3, stride=2, padding=1, dilation=1, groups=2).eval()
    x = torch.randn(2, 4, *([9] * dims))
    check(lambda t: m(t), x, isa=isa, rtol=1e-4)
    t_conv = {1: torch.nn.ConvTranspose1d, 2: torch.nn.ConvTranspose2d, 3: torch.nn.ConvTranspose3d}[dims]
    tm = t_conv(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2).eval()
    check(lambda t: tm(t), x, isa=isa, rtol=1e-4)


def test_pooling_variants(isa: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 11, 10)
    check(lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True, return_indices=True), x, isa=isa)
    check(lambda t: F.max_pool2d(t, 2, dilation=2), x, isa=isa)
    check(lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False), x, isa=isa)
    check(lambda t: F.avg_pool2d(t, 3, 2, 1, divisor_override=4), x, isa=isa)
    check(lambda t: F.adaptive_avg_pool2d(t, (4, 3)), x, isa=isa)
    check(lambda t: F.adaptive_max_pool2d(t, (3, 4), return_indices=True), x, isa=isa)
    check(lambda t: F.max_pool3d(t.unsqueeze(1), 2), x, isa=isa)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bilinear_ac"])
def test_upsample(mode: str, isa: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(1, 2, 5, 7)
    if mode == "bilinear_ac":
        check(lambda t: F.interpolate(t, size=(9, 4), mode="bilinear", align_corners=True), x, isa=isa)
    else:
        check(lambda t: F.interpolate(t, scale_factor=2.0, mode=mode), x, isa=isa)
        check(lambda t: F.interpolate(t, size=(3, 11), mode=mode), x, isa=isa)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode: str, isa: str) -> None:
    x = torch.randn(2, 3, 6, 5)
    pad = (2, 1, 1, 3) if mode != "constant" else (2, -1, 1, 3)
    check(lambda t: F.pad(t, pad, mode=mode, **({"value": 1.5} if mode == "constant" else {})), x, isa=isa)


def test_creation_and_scalars(isa: str) -> None:
    x = torch.randn(3, 7)

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        n = t.size(1)
        ar = torch.arange(n, dtype=torch.float32) * 0.5
        eye = torch.eye(3, n)
        full = torch.full((3, n), 2.5)
        lin = torch.linspace(-1, 1, n)
        tri = torch.triu(t, diagonal=1) + torch.tril(t, -1)
        return t + ar + eye * full + lin, tri, torch.zeros_like(t) + t.numel()

    check(fn, x, isa=isa)


def test_embedding_gather_index(isa: str) -> None:
    torch.manual_seed(0)
    w = torch.randn(11, 6)
    ids = torch.tensor([[0, 3, 10], [5, 5, 1]])
    check(lambda a, i: F.embedding(i, a) * 2, w, ids, isa=isa)
    x = torch.randn(4, 9)
    g = torch.randint(0, 9, (4, 5))
    check(lambda a, i: torch.gather(a, 1, i), x, g, isa=isa)
    check(lambda a, i: a[i[:, :2] % 4, i[:, 2:4]], x, g, isa=isa)
    check(lambda a, i: torch.index_select(a, 1, i[0]) + a[:, :5], x, g, isa=isa)


def test_rnn_cells(isa: str) -> None:
    torch.manual_seed(0)
    lstm, gru, rnn = torch.nn.LSTMCell(5, 7).eval(), torch.nn.GRUCell(5, 7).eval(), torch.nn.RNNCell(5, 7).eval()
    x, h, c = torch.randn(3, 5), torch.randn(3, 7), torch.randn(3, 7)
    check(lambda a, b, d: lstm(a, (b, d)), x, h, c, isa=isa, rtol=1e-4)
    check(lambda a, b: gru(a, b), x, h, isa=isa, rtol=1e-4)
    check(lambda a, b: rnn(a, b), x, h, isa=isa, rtol=1e-4)
    check(lambda a, b, d: lstm(a[0], (b[0], d[0])), x, h, c, isa=isa, rtol=1e-4)


def test_as_strided_and_trilinear(isa: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    check(lambda t: torch.as_strided(t * 2, (3, 3), (5, 1), 2), x, isa=isa)
    bil = torch.nn.Bilinear(4, 3, 5).eval()
    check(lambda a, b: bil(a, b), torch.randn(2, 4), torch.randn(2, 3), isa=isa, rtol=1e-4)
