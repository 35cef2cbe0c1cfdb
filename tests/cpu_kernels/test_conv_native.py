"""The native channels-last convolutions (``kernels/conv_igemm.py``, ``kernels/depthwise.py``,
``lowering/conv_native.py``) against torch eager, end to end through ``ziggurat.compile``.

Every case also reads the loop IR to assert which kernel ran (``loop.gemm`` calls carrying
``kernel = "igemm"`` / ``"depthwise"``), so a silent fallback to the im2col path fails."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.isa import Isa, host_supports

VECTOR_ISAS = [isa.value for isa in (Isa.AVX512, Isa.AVX2) if host_supports(isa)]
GEMM_CALL = re.compile(r"loop\.gemm @(\S+) a\(%(\w+) .*? c\(%(\w+) .*spec \{(.*)\}")


def _compile(model: nn.Module, x: torch.Tensor, **options: Any) -> Any:
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return ziggurat.compile(model.eval(), (x,), backend="cpu", **options)
    finally:
        logger.setLevel(level)


def _calls(compiled: Any) -> list[dict[str, str]]:
    """Every ``loop.gemm`` of the loop IR: ``kernel`` (or ``"gemm"``), ``a`` and ``c`` buffers, spec text."""
    out = []
    for line in compiled.ir["loop"].splitlines():
        m = GEMM_CALL.search(line)
        if m:
            kind = re.search(r'kernel = "(\w+)"', m.group(4))
            out.append({"name": m.group(1), "a": m.group(2), "c": m.group(3), "spec": m.group(4),
                        "kernel": kind.group(1) if kind else "gemm"})
    return out


def _check(model: nn.Module, x: torch.Tensor, **options: Any) -> tuple[Any, list[dict[str, str]]]:
    model = model.eval()
    compiled = _compile(model, x, **options)
    with torch.no_grad():
        want = model(x)
        got = compiled(x)
        got2 = compiled(x)  # a second call must not read stale scratch
    scale = max(1.0, want.abs().max().item())
    torch.testing.assert_close(got, want, rtol=1e-4, atol=2e-5 * scale)
    torch.testing.assert_close(got2, want, rtol=1e-4, atol=2e-5 * scale)
    return compiled, _calls(compiled)


def _kinds(calls: list[dict[str, str]]) -> list[str]:
    return [c["kernel"] for c in calls]


# (in_ch, out_ch, kernel, stride, padding, dilation, groups, bias, spatial)
CONV2D_CASES = [
    pytest.param(16, 32, 3, 1, 1, 1, 1, True, (8, 8), id="3x3-s1"),
    pytest.param(19, 21, 3, 2, 1, 1, 1, True, (9, 11), id="3x3-s2-tails"),
    pytest.param(24, 40, 3, 1, 0, 1, 1, False, (7, 10), id="3x3-nopad-nobias"),
    pytest.param(17, 33, (3, 5), (1, 2), (0, 2), 1, 1, True, (9, 13), id="3x5-mixed-pad"),
    pytest.param(20, 18, 3, 1, 2, 2, 1, True, (9, 9), id="dilated"),
    pytest.param(3, 24, 7, 2, 3, 1, 1, False, (23, 21), id="stem-7x7-rgb"),
    pytest.param(3, 20, 3, 2, 1, 1, 1, True, (15, 17), id="stem-3x3-rgb"),
    pytest.param(32, 48, 3, 1, 1, 1, 4, True, (6, 7), id="grouped"),
    pytest.param(18, 36, 1, 2, 0, 1, 1, True, (9, 9), id="1x1-s2"),
    pytest.param(40, 24, 5, 1, 2, 1, 1, True, (5, 6), id="5x5"),
]


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("cin,cout,k,s,p,d,g,bias,sp", CONV2D_CASES)
def test_conv2d_igemm(isa: str, cin: int, cout: int, k: Any, s: Any, p: Any, d: int, g: int, bias: bool,
                      sp: tuple[int, int]) -> None:
    model = nn.Conv2d(cin, cout, k, stride=s, padding=p, dilation=d, groups=g, bias=bias)
    _, calls = _check(model, torch.randn(1, cin, *sp), isa=isa, threads=1)
    assert _kinds(calls) == ["igemm"] * g


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("c,mult,k,s,p,d,sp", [
    pytest.param(32, 1, 3, 1, 1, 1, (9, 10), id="3x3-s1"),
    pytest.param(37, 1, 3, 2, 1, 1, (11, 9), id="3x3-s2-tail"),
    pytest.param(24, 1, 5, 1, 2, 1, (7, 13), id="5x5"),
    pytest.param(20, 1, 7, 1, 3, 1, (7, 7), id="7x7-convnext"),
    pytest.param(16, 1, 3, 1, 2, 2, (8, 8), id="dilated"),
    pytest.param(5, 1, 3, 1, 0, 1, (4, 3), id="tiny-nopad"),
])
def test_depthwise(isa: str, c: int, mult: int, k: int, s: int, p: int, d: int, sp: tuple[int, int]) -> None:
    model = nn.Conv2d(c, c * mult, k, stride=s, padding=p, dilation=d, groups=c, bias=True)
    _, calls = _check(model, torch.randn(2, c, *sp), isa=isa, threads=1)
    assert _kinds(calls) == ["depthwise"]


def test_depthwise_multiplier_is_grouped_igemm() -> None:
    model = nn.Conv2d(6, 12, 3, padding=1, groups=6, bias=False)
    _, calls = _check(model, torch.randn(1, 6, 7, 9), threads=1)
    assert set(_kinds(calls)) == {"igemm"} and len(calls) == 6


@pytest.mark.parametrize("cin,cout,k,s,p,d", [(12, 20, 3, 1, 1, 1), (7, 9, 5, 2, 2, 1), (16, 16, 3, 1, 2, 2)])
def test_conv1d(cin: int, cout: int, k: int, s: int, p: int, d: int) -> None:
    model = nn.Conv1d(cin, cout, k, stride=s, padding=p, dilation=d)
    _, calls = _check(model, torch.randn(2, cin, 23), threads=1)
    assert _kinds(calls) == ["igemm"]


def test_batched_input() -> None:
    model = nn.Conv2d(10, 26, 3, stride=2, padding=1)
    _, calls = _check(model, torch.randn(3, 10, 9, 8), threads=1)
    assert _kinds(calls) == ["igemm"]


class ConvAct(nn.Module):
    def __init__(self, act: nn.Module, cin: int = 16, cout: int = 24) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.act = act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.conv(x))


@pytest.mark.parametrize("act,unary", [(nn.ReLU(), "relu"), (nn.SiLU(), "silu"), (nn.ReLU6(), None)])
def test_fused_activation(act: nn.Module, unary: str | None) -> None:
    _, calls = _check(ConvAct(act), torch.randn(1, 16, 9, 7), threads=1)
    assert _kinds(calls) == ["igemm"]
    assert "unary" in calls[0]["spec"]
    if unary is not None:
        assert f'unary = "{unary}"' in calls[0]["spec"]


class Residual(nn.Module):
    """``relu(bn(conv(x)) + x)``: the BasicBlock tail, folded and fused into the epilogue."""

    def __init__(self, c: int, depthwise: bool = False) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, groups=c if depthwise else 1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        mean, var = self.bn.running_mean, self.bn.running_var
        assert mean is not None and var is not None
        with torch.no_grad():
            mean.uniform_(-0.5, 0.5)
            var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)) + x)


@pytest.mark.parametrize("depthwise", [False, True])
def test_fused_residual_add_relu(depthwise: bool) -> None:
    _, calls = _check(Residual(21, depthwise), torch.randn(1, 21, 9, 10), threads=1)
    assert _kinds(calls) == ["depthwise" if depthwise else "igemm"]
    spec = calls[0]["spec"]
    assert 'binary = "add"' in spec and 'unary = "relu"' in spec and "bias = true" in spec


class Chain(nn.Module):
    """conv -> relu -> conv (3x3) -> depthwise -> conv 1x1 s2: activations stay channels-last."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 24, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(24, 40, 3, padding=1)
        self.dw = nn.Conv2d(40, 40, 3, padding=1, groups=40)
        self.c3 = nn.Conv2d(40, 20, 1, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c3(torch.relu(self.dw(torch.relu(self.c2(torch.relu(self.c1(x)))))))


@pytest.mark.parametrize("threads", [1, 2])
def test_chain_reads_channels_last_in_place(threads: int) -> None:
    compiled, calls = _check(Chain(), torch.randn(1, 3, 19, 17), threads=threads)
    assert _kinds(calls) == ["igemm", "igemm", "depthwise", "igemm"]
    for prev, nxt in zip(calls, calls[1:]):
        assert nxt["a"] == prev["c"], "a convolution must read its producer's channels-last buffer"
    # Only the graph boundary moves data: one copy of the input (with the stem's padding) and
    # one transposition of the output; none between the convolutions.
    kernels = re.findall(r"loop\.kernel @(\S+)", compiled.ir["loop"])
    assert len(kernels) <= 2, kernels


def test_threads_split_work() -> None:
    model = nn.Sequential(nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, groups=64, padding=1))
    compiled, calls = _check(model, torch.randn(1, 32, 28, 28), threads=2)
    assert _kinds(calls) == ["igemm", "depthwise"]
    assert compiled.ir["llvm"].count("igemm") > 0


