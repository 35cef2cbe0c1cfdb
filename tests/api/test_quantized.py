"""PT2E-quantized models (issue 17, INT8): their quantize/dequantize ops run natively as the
float32 arithmetic they are (``decompose-quantize``), the weights' dequantizations fold into
float32 literals, and the results are eager's."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)

import ziggurat
from tests.support.host import ISAS, host_isas
from tests.support.quantized_models import QuantizedMlp

qd = torch.ops.quantized_decomposed
BACKENDS = [("reference", {}), ("tensorrt-reference", {}),
            *(pytest.param("cpu", {"isa": isa}, marks=pytest.mark.skipif(isa not in host_isas(), reason=f"host has no {isa}"))
              for isa in ISAS)]
IDS = ["reference", "tensorrt-reference", *(f"cpu-{isa}" for isa in ISAS)]


class FakeQuant(torch.nn.Module):
    """quantize -> dequantize pairs as PT2E writes them: uint8 with a zero point, int8
    symmetric, a wide int16 one, and one whose 1/scale overflows float32."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.05, 3, 0, 255, torch.uint8), 0.05, 3, 0, 255, torch.uint8)
        b = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.1, 0, -128, 127, torch.int8), 0.1, 0, -128, 127, torch.int8)
        c = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.003, -7, -32768, 32767, torch.int16), 0.003, -7, -32768, 32767, torch.int16)
        # 1/scale overflows float32: 0 * inf is NaN there, so NaN is tested on the clamped value
        d = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 1e-39, 5, 0, 255, torch.uint8), 1e-39, 5, 0, 255, torch.uint8)
        return a, b, c, d


def _edge_values(rows: int, cols: int) -> torch.Tensor:
    """Normal values, the ties of round-half-even (k + 0.5 quanta), both zeros, values just
    outside the bounds, the infinities and NaN."""
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(0)) * 4
    special = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -0.01, 0.025, 0.075, 0.125, -0.025,
               0.05 * 252.5, 0.05 * 253.5, 1e30, -1e30, 0.15, 12.6, -12.8, -12.85]
    n = min(len(special), rows * cols)
    x.view(-1)[:n] = torch.tensor(special[:n])
    return x


@pytest.mark.parametrize(("backend", "options"), BACKENDS, ids=IDS)
@pytest.mark.parametrize("shape", [(3, 37), (1, 1), (2, 5, 17)], ids=["3x37", "1x1", "2x5x17"])
def test_quantize_dequantize_pair_is_eager_bit_for_bit(backend: str, options: dict[str, Any], shape: tuple[int, ...]) -> None:
    x = _edge_values(shape[0], int(torch.tensor(shape[1:]).prod())).reshape(shape)
    compiled = ziggurat.compile(FakeQuant(), (x,), backend=backend, **options)
    if backend == "cpu":
        assert not compiled.report.fallback_ops, compiled.report.format()
    for got, want in zip(compiled(x), FakeQuant()(x), strict=True):
        assert got.dtype == want.dtype
        assert torch.equal(got.view(torch.int32), want.view(torch.int32)), (got - want).abs().max()


class QuantizedNet(torch.nn.Module):
    """What ``convert_pt2e`` makes of conv -> relu -> linear: int8 per-channel weights
    dequantized in the graph, uint8 activations between quantize/dequantize pairs."""

    wc: torch.Tensor
    sc: torch.Tensor
    bc: torch.Tensor
    wl: torch.Tensor
    sl: torch.Tensor
    zero: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.register_buffer("wc", torch.randint(-128, 128, (8, 3, 3, 3), dtype=torch.int8, generator=g))
        self.register_buffer("sc", torch.rand(8, generator=g) * 0.002 + 0.001)
        self.register_buffer("bc", torch.randn(8, generator=g) * 0.1)
        self.register_buffer("wl", torch.randint(-128, 128, (5, 8 * 5 * 7), dtype=torch.int8, generator=g))
        self.register_buffer("sl", torch.rand(5, generator=g) * 0.001 + 0.0005)
        self.register_buffer("zero", torch.zeros(8, dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.03, 128, 0, 255, torch.uint8), 0.03, 128, 0, 255, torch.uint8)
        w = qd.dequantize_per_channel(self.wc, self.sc, self.zero, 0, -128, 127, torch.int8)
        y = torch.relu(torch.nn.functional.conv2d(x, w, self.bc))
        y = qd.dequantize_per_tensor(qd.quantize_per_tensor(y, 0.01, 0, 0, 255, torch.uint8), 0.01, 0, 0, 255, torch.uint8)
        wl = qd.dequantize_per_channel(self.wl, self.sl, self.zero[:5], 0, -128, 127, torch.int8)
        return torch.nn.functional.linear(y.flatten(1), wl)


