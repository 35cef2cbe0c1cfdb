"""One range build for int8 models (issue 17): the VNNI GEMM takes its rows at run time
(``Int8GemmSpec.m_runtime``), and the depthwise kernel reading and writing uint8 its batch, so a
PT2E-quantized model over a dynamic batch or sequence builds once.  The int8 chains are the
static build of each size bit for bit (their kernels are exact, and the uint8 values between
them are integers); a PT2E-quantized BERT is eager's within a quantum's effect."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.dynamic_module import ONE_BUILD, RANGE_BUILD, SPECIALIZED

from tests.support.quantized_models import InvertedResidual, QuantizedMlp, Uint8Chain, float32_bits

pytestmark = pytest.mark.skipif(not host_features().get("avx512vnni"),
                                reason="this host has no AVX512-VNNI (the int8 kernel's vpdpbusd)")


def _same_as_static(model: torch.nn.Module, compiled: Any, x: torch.Tensor) -> None:
    static = ziggurat.compile(model, (x,), backend="cpu", isa="avx512")
    got, want = compiled(x), static(x)
    assert isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
    assert torch.equal(float32_bits(got), float32_bits(want)), (tuple(x.shape), float((got - want).abs().max()))


def test_int8_mlp_over_a_dynamic_batch_builds_once() -> None:
    model = QuantizedMlp()
    compiled = ziggurat.compile(model, (torch.randn(4, 133),), backend="cpu", isa="avx512",
                                dynamic_shapes={"x": {0: Dim("b", min=1, max=64)}})
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    assert "int8 weights packed 2" in compiled.report.format()
    for b in (2, 7, 8, 9, 17, 63, 64):
        _same_as_static(model, compiled, torch.randn(b, 133, generator=torch.Generator().manual_seed(b)))
    assert SPECIALIZED not in compiled.report.stats


def test_int8_range_build_saves_and_loads(tmp_path: object) -> None:
    """``save``/``load`` keep the range build of int8 GEMMs with a run-time ``m`` (the spec's
    ``m_runtime`` through the saved loop level), bit for bit the saved module at each size."""
    import pathlib

    model = QuantizedMlp()
    compiled = ziggurat.compile(model, (torch.randn(4, 133),), backend="cpu", isa="avx512",
                                dynamic_shapes={"x": {0: Dim("b", min=1, max=64)}})
    path = pathlib.Path(str(tmp_path)) / "int8.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    assert loaded.range_build is not None
    for b in (2, 9, 64):
        x = torch.randn(b, 133, generator=torch.Generator().manual_seed(b))
        assert torch.equal(float32_bits(loaded(x)), float32_bits(compiled(x)))
    assert SPECIALIZED not in loaded.report.stats


def test_uint8_conv_chain_over_a_dynamic_batch_builds_once() -> None:
    """Implicit-GEMM int8 convolutions (rows: the batch times the pixels), a uint8 residual and
    a flatten into int8 linears."""
    model = Uint8Chain(5, 0, (6, 7))
    compiled = ziggurat.compile(model, (torch.randn(3, 3, 6, 7),), backend="cpu", isa="avx512",
                                dynamic_shapes={"x": {0: Dim("b", min=1, max=16)}})
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    assert compiled.report.pass_stats.get("fuse-requantize", {}).get("results stored as uint8") == 3
    for b in (2, 5, 16):
        _same_as_static(model, compiled, torch.randn(b, 3, 6, 7, generator=torch.Generator().manual_seed(b)) * 2)
    assert SPECIALIZED not in compiled.report.stats


def test_inverted_residual_over_a_dynamic_batch_builds_once() -> None:
    """MobileNetV2's block: the depthwise kernel reads and writes uint8 with a run-time batch."""
    model = InvertedResidual(8, 6, 1, seed=3)
    compiled = ziggurat.compile(model, (torch.randn(3, 8, 9, 11),), backend="cpu", isa="avx512",
                                dynamic_shapes={"x": {0: Dim("b", min=1, max=16)}})
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    assert compiled.report.pass_stats.get("fuse-requantize", {}).get("pairs fused into depthwise convolutions") == 1
    floor = compiled.range_lows[0] if compiled.range_lows else 2  # below it: a build of that size
    for b in (floor, 9, 16):
        _same_as_static(model, compiled, torch.randn(b, 8, 9, 11, generator=torch.Generator().manual_seed(b)) * 2)
    assert SPECIALIZED not in compiled.report.stats


