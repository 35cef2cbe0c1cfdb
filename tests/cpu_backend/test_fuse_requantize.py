"""``fuse-requantize``: a PT2E quantize -> dequantize pair after an int8 linear/convolution runs
in the int8 kernel's epilogue (``#fused.requantize``).  Each step is the float32 operation of
eager's pair, so the fused result is bit for bit the unfused one (the pair as its own kernel)
and, where the GEMM's output is exact, eager's: ties of round-half-even, saturation at both
bounds, infinities, NaN (the integer 0), a scale whose inverse overflows float32, signed and
16-bit ranges, zero points inside the range.  The reference interpreter's ``#fused.requantize``
is checked against the pair's own ops."""

from __future__ import annotations

import random

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from torch import nn

import ziggurat
from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.passes import parse_pipeline
from ziggurat.ir.importer import import_model
from ziggurat.ir.interpreter import run
from ziggurat.ir.pipeline import run_pipeline
from tests.support.quantized_models import InvertedResidual, QuantizedStack, Uint8Chain, float32_bits, int8_weight, qd

VNNI = bool(host_features().get("avx512vnni"))
needs_vnni = pytest.mark.skipif(not VNNI, reason="this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")
UNFUSED = ("graph-opt,widen-half-floats,prepack-weights{isa=avx512},convert-fused-to-kernel,kernel-fuse,"
           "kernel-layout,convert-kernel-to-loop{isa=avx512 threads=0 prepack=true fallback=true}")
#: (scale, zero point, quant_min, quant_max, dtype) of the pair after the linear
OUTPUT_QUANTIZERS = [
    (0.125, 3, 0, 255, torch.uint8),
    (0.125, -5, -128, 127, torch.int8),
    (0.0625, 0, -128, 127, torch.int8),
    (0.003, -7, -32768, 32767, torch.int16),
    (0.05, 250, 0, 255, torch.uint8),
    (1e-39, 5, 0, 255, torch.uint8),  # 1/scale overflows float32: x * inf
]


class RequantizedLinear(nn.Module):
    """uint8 input -> int8 linear (+ bias) (+ residual) (-> relu) -> quantize -> dequantize."""

    w: torch.Tensor
    s: torch.Tensor
    z: torch.Tensor
    b: torch.Tensor

    def __init__(self, k: int, n: int, out_q: tuple[float, int, int, int, torch.dtype], seed: int,
                 zero_weight: bool = False, relu: bool = False) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)
        self.register_buffer("w", torch.zeros_like(w) if zero_weight else w)
        self.register_buffer("s", torch.rand(n, generator=g) * 0.01 + 1e-4)
        self.register_buffer("z", torch.zeros(n, dtype=torch.int64))
        self.register_buffer("b", (torch.randint(-40, 40, (n,), generator=g) * 0.0625).float())
        self.out_q = out_q
        self.relu = relu

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        x = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.03, 128, 0, 255, torch.uint8), 0.03, 128, 0, 255, torch.uint8)
        w = qd.dequantize_per_channel(self.w, self.s, self.z, 0, -128, 127, torch.int8)
        y = nn.functional.linear(x, w, self.b) + r
        if self.relu:
            y = torch.relu(y)
        scale, zp, low, high, dtype = self.out_q
        return qd.dequantize_per_tensor(qd.quantize_per_tensor(y, scale, zp, low, high, dtype), scale, zp, low, high, dtype)


def _residual(rows: int, n: int, scale: float, seed: int) -> torch.Tensor:
    """Values on the output quantizer's ties (k + 0.5 quanta, exact for a power-of-two scale),
    beyond both bounds, the infinities, NaN, both zeros, and random ones."""
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(rows, n, generator=g) * 300 * scale
    special = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e30, -1e30]
    special += [(k + 0.5) * scale for k in range(-6, 7)]
    flat = r.view(-1)
    n_special = min(len(special), flat.numel())
    flat[:n_special] = torch.tensor(special[:n_special])
    return r


@needs_vnni
@pytest.mark.parametrize("out_q", OUTPUT_QUANTIZERS, ids=lambda q: f"{q[4]}-zp{q[1]}-s{q[0]:g}")
@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
def test_fused_pair_is_eager_bit_for_bit_where_the_gemm_is_exact(out_q: tuple[float, int, int, int, torch.dtype],
                                                                  relu: bool) -> None:
    """A zero weight makes the GEMM's output the bias exactly, in eager and in the kernel: the
    requantized residual sum must then be eager's, bit for bit, every special value included."""
    model = RequantizedLinear(19, 37, out_q, seed=1, zero_weight=True, relu=relu)
    x = torch.randn(5, 19, generator=torch.Generator().manual_seed(2))
    r = _residual(5, 37, out_q[0] if out_q[0] > 1e-30 else 0.125, seed=3)
    compiled = ziggurat.compile(model, (x, r), backend="cpu", isa="avx512")
    stats = compiled.report.pass_stats.get("fuse-requantize", {})
    assert stats.get("pairs fused into int8 GEMMs") == 1, compiled.report.format()
    assert stats.get("pairs stored as uint8") == 1, stats  # the input's pair: its integers, cast
    assert not compiled.report.fallback_ops, compiled.report.format()
    got, want = compiled(x, r), model(x, r)
    assert torch.equal(float32_bits(got), float32_bits(want)), (got - want).abs().nan_to_num().max()