def test_scalar_isa_uses_the_im2col_path() -> None:
    model = nn.Sequential(nn.Conv2d(8, 12, 3, padding=1), nn.Conv2d(12, 12, 3, padding=1, groups=12))
    _, calls = _check(model, torch.randn(1, 8, 6, 7), isa="scalar", threads=1)
    assert all(c["kernel"] == "gemm" for c in calls)


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("cin,cout,k,s,sp,threads", [
    pytest.param(240, 40, 3, 1, (7, 6), 1, id="3x3-deep"),
    pytest.param(2100, 36, 1, 2, (5, 5), 1, id="1x1-s2-long-segment"),
    pytest.param(300, 70, 3, 2, (9, 9), 2, id="3x3-s2-tails-2threads"),
])
def test_deep_k_igemm_with_residual(isa: str, cin: int, cout: int, k: int, s: int, sp: tuple[int, int],
                                       threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deep K (B panels far larger than L1, long segments, M tails) with the residual and
    activation in the epilogue.  (A deep strided 1x1 conv is normally a subsample + GEMM;
    here the implicit GEMM's long-segment path is kept under test.)"""
    from ziggurat.backends.cpu.lowering import conv

    monkeypatch.setattr(conv, "SUBSAMPLE_MIN_CHANNELS", cin + 1)

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, k, stride=s, padding=k // 2)

        def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.conv(x) + r)

    model = M().eval()
    x = torch.randn(1, cin, *sp)
    with torch.no_grad():
        r = torch.randn_like(model.conv(x))
        want = model(x, r)
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        compiled = ziggurat.compile(model, (x, r), backend="cpu", isa=isa, threads=threads)
    finally:
        logger.setLevel(level)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x, r), want, rtol=1e-4, atol=1e-4)
    calls = _calls(compiled)
    assert _kinds(calls) == ["igemm"] and 'binary = "add"' in calls[0]["spec"]


