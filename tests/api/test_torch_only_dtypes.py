"""Complex, quantized and float8 tensors (issue 15, item 4): they import as typed values
(``complex<f32>``, ``!torch.quantized<quint8>``, ``f8E4M3FN``), every op reading or writing
one runs in torch through the fallback (with the reason in the report), and the compiled
module matches eager on every backend and both frontends: model inputs and outputs of these
types, constants (a complex buffer, a quantized one), save and load."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from ziggurat.ir.errors import ModelImportError, InputError
from ziggurat.ir.types import (
    IMPORTABLE_DTYPES,
    QUANTIZED_DTYPES,
    TORCH_ONLY_DTYPES,
    element_type,
    example_tensor,
    format_type,
    parse_type_list,
    tensor_type,
    torch_dtype,
    torch_only_reason,
)

BACKENDS = ("cpu", "tensorrt-reference", "reference")
FRONTENDS = ("export", "torchscript")

warnings.filterwarnings("ignore", message=".*quantize.*deprecated", category=UserWarning)


class RfftAbs(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.rfft(x).abs() + 1


class FftRoundTrip(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.ifft(torch.fft.fft(x)).real * 2


class ViewAsComplexReal(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.view_as_complex(x) * 2) + 1


class Polar(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.polar(a.abs(), b)) * 3


class ComplexMul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.view_as_complex(a) * torch.view_as_complex(b))


class StftAbs(torch.nn.Module):
    window: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("window", torch.hann_window(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stft(x, n_fft=8, hop_length=2, window=self.window, return_complex=True).abs()


class QuantizeDequantize(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.dequantize(torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)) * 2


class QuantizePerChannelIntRepr(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = torch.quantize_per_channel(x, torch.tensor([0.1, 0.2, 0.3, 0.4]), torch.tensor([1, 2, 3, 4]), 0,
                                       torch.qint8)
        return q.int_repr()


class MakePerTensorQuantized(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = torch._make_per_tensor_quantized_tensor(x, 0.5, 2)  # pyright: ignore[reportPrivateImportUsage]
        return q.dequantize() + 1, q.int_repr()


class Float8RoundTrip(torch.nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.dtype = dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(self.dtype).to(torch.float32) * 2


class ComplexInOut(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return z * 2, z.abs() + 1


class ComplexBuffer(torch.nn.Module):
    w: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("w", torch.randn(4, dtype=torch.complex64, generator=torch.Generator().manual_seed(1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(torch.fft.fft(x) * self.w) + 1


class QuantizedBuffers(torch.nn.Module):
    """A per-tensor and a per-channel quantized constant (rebuilt from their integers)."""

    q: torch.Tensor
    c: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(2)
        self.register_buffer("q", torch.quantize_per_tensor(torch.randn(4, 4, generator=g), 0.1, 3, torch.quint8))
        self.register_buffer("c", torch.quantize_per_channel(torch.randn(4, 4, generator=g), torch.tensor(
            [0.1, 0.2, 0.3, 0.4], dtype=torch.float64), torch.tensor([0, 1, -1, 2]), 1, torch.qint8))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q.dequantize() + x, self.c.int_repr()


class QuantizedInput(torch.nn.Module):
    def forward(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return q.dequantize() * 2, q.int_repr()


@dataclass(frozen=True)
class Program:
    make: Callable[[], torch.nn.Module]
    inputs: Callable[[], tuple[torch.Tensor, ...]]


def _randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


PROGRAMS: dict[str, Program] = {
    "fft_rfft_abs": Program(RfftAbs, lambda: (_randn(4, 4),)),
    "fft_ifft_round_trip": Program(FftRoundTrip, lambda: (_randn(4, 4),)),
    "view_as_complex_real": Program(ViewAsComplexReal, lambda: (_randn(4, 3, 2),)),
    "polar": Program(Polar, lambda: (_randn(4), _randn(4, seed=1))),
    "complex_mul": Program(ComplexMul, lambda: (_randn(3, 2), _randn(3, 2, seed=1))),
    "stft_abs": Program(StftAbs, lambda: (_randn(2, 32),)),
    "quantize_dequantize": Program(QuantizeDequantize, lambda: (_randn(4, 4),)),
    "quantize_per_channel_int_repr": Program(QuantizePerChannelIntRepr, lambda: (_randn(4, 4),)),
    "make_per_tensor_quantized": Program(
        MakePerTensorQuantized,
        lambda: (torch.randint(0, 256, (4, 4), dtype=torch.uint8, generator=torch.Generator().manual_seed(0)),)),
    "float8_e4m3fn": Program(lambda: Float8RoundTrip(torch.float8_e4m3fn), lambda: (_randn(4, 4) * 10,)),
    "float8_e5m2": Program(lambda: Float8RoundTrip(torch.float8_e5m2), lambda: (_randn(4, 4) * 10,)),
    "complex_input_output": Program(ComplexInOut, lambda: (_randn(4, dtype=torch.complex64),)),
    "complex_buffer": Program(ComplexBuffer, lambda: (_randn(4),)),
    "quantized_buffers": Program(QuantizedBuffers, lambda: (_randn(4, 4),)),
    "quantized_input": Program(
        QuantizedInput, lambda: (torch.quantize_per_tensor(_randn(4, 4), 0.05, 7, torch.quint8),)),
}


def _assert_matches(got: Any, expected: Any) -> None:
    """Eager's values: floats and complex to assert_close's tolerance, integers and quantized
    tensors bit for bit (integers, scale and zero point)."""
    if isinstance(expected, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(expected)  # pyright: ignore
        for g, e in zip(got, expected):  # pyright: ignore
            _assert_matches(g, e)
        return
    assert isinstance(got, torch.Tensor) and isinstance(expected, torch.Tensor)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.is_quantized:
        assert got.qscheme() == expected.qscheme()
        assert torch.equal(got.int_repr(), expected.int_repr())
        assert got.q_scale() == expected.q_scale() and got.q_zero_point() == expected.q_zero_point()
    elif expected.dtype.is_floating_point or expected.dtype.is_complex:
        torch.testing.assert_close(got, expected, rtol=0, atol=0) if expected.dtype in (
            torch.float8_e4m3fn, torch.float8_e5m2) else torch.testing.assert_close(got, expected)
    else:
        assert torch.equal(got, expected)


def _export_refusal(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> str | None:
    """Why torch.export itself cannot take the program (quantized tensors have no fake form),
    None when it can."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.export.export(model, inputs)
    except Exception as e:  # noqa: BLE001 - torch.export's own refusal
        return f"torch.export cannot take this program: {str(e).splitlines()[0]}"
    return None