@pytest.mark.parametrize(("backend", "options"), BACKENDS, ids=IDS)
def test_quantized_net_runs_natively_within_one_quantum(backend: str, options: dict[str, Any]) -> None:
    """Weights fold to float32 literals, so the convolution and the linear run on the float32
    kernels.  Their sums run in another order than eager's, so a value that sits on a
    rounding boundary of the next quantize can land one quantum (0.01) away: the output may
    differ by one quantum times a weight row's largest scale, and must elsewhere be eager's
    to float32 rounding."""
    model = QuantizedNet()
    x = torch.randn(3, 3, 7, 9, generator=torch.Generator().manual_seed(2))
    compiled = ziggurat.compile(model, (x,), backend=backend, **options)
    if backend == "cpu":
        assert not compiled.report.fallback_ops, compiled.report.format()
        assert "quantized_decomposed" not in str(compiled.ir["graph"])
    got, want = compiled(x), model(x)
    assert isinstance(got, torch.Tensor)
    quantum_effect = 0.01 * float(model.sl.max()) * 128
    err = (got - want).abs()
    assert float(err.max()) <= 4 * quantum_effect, float(err.max())
    assert float((err > 1e-5).float().mean()) < 0.2


def test_quantized_module_saves_and_loads(tmp_path: object) -> None:
    import pathlib

    path = pathlib.Path(str(tmp_path)) / "q.zig"
    x = _edge_values(2, 19)
    compiled = ziggurat.compile(FakeQuant(), (x,), backend="cpu")
    compiled.save(path)
    loaded = ziggurat.load(path)
    for got, want in zip(loaded(x), FakeQuant()(x), strict=True):
        assert torch.equal(got.view(torch.int32), want.view(torch.int32))


def _pt2e_quantized(model: torch.nn.Module, x: torch.Tensor) -> torch.nn.Module:
    pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e",
                               reason="torchao (the test extra) holds PT2E quantization since torch 2.10")
    xiq = pytest.importorskip("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")
    exported = torch.export.export(model.eval(), (x,)).module()
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config())
    prepared = pt2e.prepare_pt2e(exported, quantizer)
    prepared(x)
    return pt2e.convert_pt2e(prepared)


