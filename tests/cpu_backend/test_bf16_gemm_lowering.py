"""bf16 GEMMs of whole models on the native kernels (``lowering/gemm_bf16.py``): a model in
bf16, and a float32 model under ``precision="bf16"``; what stays in torch, with its reason."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
import torch
from torch import nn

import ziggurat
import ziggurat.ir.errors as ziggurat_errors
from ziggurat.backends.cpu.kernels import amx

KERNEL = amx.host_bf16_kernel()
pytestmark = pytest.mark.skipif(KERNEL is None, reason="this host has neither AMX-BF16 nor AVX512-BF16")


class Block(nn.Module):
    """linear+gelu, linear, linear+residual+relu: every epilogue kind, odd sizes (M = 4*17 rows:
    two full 32-row blocks and a tail; K = 70: a 32-deep K tail; N = 33: a panel tail)."""

    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(70, 130)
        self.l2 = nn.Linear(130, 33)
        self.l3 = nn.Linear(33, 33)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.l2(nn.functional.gelu(self.l1(x)))
        return torch.relu(self.l3(y) + y)


class ConstantMatmul(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(45, 19))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x @ self.w)


def _relative(y: torch.Tensor, exact: torch.Tensor) -> float:
    return ((y.double() - exact.double()).abs().max() / exact.double().abs().max()).item()


def _native(compiled: Any, op: str) -> int:
    return compiled.report.native_ops.get(op, 0)


@pytest.mark.parametrize("disable_amx", [False, True], ids=["host-kernel", "no-amx"])
def test_bf16_model_runs_its_linears_natively(disable_amx: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if disable_amx:
        monkeypatch.setenv(amx.DISABLE_ENV, "1")
    torch.manual_seed(0)
    exact_model = Block().eval()
    model = Block().eval()
    model.load_state_dict(exact_model.state_dict())
    model = model.to(torch.bfloat16)
    x = torch.randn(4, 17, 70)
    xb = x.bfloat16()
    compiled = ziggurat.compile(model, (xb,), backend="cpu")
    assert _native(compiled, "fused.linear") == 3, compiled.report
    kernel = "avx512bf16" if disable_amx else KERNEL
    assert compiled.ir["graph"].count(f'bf16_kernel = "{kernel}"') == 3
    assert compiled.report.stats[f"bf16 gemm calls ({kernel})"] == 3  # explain prints it
    y = compiled(xb)
    assert y.dtype == torch.bfloat16 and y.shape == (4, 17, 33)
    with torch.no_grad():
        exact = exact_model.double()(xb.double())
        eager = model(xb)
    # one rounding per layer, as eager (which rounds once more, between each GEMM and its post-op)
    assert _relative(y, exact) <= max(2 * _relative(eager, exact), 1e-2)


def test_precision_bf16_uses_the_kernels() -> None:
    torch.manual_seed(1)
    model = Block().eval()
    x = torch.randn(3, 70)
    compiled = ziggurat.compile(model, (x,), backend="cpu", precision="bf16")
    assert _native(compiled, "fused.linear") == 3, compiled.report
    x2 = torch.randn(3, 70)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        eager = model(x2).float()
    with torch.no_grad():
        exact = model(x2)
    assert _relative(compiled(x2), exact) <= max(2 * _relative(eager, exact), 1e-2)


def test_constant_right_operand_of_matmul() -> None:
    torch.manual_seed(2)
    model = ConstantMatmul().eval().to(torch.bfloat16)
    x = torch.randn(2, 9, 45).bfloat16()
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert "bf16_kernel" in compiled.ir["graph"]
    with torch.no_grad():
        exact = torch.tanh(x.double() @ model.w.double())
        eager = model(x)
    assert _relative(compiled(x), exact) <= max(2 * _relative(eager, exact), 1e-2)


class Attention(nn.Module):
    """Scaled dot-product attention with a boolean mask: two products of computed operands
    (``Q @ K^T`` with the scale and the mask, ``P @ V``), batched over heads."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(48, 3 * 48)
        self.out = nn.Linear(48, 48)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 4, 12).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, s, 48))