@cache
def _compiled(name: str, frontend: str, backend: str) -> tuple[Any, torch.nn.Module, tuple[torch.Tensor, ...]] | str:
    """The compiled program (shared by the tests), or why torch.export cannot take it."""
    program = PROGRAMS[name]
    model = program.make().eval()
    inputs = program.inputs()
    try:
        return ziggurat.compile(model, inputs, backend=backend, frontend=frontend), model, inputs
    except ModelImportError:
        refusal = _export_refusal(model, inputs) if frontend == "export" else None
        if refusal is None:
            raise
        return refusal


def _compile(name: str, frontend: str, backend: str) -> tuple[Any, torch.nn.Module, tuple[torch.Tensor, ...]]:
    compiled = _compiled(name, frontend, backend)
    if isinstance(compiled, str):
        pytest.skip(compiled)
    return compiled


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", FRONTENDS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_eager(name: str, frontend: str, backend: str) -> None:
    compiled, model, inputs = _compile(name, frontend, backend)
    with torch.no_grad():
        expected = model(*inputs)
    _assert_matches(compiled(*inputs), expected)


def test_export_refusal_names_the_cause() -> None:
    """Where torch.export cannot take quantized tensors, the export frontend says so, and the
    auto frontend traces instead."""
    program = PROGRAMS["quantized_buffers"]
    if _export_refusal(program.make(), program.inputs()) is None:
        pytest.skip("this torch exports quantized tensors")
    with pytest.raises(ModelImportError, match="torch.export failed"):
        ziggurat.compile(program.make(), program.inputs(), backend="reference", frontend="export")
    compiled = ziggurat.compile(program.make(), program.inputs(), backend="reference")
    _assert_matches(compiled(*program.inputs()), program.make()(*program.inputs()))