class Downsample(nn.Module):
    """resnet's bottleneck shortcut: ``relu(conv3x3(x)) -> conv1x1 stride s``, optionally with
    a residual add of another stride-s branch fused into the GEMM epilogue."""

    def __init__(self, cin: int, cout: int, s: int, residual: bool) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(cin, cin, 3, padding=1)
        self.down = nn.Conv2d(cin, cout, 1, stride=s)
        self.side = nn.Conv2d(cin, cout, 3, stride=s, padding=1) if residual else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.c1(x))
        y = self.down(h)
        return torch.relu(y + self.side(h)) if self.side is not None else y


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("cin,cout,s,sp,residual,threads", [
    (512, 40, 2, (9, 7), False, 1), (512, 33, 3, (10, 11), True, 2), (600, 17, 2, (5, 5), True, 1),
    (256, 24, 2, (9, 7), False, 1),
], ids=str)
def test_strided_pointwise_deep_input_is_subsample_and_gemm(isa: str, cin: int, cout: int, s: int,
                                                             sp: tuple[int, int], residual: bool,
                                                             threads: int) -> None:
    """A 1x1 stride-s conv with >= SUBSAMPLE_MIN_CHANNELS inputs takes every s-th pixel once
    and runs the plain GEMM (odd spatial sizes leave a partial last stride window); with fewer
    channels it stays an implicit GEMM."""
    from ziggurat.backends.cpu.lowering.conv import SUBSAMPLE_MIN_CHANNELS

    torch.manual_seed(cin + cout)
    _, calls = _check(Downsample(cin, cout, s, residual), torch.randn(1, cin, *sp), isa=isa, threads=threads)
    kinds = _kinds(calls)
    if cin >= SUBSAMPLE_MIN_CHANNELS:
        assert kinds.count("gemm") == 1, kinds  # the 1x1 conv
    else:
        assert "gemm" not in kinds, kinds
    assert kinds.count("igemm") == (2 if residual else 1) + (cin < SUBSAMPLE_MIN_CHANNELS), kinds