def test_attention_products_of_computed_operands() -> None:
    torch.manual_seed(3)
    model = Attention().eval()
    x = torch.randn(2, 37, 48)
    mask = torch.rand(37, 37) > 0.2
    compiled = ziggurat.compile(model, (x, mask), backend="cpu", precision="bf16")
    assert compiled.report.unsupported == [], compiled.report.unsupported
    graph = compiled.ir["graph"]
    assert graph.count("b_packed = false") == 2, graph  # Q @ K^T and P @ V
    x2 = torch.randn(2, 37, 48)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        eager = model(x2, mask).float()
    with torch.no_grad():
        exact = model(x2, mask)
    assert _relative(compiled(x2, mask), exact) <= max(2 * _relative(eager, exact), 1e-2)


def test_what_stays_in_torch_says_why() -> None:
    class MatrixVector(nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a @ b

    a, v = torch.randn(8, 16).bfloat16(), torch.randn(16).bfloat16()
    compiled = ziggurat.compile(MatrixVector(), (a, v), backend="cpu")
    reasons = [r.reason for r in compiled.report.unsupported]
    assert any("vector" in r for r in reasons), reasons
    torch.testing.assert_close(compiled(a, v), a @ v)

    torch.manual_seed(1)
    model = Block().eval().to(torch.bfloat16)
    x = torch.randn(2, 70).bfloat16()
    # no bf16 kernel runs on avx2: its GEMMs are widened to the float32 kernels (products exact,
    # summed in float32, rounded once), and nothing stays in torch
    narrow = ziggurat.compile(model, (x,), backend="cpu", isa="avx2")
    assert narrow.report.unsupported == [], narrow.report.unsupported
    assert "bf16_kernel" not in str(narrow.ir["loop"])
    # another summation order than eager's bf16 kernel, rounded to bf16 between the layers: as
    # near the float64 result of the same bf16 weights as eager is (within 2x), and a few bf16
    # ulps of the largest output from eager (up to 2 over 12 seeds on Zen 4; 4 allowed)
    exact = copy.deepcopy(model).double()(x.double())
    widened, eager = narrow(x).double(), model(x).double()
    assert float((widened - exact).abs().max()) <= 2 * float((eager - exact).abs().max())
    ulp = 2.0 ** (math.frexp(float(eager.abs().max()))[1] - 8)
    torch.testing.assert_close(widened, eager, atol=4 * ulp, rtol=0)


@pytest.mark.skipif(KERNEL != "amx", reason="this host has no AMX-BF16 (or the OS refused the tiles)")
def test_saved_amx_module_needs_the_tile_permission(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved module with AMX kernels loads and runs bit for bit; in a process the OS refused
    the tile state, loading it is a clear LoadError naming AMX, not SIGILL at the first call."""
    torch.manual_seed(4)
    model = Block().eval()
    x = torch.randn(3, 70)
    compiled = ziggurat.compile(model, (x,), backend="cpu", precision="bf16")
    path = tmp_path / "bf16.zig"
    compiled.save(path)
    assert torch.equal(ziggurat.load(path)(x), compiled(x))
    monkeypatch.setattr(amx, "request_tile_permission", lambda: (False, "refused by the test"))
    with pytest.raises(ziggurat_errors.ZigguratError, match="AMX tiles.*refused by the test"):
        ziggurat.load(path)


class Pointwise(nn.Module):
    """1x1 convolutions: bias and relu, no bias and a residual, stride 2 after a silu; a grouped
    3x3 (widened to the float32 kernels)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(24, 40, 1)
        self.b = nn.Conv2d(40, 24, 1, bias=False)
        self.c = nn.Conv2d(24, 16, 1, stride=2)
        self.d = nn.Conv2d(24, 24, 3, padding=1, groups=2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.b(torch.relu(self.a(x))) + x
        return self.c(nn.functional.silu(z)), self.d(z)


def _conv_case(make: type[nn.Module], seed: int, layout: str) -> tuple[nn.Module, nn.Module, torch.Tensor]:
    """A float64 reference model, its bf16 twin (the same weights) and a bf16 image."""
    torch.manual_seed(seed)
    exact_model = make().eval()
    model = make().eval()
    model.load_state_dict(exact_model.state_dict())
    x = torch.randn(2, 24, 13, 17).bfloat16()
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    return exact_model.double(), model.to(torch.bfloat16), x


def _as_close_as_eager(compiled: Any, model: nn.Module, exact_model: nn.Module, x: torch.Tensor) -> None:
    with torch.no_grad():
        exact = exact_model(x.double())
        eager = model(x)
    for got, ref, want in zip(compiled(x), eager, exact, strict=True):
        assert got.dtype == torch.bfloat16 and got.shape == ref.shape
        assert _relative(got, want) <= max(2 * _relative(ref, want), 1e-2)


@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_pointwise_convolutions_are_gemms(layout: str) -> None:
    exact_model, model, x = _conv_case(Pointwise, 5, layout)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert compiled.ir["graph"].count("bf16_kernel") == 3, compiled.report.unsupported
    assert compiled.report.unsupported == [], compiled.report.unsupported
    _as_close_as_eager(compiled, model, exact_model, x)


class Spatial(nn.Module):
    """KxK convolutions as implicit GEMMs: 3x3 with padding, bias and relu; a dilated 3x3
    without bias plus a residual and relu; a 3x5 without padding in height; a 5x5 of 19
    channels (K = 475: a 32-deep K tail) with no padding at all; a 7x7 stem of stride 2 on 3
    channels; a 3x3 of stride (2, 3) plus a residual; a 1x1 reading the 3x5's padded-width rows
    (copied back to back first)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(24, 40, 3, padding=1)
        self.b = nn.Conv2d(40, 40, 3, padding=2, dilation=2, bias=False)
        self.c = nn.Conv2d(40, 19, (3, 5), padding=(0, 1))
        self.d = nn.Conv2d(19, 7, 5)
        self.stem = nn.Conv2d(3, 16, 7, stride=2, padding=3)
        self.e = nn.Conv2d(16, 16, 3, stride=(2, 3), padding=1)
        self.f = nn.Conv2d(19, 8, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = torch.relu(self.a(x))
        y = torch.relu(self.b(y) + y)
        z = self.c(y)
        s = torch.relu(self.stem(x[:, :3]))
        return z, self.d(z), self.e(s) + s[:, :, ::2, ::3], self.f(z)


@pytest.mark.parametrize("disable_amx", [False, True], ids=["host-kernel", "no-amx"])
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_spatial_convolutions_are_implicit_gemms(layout: str, disable_amx: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if disable_amx:
        monkeypatch.setenv(amx.DISABLE_ENV, "1")
    exact_model, model, x = _conv_case(Spatial, 6, layout)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert compiled.ir["graph"].count("b_conv") == 6, compiled.report.unsupported
    assert not compiled.report.unsupported
    _as_close_as_eager(compiled, model, exact_model, x)


def test_precision_bf16_resnet_block_is_native() -> None:
    """A float32 basic block (conv-bn-relu, conv-bn, residual, relu) under precision="bf16":
    both 3x3 convolutions run as implicit GEMMs (a 16x16 image: 256 of its 288 lanes used), within
    twice eager autocast's error."""

    class Basic(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32)
            self.c2, self.b2 = nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.b2(self.c2(torch.relu(self.b1(self.c1(x))))) + x)

    torch.manual_seed(7)
    model = Basic().eval()
    with torch.no_grad():
        for bn in (model.b1, model.b2):
            bn.running_mean.normal_()
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(3, 32, 16, 16)
    compiled = ziggurat.compile(model, (x,), backend="cpu", precision="bf16")
    assert compiled.report.fallback_ops == {}, compiled.report.unsupported
    assert compiled.ir["graph"].count("b_conv") == 2
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        eager = model(x)
    with torch.no_grad():
        exact = model.double()(x.double())
    got = compiled(x)
    assert _relative(got, exact) <= max(2 * _relative(eager, exact), 1e-2)


def test_linear_with_a_computed_weight() -> None:
    """F.linear(x, w, b) with ``w`` an input: W is the transposed right operand of a run-time
    product (packed by the kernel), the bias in the epilogue."""

    class Functional(nn.Module):
        def forward(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return nn.functional.gelu(nn.functional.linear(x, w * 2, b))

    torch.manual_seed(6)
    x, w, b = torch.randn(3, 17, 45).bfloat16(), torch.randn(33, 45).bfloat16(), torch.randn(33).bfloat16()
    compiled = ziggurat.compile(Functional(), (x, w, b), backend="cpu")
    assert compiled.report.unsupported == [], compiled.report.unsupported
    assert "b_packed = false" in compiled.ir["graph"]
    with torch.no_grad():
        exact = Functional()(x.double(), w.double(), b.double())
        eager = Functional()(x, w, b)
    assert _relative(compiled(x, w, b), exact) <= max(2 * _relative(eager, exact), 1e-2)
