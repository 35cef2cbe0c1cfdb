"""bf16 GEMMs where a subnormal meets a huge value: ``tdpbf16ps`` and ``vdpbf16ps`` read a bf16
subnormal as zero (``0 * inf = NaN`` where eager gives inf: fuzz seed 134, program 102), so the
kernels scan their run-time operands and take float32 FMA products when both kinds are there
(``kernels/bf16_specials.py``).  Checked against the float64 products of the same bf16 values."""

from __future__ import annotations

import pytest
import torch
from llvmlite import ir

from tests.cpu_backend.test_gemm_bf16 import KERNELS, _operands
from ziggurat.backends.cpu.kernels import amx, bf16_specials
from ziggurat.backends.cpu.kernels.bf16_specials import HUGE, SCAN, SUBNORMAL, needs_exact_path, specials_of
from ziggurat.backends.cpu.kernels.gemm_bf16 import emit_bf16_gemm
from ziggurat.backends.cpu.kernels.gemm_bf16_callable import bf16_gemm_callable
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError
from ziggurat.backends.cpu.kernels.pack_bf16 import pack_b_bf16

SUB = -9.183549615799121e-41  # a bf16 subnormal (fuzz seed 134's)


def test_specials_of_a_constant() -> None:
    t = torch.ones(40).bfloat16()
    assert specials_of(t) == 0
    t[3] = SUB
    assert specials_of(t) == SUBNORMAL
    t[7] = float("-inf")
    assert specials_of(t) == SUBNORMAL | HUGE
    assert specials_of(torch.tensor([2.0 ** 64, 0.0, -0.0]).bfloat16()) == HUGE
    assert specials_of(torch.tensor([2.0 ** 63 * 1.99, 2.0 ** -126, float("nan")]).bfloat16()) == HUGE
    assert specials_of(torch.tensor([2.0 ** 63 * 1.99, 2.0 ** -126]).bfloat16()) == 0


@pytest.mark.parametrize("chunk", [1, 7, 40, 1 << 20])
def test_specials_of_reads_every_chunk(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(bf16_specials, "SPECIALS_CHUNK", chunk)
    t = torch.ones(5, 8).bfloat16()
    assert specials_of(t) == 0
    assert specials_of(torch.tensor(SUB).bfloat16()) == SUBNORMAL  # 0-d
    t[4, 7] = SUB  # the last element
    assert specials_of(t) == SUBNORMAL
    t[1, 5] = -2.0 ** 70  # negative: its sign bit makes the int16 negative
    assert specials_of(t) == SUBNORMAL | HUGE
    t[4, 7] = -SUB
    assert specials_of(t.t()) == SUBNORMAL | HUGE  # not contiguous


def test_exact_path_only_where_the_two_kinds_can_meet() -> None:
    assert needs_exact_path(SCAN, SCAN)
    assert not needs_exact_path(SCAN, 0) and not needs_exact_path(0, SCAN)
    assert needs_exact_path(SCAN, SUBNORMAL) and needs_exact_path(HUGE, SCAN)
    assert not needs_exact_path(SUBNORMAL, SUBNORMAL) and not needs_exact_path(HUGE, HUGE)
    assert needs_exact_path(SUBNORMAL, HUGE) and needs_exact_path(HUGE | SUBNORMAL, SUBNORMAL)
    with pytest.raises(GemmSpecError, match="b_specials"):
        Bf16GemmSpec(4, 4, 4, kernel="amx", b_specials=4)

    def text(**kw: object) -> str:
        module = ir.Module(name="t")
        emit_bf16_gemm(module, Bf16GemmSpec(40, 40, 70, **kw))  # type: ignore[arg-type]
        return str(module)

    for kernel in ("amx", "avx512bf16"):
        # plain constant weights: no scan, no exact products in the code at all
        assert ".exact_" not in text(kernel=kernel, b_specials=0)
        assert "scan.row" not in text(kernel=kernel, b_specials=0)
        assert ".exact_" in text(kernel=kernel, b_specials=HUGE) and "scan.row" in text(kernel=kernel, b_specials=HUGE)


def _want(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.double() @ b.double()


def _check(got: torch.Tensor, want: torch.Tensor) -> None:
    got = got.double()
    assert torch.equal(got.isnan(), want.isnan()), (got, want)
    assert torch.equal(got.isinf(), want.isinf()) and torch.equal(got[got.isinf()], want[want.isinf()])
    finite = want.isfinite()
    if finite.any():
        scale = want[finite].abs().max().item()
        assert (got[finite] - want[finite]).abs().max().item() <= 1e-5 * scale + 1e-30


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape", [(1, 1, 2), (70, 40, 70), (33, 65, 32)], ids=["1x1x2", "70x40x70", "33x65x32"])
def test_subnormal_times_inf_and_huge(kernel: str, shape: tuple[int, int, int]) -> None:
    m, n, k = shape
    a, b = _operands(m, n, k, seed=7)
    a[m - 1, k - 1] = SUB  # meets b's -inf: eager's inf, the bf16 instructions' NaN
    b[k - 1, 0] = float("-inf")
    a[0, 0] = 1e38  # meets b's subnormal: a product of 1e-2 the instructions drop
    b[0, n - 1] = 1e-39
    for b_packed in (True, False):
        spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=2, b_packed=b_packed)
        got = bf16_gemm_callable(spec)(a, pack_b_bf16(b) if b_packed else b)
        _check(got, _want(a, b))
        if m > 1:
            assert got[m - 1, 0].item() == float("inf") and abs(got[0, n - 1].item()) > 1e-3


@pytest.mark.parametrize("kernel", KERNELS)
def test_exact_path_with_a_constant_and_a_transposed_batched_b(kernel: str) -> None:
    """A constant weight classified at compile time (``b_specials``), and a run-time B read
    transposed in batches: the scan follows each operand's own layout."""
    m, n, k = 40, 33, 48
    a, b = _operands(m, n, k, seed=7)
    b[5, 3] = float("inf")
    a[2, 5] = SUB
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=1, b_specials=specials_of(b))
    got = bf16_gemm_callable(spec)(a, pack_b_bf16(b))
    _check(got, _want(a, b))
    assert got[2, 3].item() == float("-inf")  # a negative subnormal times inf
    # two products of a batch of A against B^T stored [batch, n, k]
    a2 = torch.stack([a, a.flip(0)])
    bt = torch.stack([b.t().contiguous(), b.t().contiguous()])
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=2, b_packed=False, b_transposed=True, batch=2,
                        batch_stride_a=m * k, batch_stride_b=n * k, batch_stride_c=m * n)
    out = bf16_gemm_callable(spec)(a2, bt)
    for i in range(2):
        _check(out[i * m * n:(i + 1) * m * n].view(m, n), _want(a2[i], b))