@needs_vnni
@pytest.mark.parametrize("seed", range(6))
def test_fused_pair_is_the_unfused_pair_bit_for_bit(seed: int) -> None:
    """Random int8 weights, odd sizes: the epilogue's pair is the pair's own kernel, bit for bit."""
    rng = random.Random(seed)
    k, n, rows = rng.choice([3, 17, 64, 133]), rng.choice([1, 5, 32, 45, 70]), rng.choice([1, 7, 65])
    out_q = OUTPUT_QUANTIZERS[seed % len(OUTPUT_QUANTIZERS)]
    model = RequantizedLinear(k, n, out_q, seed=seed, relu=bool(seed % 2))
    x = torch.randn(rows, k, generator=torch.Generator().manual_seed(seed + 10)) * 2
    r = _residual(rows, n, 0.125, seed + 20)
    fused = ziggurat.compile(model, (x, r), backend="cpu", isa="avx512")
    unfused = ziggurat.compile(model, (x, r), backend="cpu", isa="avx512", passes=UNFUSED)
    assert fused.report.pass_stats.get("fuse-requantize", {}).get("pairs fused into int8 GEMMs") == 1
    assert "fuse-requantize" not in unfused.report.pass_stats
    got, want = fused(x, r), unfused(x, r)
    assert torch.equal(float32_bits(got), float32_bits(want))
    # and eager's, but where a sum sits on a quantizer's rounding boundary (one quantum)
    err = (got - model(x, r)).abs().nan_to_num()
    assert float(err.max()) <= out_q[0] * 1.0001 or out_q[0] < 1e-30


@pytest.mark.parametrize("out_q", OUTPUT_QUANTIZERS[:4] + OUTPUT_QUANTIZERS[5:], ids=lambda q: f"{q[4]}-zp{q[1]}")
def test_interpreter_requantize_is_the_pairs_ops(out_q: tuple[float, int, int, int, torch.dtype]) -> None:
    """The reference semantics of ``#fused.requantize`` (``ir/interpreter/fused_functions.py``)
    against the decomposed pair's ops, both interpreted: bit for bit."""
    model = RequantizedLinear(17, 33, out_q, seed=4, relu=True)
    x = torch.randn(6, 17, generator=torch.Generator().manual_seed(5))
    r = _residual(6, 33, 0.125, seed=6)
    graph = "graph-opt,prepack-weights{isa=avx512 int8=true}"
    fused, unfused = import_model(model, (x, r)), import_model(model, (x, r))
    run_pipeline(fused, parse_pipeline(graph + ",fuse-requantize"))
    run_pipeline(unfused, parse_pipeline(graph))
    assert "fused.requantize" in str(fused) and "fused.requantize" not in str(unfused)
    got, want = run(fused, [x, r])[0], run(unfused, [x, r])[0]
    assert torch.equal(float32_bits(got), float32_bits(want))


def test_int8_op_without_its_kernel_runs_the_post_op_in_torch() -> None:
    """int8 packing forced on the avx2 ISA (no int8 kernel there): the requantized linear runs in
    torch, where the reference semantics apply ``#fused.requantize``: eager's result bit for bit
    (its linear is eager's on the unpacked weight)."""
    out_q = OUTPUT_QUANTIZERS[1]
    model = RequantizedLinear(23, 41, out_q, seed=7, relu=True)
    x = torch.randn(9, 23, generator=torch.Generator().manual_seed(8))
    r = _residual(9, 41, out_q[0], seed=9)
    passes = ("graph-opt,widen-half-floats,prepack-weights{isa=avx2 int8=true},fuse-requantize,convert-fused-to-kernel,"
              "kernel-fuse,kernel-layout,convert-kernel-to-loop{isa=avx2 threads=0 prepack=true fallback=true}")
    compiled = ziggurat.compile(model, (x, r), backend="cpu", isa="avx2", passes=passes)
    assert compiled.report.pass_stats.get("fuse-requantize", {}).get("pairs fused into int8 GEMMs") == 1
    assert "fused.linear" in compiled.report.fallback_ops, compiled.report.format()
    got, want = compiled(x, r), model(x, r)
    assert torch.equal(float32_bits(got), float32_bits(want))