@pytest.mark.parametrize("isa", [*VECTOR_ISAS, "scalar"])
@pytest.mark.parametrize("model,shape", [
    (lambda: nn.Conv2d(512, 24, 1, stride=2), (2, 512, 9, 7)),
    (lambda: nn.Conv1d(512, 20, 1, stride=3), (2, 512, 17)),
    (lambda: nn.Conv2d(520, 16, 1, stride=(2, 1), dilation=2), (1, 520, 7, 6)),
], ids=["2d-batch2", "1d-stride3", "2d-asymmetric-dilated"])
def test_strided_pointwise_subsample_shapes(isa: str, model: Any, shape: tuple[int, ...]) -> None:
    """The subsample + GEMM form with a batch, in 1-d, with unequal strides and a (no-op)
    dilation, on every ISA: one plain GEMM call."""
    torch.manual_seed(len(shape))
    _, calls = _check(model(), torch.randn(*shape), isa=isa, threads=2)
    assert _kinds(calls) == ["gemm"], _kinds(calls)


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("act_first", [True, False], ids=["silu-then-add", "add-then-gelu"])
def test_staged_activation_with_residual(isa: str, act_first: bool) -> None:
    """A transcendental activation in the implicit GEMM's epilogue runs over a staged tile
    (``staged_epilogue``); the residual is added before or after it.  9x7 output pixels give
    12-pixel tiles and a tail of 3; 21 output channels a masked vector."""

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(16, 21, 3, padding=1)

        def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            y = self.conv(x)
            return nn.functional.silu(y) + r if act_first else nn.functional.gelu(y + r)

    model = M().eval()
    x, r = torch.randn(1, 16, 9, 7), torch.randn(1, 21, 9, 7)
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        compiled = ziggurat.compile(model, (x, r), backend="cpu", isa=isa, threads=1)
    finally:
        logger.setLevel(level)
    calls = _calls(compiled)
    assert _kinds(calls) == ["igemm"]
    assert 'binary = "add"' in calls[0]["spec"]
    assert ('unary = "silu"' if act_first else 'unary = "gelu_erf"') in calls[0]["spec"]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, r), model(x, r), rtol=1e-4, atol=2e-5)


def _column_block(monkeypatch: pytest.MonkeyPatch, l2: int, isa: Isa, nr: int, channels: int,
                  out_channels: int) -> int:
    """The implicit-GEMM convolution's column tiles per task for a 3x3 over ``channels`` to
    ``out_channels`` on 28x28 pixels, 2 threads, with a host of ``l2`` bytes of L2."""
    from llvmlite import ir as llvm_ir

    from ziggurat.backends.cpu.kernels import conv_igemm
    from ziggurat.backends.cpu.kernels.conv_spec import ConvSpec

    monkeypatch.setattr(conv_igemm, "cache_sizes", lambda: {1: 32 * 1024, 2: l2, 3: 8 << 20})
    spec = ConvSpec(kind="igemm", batch=1, in_h=30, in_w=30, channels=channels, out_h=28, out_w=28,
                    out_channels=out_channels, kh=3, kw=3, nr=nr, isa=isa, threads=2)
    return conv_igemm._IgemmEmitter(llvm_ir.Module(), spec)._column_block()  # pyright: ignore[reportPrivateUsage]


def test_a_small_l2_keeps_the_output_channels_in_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """The implicit-GEMM convolution's column blocks are planned for ``Tuning.l2_floor`` as the
    GEMMs' are: a 512 KB L2 (AMD Zen 1-3) cut 128 channels of a 3x3 over 64 into 7 tiles and 1."""
    assert _column_block(monkeypatch, 512 * 1024, Isa.AVX2, 16, 64, 128) == 128 // 16


def test_column_blocks_are_as_even_as_the_tiles_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3x3 over 128 channels to 128 (ResNet-18's layer 2) on avx512 with 1 MB of L2 (Zen 4):
    half of L2 holds 3 of the 4 column tiles; blocks of 2 and 2, not 3 and 1, which left one of
    two threads three quarters of the work.  One block where all the tiles fit."""
    assert _column_block(monkeypatch, 1 << 20, Isa.AVX512, 32, 128, 128) == 2
    assert _column_block(monkeypatch, 1 << 20, Isa.AVX512, 32, 64, 128) == 4


@pytest.mark.parametrize("isa", VECTOR_ISAS)
def test_split_column_blocks_are_eagers_convolution(isa: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A convolution cut into uneven column blocks on 2 threads, with a residual and ReLU,
    against eager: a 3x3 over 128 to 136 output channels (a panel tail) with 1 MB of L2, blocks
    of 3 tiles and 2 on avx512 (5 tiles, the last 8 channels wide), of 5 and 4 on avx2."""
    # (_column_block leaves the 1 MB L2 patched in for the compile below)
    assert _column_block(monkeypatch, 1 << 20, Isa(isa), 32 if isa == "avx512" else 16, 128, 136) == (
        3 if isa == "avx512" else 5)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(128, 136, 3, padding=1)

        def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.conv(x) + r)

    torch.manual_seed(11)
    model = Block().eval()
    x, r = torch.randn(1, 128, 13, 11), torch.randn(1, 136, 13, 11)
    compiled = ziggurat.compile(model, (x, r), backend="cpu", isa=isa, threads=2)
    assert [c["kernel"] for c in _calls(compiled)] == ["igemm"]
    with torch.no_grad():
        want = model(x, r)
    torch.testing.assert_close(compiled(x, r), want, rtol=1e-4, atol=2e-5 * max(1.0, want.abs().max().item()))