@pytest.mark.parametrize("kernel", KERNELS)
def test_subnormals_alone_keep_the_fast_products(kernel: str) -> None:
    """Without a huge factor a subnormal's product is under 2**-62: the fast path runs, within
    float32's tolerance of the exact sums (its products flushed)."""
    m, n, k = 64, 32, 64
    a, b = _operands(m, n, k, seed=7)
    a[::3, ::5] = SUB
    spec = Bf16GemmSpec(m, n, k, kernel=kernel, out_bf16=False, threads=1)
    _check(bf16_gemm_callable(spec)(a, pack_b_bf16(b)), _want(a, b))


class _ConvRelu(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(6, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


@pytest.mark.skipif(amx.host_bf16_kernel() is None, reason="this host has neither AMX-BF16 nor AVX512-BF16")
def test_models_with_a_subnormal_weight_or_a_huge_one() -> None:
    """precision='bf16' (the weights classified at compile time): a convolution whose constant weight holds a subnormal, on an image with
    an infinity, gives the float32 convolution's infinities of the same bf16 values; a linear
    whose weight holds 1e38, on an input with a subnormal, keeps that product (1e-2)."""
    import ziggurat

    torch.manual_seed(0)
    conv = _ConvRelu().eval()
    with torch.no_grad():
        conv.conv.weight[2, 1, 1, 1] = SUB
    x = torch.randn(1, 6, 9, 10)
    x[0, 1, 4, 4] = float("-inf")  # under the subnormal tap of output channel 2 at (4, 4)
    compiled = ziggurat.compile(conv, (x,), precision="bf16")
    got = compiled(x).float()
    bias = conv.conv.bias
    assert bias is not None
    w16, x16, b16 = (t.bfloat16().float() for t in (conv.conv.weight.detach(), x, bias.detach()))
    want = torch.relu(torch.nn.functional.conv2d(x16.double(), w16.double(), b16.double(), padding=1))
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())
    assert got[0, 2, 4, 4].item() == float("inf")

    lin = torch.nn.Linear(16, 5).eval()
    with torch.no_grad():
        lin.weight[3, 7] = 1e38
    v = torch.randn(4, 16)
    v[1, 7] = 1e-39
    got = ziggurat.compile(lin, (v,), precision="bf16")(v).float()
    wl, vl, bl = (t.bfloat16().double() for t in (lin.weight.detach(), v, lin.bias.detach()))
    want = vl @ wl.t() + bl
    # the product 1e-39 * 1e38 = 0.1 is in the result (the bf16 instructions drop it)
    assert abs(got[1, 3].item() - want[1, 3].item()) <= 2 ** -7 * abs(want[1, 3].item()) + 1e-3
    assert abs(want[1, 3].item() - (want[1, 3].item() - vl[1, 7].item() * wl[3, 7].item())) > 0.05
