"""PT2E quantize -> dequantize pairs and int8 weights as TensorRT Q/DQ layers
(``converters/quantization.py``, ``ConversionContext``'s folded int8 weights), run by the
reference executor: each pair is eager's bit for bit, at ties, NaN, infinities and saturation."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
from xdsl.dialects.func import FuncOp

import ziggurat
from ziggurat.backends.tensorrt.network_plan import DataTypeRef
from ziggurat.backends.tensorrt.emitter import plan_network
from ziggurat.dialects.trt import ActivationOp, DequantizeOp, QuantizeOp, SelectOp
from ziggurat.ir.interpreter.trt_layers.quantization import quantize
from ziggurat.passes.decompose_quantize import int8_rows
from ziggurat.tests.support.quantized_models import Uint8Chain, float32_bits, qd
from trt_builders import constant, run_layer

#: (dtype, zero point, quant_min, quant_max) -> (Q/DQ layers?, a clip?, a NaN select?)
PAIRS: dict[str, tuple[tuple[torch.dtype, int, int, int], tuple[bool, bool, bool]]] = {
    "int8-symmetric": ((torch.int8, 0, -128, 127), (True, False, False)),
    "int8-restricted": ((torch.int8, 0, -127, 127), (True, True, True)),
    "int8-narrow": ((torch.int8, 0, -100, 27), (True, True, True)),
    "uint8-zp128": ((torch.uint8, 128, 0, 255), (True, False, True)),
    "uint8-zp120-narrow": ((torch.uint8, 120, 0, 200), (True, True, True)),
    "uint8-zp3": ((torch.uint8, 3, 0, 255), (False, False, False)),
    "uint8-zp0": ((torch.uint8, 0, 0, 255), (False, False, False)),
    "int8-zp5": ((torch.int8, 5, -128, 127), (False, False, False)),
}


class Pair(torch.nn.Module):
    def __init__(self, scale: float, dtype: torch.dtype, zp: int, lo: int, hi: int) -> None:
        super().__init__()
        self.args = (scale, zp, lo, hi, dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return qd.dequantize_per_tensor(qd.quantize_per_tensor(x, *self.args), *self.args)


def near_ties(scale: float) -> torch.Tensor:
    """Float32 values at and next to ``(k + 0.5) * scale``: where ``round(x / scale)`` and
    eager's ``round(x * (1 / scale))`` part, for some of them."""
    x = ((torch.arange(-140, 140, dtype=torch.float64) + 0.5) * scale).float()
    return torch.cat([x, torch.nextafter(x, x + 1), torch.nextafter(x, x - 1)])


def pair_inputs(scale: float) -> torch.Tensor:
    g = torch.Generator().manual_seed(7)
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 3e38, -3e38, 1e-30, -1e-30, 5e-39,
                            127.5 * scale, -128.5 * scale, 200 * scale, -200 * scale])
    random = torch.randn(5 * 7 * 11, generator=g) * scale * 90
    return torch.cat([near_ties(scale), special, random]).reshape(-1, 7)  # a ragged 7 inner dim


def _trt_ops(compiled: Any, kind: type) -> list[Any]:
    return [op for op in compiled.module_ir.walk() if isinstance(op, kind)]


@pytest.mark.parametrize("scale", [0.03, 0.013, 0.1])
@pytest.mark.parametrize("name", list(PAIRS))
def test_pair_is_eager_bit_for_bit(name: str, scale: float) -> None:
    (dtype, zp, lo, hi), (layers, clip, guard) = PAIRS[name]
    model = Pair(scale, dtype, zp, lo, hi)
    x = pair_inputs(scale)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1)
    assert torch.equal(float32_bits(compiled(x)), float32_bits(model(x)))
    assert bool(_trt_ops(compiled, QuantizeOp)) == layers
    assert bool(_trt_ops(compiled, DequantizeOp)) == layers
    clips = [op for op in _trt_ops(compiled, ActivationOp) if "(clamp)" in op.layer]
    assert bool(clips) == clip
    assert bool(_trt_ops(compiled, SelectOp)) == (guard if layers else True)  # the float layers' where