@needs_vnni
@pytest.mark.parametrize(("c", "hw", "seed"), [(5, (6, 6), 0), (16, (7, 9), 1), (33, (5, 5), 2)])
def test_uint8_values_between_int8_ops_are_the_float_pipeline_bit_for_bit(c: int, hw: tuple[int, int], seed: int) -> None:
    """Values stored as uint8 (``#fused.quantize``), read as an input (1x1, 3x3 gathers with
    padding and stride, a linear) and as a residual: the result is the all-float32 pipeline's
    (no fuse-requantize) bit for bit, and eager's within a quantum's effect."""
    model = Uint8Chain(c, seed, hw)
    x = torch.randn(2, 3, *hw, generator=torch.Generator().manual_seed(seed)) * 2
    fused = ziggurat.compile(model, (x,), backend="cpu", isa="avx512")
    stats = fused.report.pass_stats.get("fuse-requantize", {})
    assert stats.get("pairs fused into int8 GEMMs") == 3 and stats.get("results stored as uint8") == 3, stats
    assert stats.get("pairs stored as uint8") == 2, stats  # the input's, the one after the flatten
    assert not fused.report.fallback_ops, fused.report.format()
    unfused = ziggurat.compile(model, (x,), backend="cpu", isa="avx512", passes=UNFUSED)
    got = fused(x)
    assert torch.equal(float32_bits(got), float32_bits(unfused(x)))
    assert float((got - model(x)).abs().max()) <= 0.07 * 0.005 * 128 * 9 * 4


def test_uint8_values_in_torch_are_the_pairs() -> None:
    """The same chain with int8 packing forced on avx2 (no int8 kernel): every int8 op runs in
    torch, reading the uint8 inputs and residual and storing them through the reference
    semantics; eager's result bit for bit."""
    model = Uint8Chain(6, 3, (6, 7))
    x = torch.randn(1, 3, 6, 7, generator=torch.Generator().manual_seed(4))
    passes = ("graph-opt,widen-half-floats,prepack-weights{isa=avx2 int8=true},fuse-requantize,convert-fused-to-kernel,"
              "kernel-fuse,kernel-layout,convert-kernel-to-loop{isa=avx2 threads=0 prepack=true fallback=true}")
    compiled = ziggurat.compile(model, (x,), backend="cpu", isa="avx2", passes=passes)
    assert compiled.report.pass_stats.get("fuse-requantize", {}).get("results stored as uint8") == 3
    got, want = compiled(x), model(x)
    assert torch.equal(float32_bits(got), float32_bits(want))


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
@pytest.mark.parametrize(("c", "expand", "stride", "hw"), [(4, 6, 1, (9, 11)), (16, 6, 2, (14, 14)), (24, 4, 1, (7, 5))])
def test_depthwise_reads_and_writes_uint8_bit_for_bit(isa: str, c: int, expand: int, stride: int, hw: tuple[int, int]) -> None:
    """The native depthwise kernel reads the expansion's uint8 values (dequantized as eager's
    pair) and quantizes its own output in its epilogue (the projection reads bytes): the result
    is the all-float32 pipeline's bit for bit, on avx512 (int8 1x1 convolutions around it) and
    on avx2 (float32 ones: the pairs stop at their integers for the depthwise kernel alone)."""
    if isa == "avx512" and not VNNI:
        pytest.skip("this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")
    model = InvertedResidual(c, expand, stride, seed=c)
    x = torch.randn(2, c, *hw, generator=torch.Generator().manual_seed(c + 1)) * 2
    fused = ziggurat.compile(model, (x,), backend="cpu", isa=isa)
    stats = fused.report.pass_stats.get("fuse-requantize", {})
    assert stats.get("pairs fused into depthwise convolutions") == 1, stats
    assert not fused.report.fallback_ops, fused.report.format()
    if isa == "avx512":
        assert stats.get("results stored as uint8") == 2, stats  # the expansion's and the depthwise's
    else:
        assert stats.get("pairs stored as uint8") == 1, stats  # the pair the depthwise reads
    unfused = ziggurat.compile(model, (x,), backend="cpu", isa=isa, passes=UNFUSED.replace("avx512", isa))
    got = fused(x)
    assert torch.equal(float32_bits(got), float32_bits(unfused(x)))
    assert float((got - model(x)).abs().max()) <= 0.2


class BiasIsTheInput(QuantizedStack):
    """``linear(x, W, bias=x)`` of a quantized ``x``: the pair's value is also a bias, which the int8
    kernel reads as floats, so it must stay float32."""

    def __init__(self, n: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(n)
        self.w = [int8_weight(g, n, n)]
        self.q = [(0.03, 128)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xq = self._pair(x, 0)
        return nn.functional.linear(xq, self._w(0), xq)


@needs_vnni
def test_a_value_read_as_a_bias_stays_float32() -> None:
    model = BiasIsTheInput(7)
    x = torch.randn(7, generator=torch.Generator().manual_seed(1))
    compiled = ziggurat.compile(model, (x,), backend="cpu", isa="avx512")
    assert "pairs stored as uint8" not in compiled.report.pass_stats.get("fuse-requantize", {})
    assert not compiled.report.fallback_ops, compiled.report.format()
    unfused = ziggurat.compile(model, (x,), backend="cpu", isa="avx512", passes=UNFUSED)
    assert torch.equal(float32_bits(compiled(x)), float32_bits(unfused(x)))