def test_pt2e_bert_over_a_dynamic_batch_and_sequence_builds_once() -> None:
    """A BERT encoder quantized with X86InductorQuantizer on a dynamic export: its int8 linears
    take the rows (batch x sequence) at run time; every size within a quantum's effect of
    eager's quantized model."""
    pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e",
                               reason="torchao (the test extra) holds PT2E quantization since torch 2.10")
    xiq = pytest.importorskip("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")
    from ziggurat.bench.zoo.bert import BertConfig, BertEncoder

    torch.manual_seed(0)
    model = BertEncoder(BertConfig(vocab_size=512, hidden=64, layers=1, heads=2, intermediate=128)).eval()
    ids = torch.randint(0, 512, (3, 17))
    dynamic = ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=96)},)
    with torch.no_grad():
        quantizer = xiq.X86InductorQuantizer()
        quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
        prepared = pt2e.prepare_pt2e(torch.export.export(model, (ids,), dynamic_shapes=dynamic).module(), quantizer)
        prepared(ids)
        quantized = pt2e.convert_pt2e(prepared)
    compiled = ziggurat.compile(quantized, (ids,), backend="cpu", isa="avx512", dynamic_shapes=dynamic)
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    assert "int8 weights packed" in compiled.report.format()
    assert not compiled.report.fallback_ops, compiled.report.format()
    with torch.no_grad():
        for shape in ((2, 5), (8, 96), (3, 41), (5, 16)):
            x = torch.randint(0, 512, shape, generator=torch.Generator().manual_seed(shape[0] * 100 + shape[1]))
            got, want = compiled(x), quantized(x)
            # a value on a quantizer's rounding boundary may land one quantum away (as static builds)
            assert float((got - want).abs().max()) <= 0.02 * float(want.abs().max()), shape
            # a flip moves its token's whole row (layer norm): few rows, as a static build's
            assert float((got - want).abs().gt(1e-4).any(-1).float().mean()) < 0.05, shape
        x = torch.randint(0, 512, (3, 41), generator=torch.Generator().manual_seed(341))
        static = ziggurat.compile(quantized, (x,), backend="cpu", isa="avx512")
        torch.testing.assert_close(compiled(x), static(x), rtol=1e-5, atol=1e-5)  # float ops' rounding only
    assert SPECIALIZED not in compiled.report.stats


def test_profile_marks_gemms_whose_sizes_come_at_run_time() -> None:
    """A range build's GEMM rows show the largest shape they are planned for, marked, and no
    GFLOP/s (it would count the largest size's flops at every call: 38,000 GFLOP/s on BERT)."""
    from ziggurat.backends.cpu.profile import profile

    compiled = ziggurat.compile(QuantizedMlp(), (torch.randn(4, 133),), backend="cpu", isa="avx512", profile=True,
                                dynamic_shapes={"x": {0: Dim("b", min=1, max=64)}})
    compiled(torch.randn(9, 133))
    rows = [row for row in profile(compiled.range_build).rows if row.entry.kind == "gemm"]
    def kernel(k: int) -> str:  # the products' instructions, by depth on an AMX host
        return "amx" if amx.int8_kernel_for_depth(amx.host_int8_kernel(), k) == "amx" else "avx512vnni"

    assert [row.entry.shape for row in rows] == [f"at most 64x70x133 int8 {kernel(133)} relu (sizes at run time)",
                                                 f"at most 64x45x70 int8 {kernel(70)} (sizes at run time)"]
    assert all(row.gflops == 0.0 for row in rows)