@pytest.mark.parametrize("scale", [0.03, 0.013, 0.1])
def test_dividing_by_the_scale_would_round_some_ties_otherwise(scale: float) -> None:
    """Why the layers quantize ``x * (1 / scale)`` by 1 rather than ``x`` by the scale: the
    inputs above hold values that TensorRT's documented ``x / scale`` rounds the other way."""
    x = near_ties(scale)
    eager = torch.round(x * torch.tensor(1.0 / scale, dtype=torch.float32))
    divided = quantize(x, torch.tensor(scale, dtype=torch.float32)).float()
    inside = eager.abs() <= 127
    assert bool((eager[inside] != divided[inside]).any())


@pytest.mark.parametrize("kept", ["aten::round", "aten::clamp", "aten::eq.Tensor", "aten::where.ScalarOther",
                                  "aten::sub.Scalar"])
def test_pair_split_by_torch_executed_ops_stays_float_layers(kept: str) -> None:
    """With one of the pair's ops left to torch, its last product builds no Q/DQ (that would
    compute the op the user kept in torch) and converts as the product it is."""
    model = Pair(0.03, torch.uint8, 128, 0, 255)
    x = pair_inputs(0.03)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1,
                                torch_executed_ops=[kept])
    assert any(kept in op for op in compiled.report.fallback_ops), compiled.report.format()
    assert torch.equal(float32_bits(compiled(x)), float32_bits(model(x)))
    assert not _trt_ops(compiled, QuantizeOp)


def test_reference_quantize_and_dequantize_layers() -> None:
    """IQuantizeLayer: half to even, saturated, NaN -> 0; IDequantizeLayer per channel."""
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 1000.0, -1000.0, float("nan"), float("inf"), -float("inf")])
    q = quantize(x, torch.tensor(1.0))
    assert q.tolist() == [0, 2, 2, 0, -2, 127, -128, 0, 127, -128] and q.dtype == torch.int8
    q8 = torch.tensor([[1, -2, 127], [-128, 0, 3]], dtype=torch.int8)
    scales = torch.tensor([0.5, 0.25, 3.0])
    got = run_layer([q8], lambda v: DequantizeOp(v, constant(scales, "s"), name="dq", axis=1).output)
    assert torch.equal(got, q8.float() * scales)
    quantized = run_layer([torch.tensor([[0.74, 0.76, -1e9]])],
                          lambda v: QuantizeOp(v, constant(torch.tensor(0.5), "s"), name="q").output)
    assert quantized.tolist() == [[1, 2, -128]]


def test_int8_rows_takes_a_folded_weight_back_exactly() -> None:
    g = torch.Generator().manual_seed(3)
    w8 = torch.randint(-128, 128, (6, 3, 2, 2), dtype=torch.int8, generator=g)
    w8[0, 0, 0, 0] = 0
    scales = torch.rand(6, generator=g) * 0.01 + 1e-3
    folded = w8.float() * scales.reshape(-1, 1, 1, 1)
    back = int8_rows(folded, scales)
    assert back is not None and torch.equal(back, w8)
    assert int8_rows(folded + 1e-7, scales) is None  # not multiples of the scales
    assert int8_rows(folded * 200, scales) is None  # past int8
    negative_zero = folded.clone()
    negative_zero[w8 == 0] = -0.0
    assert int8_rows(negative_zero, scales) is None  # -0.0 is no int8 times a scale
    nan = folded.clone()
    nan[0, 0, 0, 0] = float("nan")
    assert int8_rows(nan, scales) is None


def _symmetric_int8_pt2e(model: torch.nn.Module, x: torch.Tensor) -> Any:
    """PT2E with symmetric int8 activations (zero point 0) and per-channel int8 weights: the
    quantization TensorRT runs in int8 (torchao's XNNPACK config, activations made symmetric)."""
    xnnpack = pytest.importorskip("torchao.testing.pt2e._xnnpack_quantizer")
    pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")
    config = xnnpack.get_symmetric_quantization_config(is_per_channel=True)
    activation = dataclasses.replace(config.input_activation, qscheme=torch.per_tensor_symmetric)
    config = dataclasses.replace(config, input_activation=activation, output_activation=activation)
    with torch.no_grad():
        exported = torch.export.export(model.eval(), (x,), strict=True).module()
        prepared = pt2e.prepare_pt2e(exported, xnnpack.XNNPACKQuantizer().set_global(config))
        prepared(x)
        return pt2e.convert_pt2e(prepared)