@pytest.mark.parametrize("backend", ["reference", "cpu", "tensorrt-reference"])
def test_pt2e_x86_inductor_quantizer_model(backend: str) -> None:
    """The GraphModule ``convert_pt2e`` returns (whose ``eval()`` raises) compiles; no op of
    it runs in torch on the CPU backend."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Conv2d(16, 8, 3, padding=1),
                                torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 10))
    x = torch.randn(2, 3, 8, 8)
    quantized = _pt2e_quantized(model, x)
    compiled = ziggurat.compile(quantized, (x,), backend=backend)
    if backend == "cpu":
        assert not compiled.report.fallback_ops, compiled.report.format()
    got, want = compiled(x), quantized(x)
    got, want = got.detach(), want.detach()
    scale = float(want.abs().max())
    assert float((got - want).abs().max()) <= 0.02 * scale
    assert float((got - model(x)).abs().max()) <= 0.1 * scale  # still the float model, roughly


@pytest.mark.parametrize("isa", [i for i in ISAS[:2] if i in host_isas()])
@pytest.mark.parametrize("shape", [(1, 133), (3, 7, 133), (65, 133)], ids=["1", "3x7", "65"])
def test_quantized_linears_take_the_int8_kernel_where_the_host_has_vnni(isa: str, shape: tuple[int, ...]) -> None:
    """On avx512 with AVX512-VNNI the linears run on the int8 kernel (exact int32 sums); on
    avx2 on the float32 one.  Either way the result is eager's up to float32 rounding (and a
    flip of the middle quantize where a value sits on a rounding boundary)."""
    from ziggurat.backends.cpu.isa import host_features

    model = QuantizedMlp()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(6))
    compiled = ziggurat.compile(model, (x,), backend="cpu", isa=isa)
    assert not compiled.report.fallback_ops, compiled.report.format()
    int8 = isa == "avx512" and bool(host_features().get("avx512vnni"))
    assert ("int8 weights packed 2" in compiled.report.format()) == int8, compiled.report.format()
    got, want = compiled(x), model(x)
    assert isinstance(got, torch.Tensor)
    err = (got - want).abs()
    assert float(err.max()) <= 0.02 * float(model.s2.max()) * 128 * 2, float(err.max())
    assert float((err > 1e-5).float().mean()) < 0.05


def test_int8_packing_is_visible_and_the_interpreter_runs_it() -> None:
    """``prepack-weights{int8=true}`` packs the weights as ``KN32n4k`` with the input's
    quantization on the op (on any host: the lowering checks for VNNI); the reference
    interpreter runs that IR on the float32 weights the operand holds, as eager."""
    from ziggurat.backends.passes import parse_pipeline
    from ziggurat.ir.importer import import_model
    from ziggurat.ir.interpreter import run
    from ziggurat.ir.pipeline import run_pipeline

    model, x = QuantizedMlp(), torch.randn(3, 133)
    module = import_model(model, (x,))
    run_pipeline(module, parse_pipeline("graph-opt,prepack-weights{isa=avx512 int8=true}"))
    text = str(module)
    assert text.count('weight_layout = "KN32n4k"') == 2 and "ziggurat.input_quantization" in text
    (got,) = run(module, [x])
    err = (got - model(x)).abs()
    assert float(err.max()) <= 0.02 * float(model.s2.max()) * 128 * 2
    assert float((err > 1e-5).float().mean()) < 0.05


def test_int8_module_saves_loads_and_profiles(tmp_path: object) -> None:
    import pathlib

    from ziggurat.backends.cpu.profile import profile

    model, x = QuantizedMlp(), torch.randn(5, 133)
    compiled = ziggurat.compile(model, (x,), backend="cpu", profile=True)
    path = pathlib.Path(str(tmp_path)) / "int8.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    assert torch.equal(loaded(x), compiled(x))
    shapes = [row.entry.shape for row in profile(compiled).rows if row.entry.kind == "gemm"]
    from ziggurat.backends.cpu.isa import host_features

    if host_features().get("avx512vnni") and compiled.report.stats.get("isa") == "avx512":
        from ziggurat.backends.cpu.kernels import amx

        def kernel(k: int) -> str:  # the products' instructions, by depth on an AMX host
            return "amx" if amx.int8_kernel_for_depth(amx.host_int8_kernel(), k) == "amx" else "avx512vnni"

        assert shapes == [f"5x70x133 int8 {kernel(133)} relu", f"5x45x70 int8 {kernel(70)}"], shapes


def test_dynamic_batch_of_an_int8_model_is_eager_at_every_size() -> None:
    """A dynamic batch (one range build where the host has the int8 kernel, its rows at run
    time: ``tests/cpu_backend/test_range_build_int8.py``; batch 1 below its floor) is eager's
    at every size."""
    from torch.export import Dim

    model = QuantizedMlp()
    compiled = ziggurat.compile(model, (torch.randn(4, 133),), backend="cpu",
                                dynamic_shapes={"x": {0: Dim("b", min=1, max=64)}})
    for b in (1, 2, 17, 64):
        x = torch.randn(b, 133, generator=torch.Generator().manual_seed(b))
        err = (compiled(x) - model(x)).abs()
        assert float(err.max()) <= 0.02 * float(model.s2.max()) * 128 * 2