@pytest.mark.parametrize(("name", "op", "reason"), [
    ("fft_rfft_abs", "aten::fft_rfft", "complex64 tensors have no native lowering"),
    ("fft_rfft_abs", "aten::abs", "complex64 tensors have no native lowering"),
    ("quantize_dequantize", "aten::quantize_per_tensor", "quint8 tensors have no native lowering"),
    ("float8_e5m2", "aten::to.dtype", "float8_e5m2 tensors have no native lowering"),
])
@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_report_lists_fallback_with_reason(name: str, op: str, reason: str, backend: str) -> None:
    compiled, _, _ = _compile(name, "torchscript", backend)
    report = compiled.report
    assert reason in report.fallback_ops[op]
    assert f"{op} x" in report.format() and reason in report.format()


def test_native_ops_stay_native() -> None:
    """Only the ops touching a complex tensor fall back: the float add after abs is native."""
    compiled, _, _ = _compile("fft_rfft_abs", "torchscript", "cpu")
    assert compiled.report.native_ops == {"aten::add.Tensor": 1}
    assert set(compiled.report.fallback_ops) == {"aten::fft_rfft", "aten::abs"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["complex_buffer", "quantize_dequantize", "complex_input_output"])
def test_save_load(name: str, backend: str, tmp_path: Path) -> None:
    compiled, model, inputs = _compile(name, "torchscript", backend)
    path = tmp_path / f"{name}.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    with torch.no_grad():
        _assert_matches(loaded(*inputs), model(*inputs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_input_dtype_checked(backend: str) -> None:
    """A complex128 tensor passed where complex64 was compiled is refused, not reinterpreted."""
    compiled, _, _ = _compile("complex_input_output", "torchscript", backend)
    with pytest.raises(InputError):
        compiled(_randn(4, dtype=torch.complex128))
    with pytest.raises(InputError):
        compiled(_randn(4))


def test_quantized_constant_without_integer_form_is_refused() -> None:
    """A quint4x2 constant packs two values a byte: no op rebuilds it from int_repr(), so the
    import stops naming the constant (never a wrong tensor)."""

    class Packed(torch.nn.Module):
        q: torch.Tensor

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("q", torch.quantize_per_tensor(torch.rand(4), 1.0, 0, torch.quint4x2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.q.dequantize() + x

    with pytest.raises(ModelImportError, match=r"quint4x2 constant cannot be rebuilt"):
        ziggurat.compile(Packed(), (torch.randn(4),), backend="reference", frontend="torchscript")


@pytest.mark.parametrize("dtype", IMPORTABLE_DTYPES, ids=str)
def test_dtype_mapping_round_trips(dtype: torch.dtype) -> None:
    element = element_type(dtype)
    assert torch_dtype(element) == dtype
    ty = tensor_type((2, 3), dtype)
    assert parse_type_list(format_type(ty)) == [ty]
    example = example_tensor(ty)
    assert example.dtype == dtype and tuple(example.shape) == (2, 3)
    assert example.is_quantized == (dtype in QUANTIZED_DTYPES)
    if dtype in TORCH_ONLY_DTYPES:
        assert torch_only_reason(ty) == f"{str(dtype).removeprefix('torch.')} tensors have no native lowering"
    else:
        assert torch_only_reason(ty) is None


def test_printed_types() -> None:
    assert format_type(tensor_type((2,), torch.complex64)) == "tensor<2xcomplex<f32>>"
    assert format_type(tensor_type((2,), torch.complex32)) == "tensor<2xcomplex<f16>>"
    assert format_type(tensor_type((2,), torch.float8_e4m3fn)) == "tensor<2xf8E4M3FN>"
    assert format_type(tensor_type((2,), torch.quint8)) == "tensor<2x!torch.quantized<quint8>>"