def test_symmetric_pt2e_model_is_int8_layers_end_to_end() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Conv2d(16, 8, 3, padding=1),
                                torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 10))
    x = torch.randn(2, 3, 8, 8)
    quantized = _symmetric_int8_pt2e(model, x)
    compiled = ziggurat.compile(quantized, (x,), backend="tensorrt-reference", min_block_size=1)
    assert not compiled.report.fallback_ops, compiled.report.format()
    quantizes, dequantizes = _trt_ops(compiled, QuantizeOp), _trt_ops(compiled, DequantizeOp)
    assert len(quantizes) == 5  # the input, after the relu, after the conv, after the flatten, the output
    weights = [op for op in dequantizes if op.axis_value == 0]
    assert len(weights) == 3 and all(str(op.input.type).endswith("xi8>") for op in weights)
    readers = {use.operation.name for op in weights for use in op.output.uses}
    assert readers == {"trt.convolution", "trt.matrix_multiply"}
    got, want = compiled(x), quantized(x)
    # the float convolutions of the reference may round a sum the other way, moving a later
    # pair by one quantum; the output is one pair's quanta
    scale = float(want.abs().max())
    assert float((got - want).abs().max()) <= 0.02 * scale
    plan = plan_network(next(f for f in compiled.module_ir.walk()
                             if isinstance(f, FuncOp) and "ziggurat.backend" in f.attributes))
    calls = {call.method: call for call in plan.layers}
    assert calls["add_quantize"].args[2] == DataTypeRef.of(torch.int8)
    assert calls["add_dequantize"].args[2] == DataTypeRef.of(torch.float32)
    assert any(("axis", 0) in call.attributes for call in plan.layers if call.method == "add_dequantize")


def test_x86_inductor_pairs_keep_float_layers_but_take_int8_weights() -> None:
    """X86InductorQuantizer's uint8 activations with zero points other than 128 do not fit
    int8: their pairs stay float32 layers (eager's numbers), and only the zero point 128 pair
    becomes Q/DQ; every int8 weight is an int8 constant and a dequantize."""
    model = Uint8Chain(4, seed=1)
    x = torch.randn(2, 3, 6, 6)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1)
    assert len(_trt_ops(compiled, QuantizeOp)) == 1
    weights = [op for op in _trt_ops(compiled, DequantizeOp) if op.axis_value == 0]
    assert len(weights) == 5
    got, want = compiled(x), model(x)
    assert float((got - want).abs().max()) <= 0.02 * float(want.abs().max())
    counts = {"int8 weights as int8 constants and a dequantize": 5, "quantize-dequantize pairs as int8 Q/DQ layers": 1,
              "quantize-dequantize pairs kept float32 (their integers do not fit int8 without a zero point)": 4}
    assert compiled.report.pass_stats["convert-torch-to-trt"] == counts
    explained = ziggurat.explain(model, (x,), backend="tensorrt", min_block_size=1)
    assert "quantize-dequantize pairs kept float32" in explained.stats["TensorRT int8"]


def test_qdq_segments_save_and_load(tmp_path: Any) -> None:
    """The saved IR holds the Q/DQ layers and int8 constants; the loaded module runs them."""
    model = Uint8Chain(4, seed=2)
    x = torch.randn(2, 3, 6, 6)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1)
    path = tmp_path / "qdq.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    assert torch.equal(float32_bits(loaded(x)), float32_bits(compiled(x)))
    assert len(_trt_ops(loaded, QuantizeOp)) == 1 and len(_trt_ops(loaded, DequantizeOp)) == 6


def test_qdq_layers_take_a_dynamic_batch() -> None:
    """Q/DQ layers are modelled on ``?`` dims (the per-channel axis of a weight is static):
    a dynamic batch converts, and every size of the profile runs."""
    from torch.export import Dim

    model = Uint8Chain(4, seed=1)
    x = torch.randn(2, 3, 6, 6)
    compiled = ziggurat.compile(model, (x,), backend="tensorrt-reference", min_block_size=1,
                                dynamic_shapes=({0: Dim("n", min=1, max=8)},))
    assert compiled.report.pass_stats["convert-torch-to-trt"]["quantize-dequantize pairs as int8 Q/DQ layers"] == 1
    for n in (1, 3, 8):
        xi = torch.randn(n, 3, 6, 6, generator=torch.Generator().manual_seed(n))
        want = model(xi)
        assert float((compiled(xi) - want).abs().max()) <= 1e-5 * float(want.abs().max())
