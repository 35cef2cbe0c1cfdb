"""compiled.save / ziggurat.load for the TensorRT backends: the saved IR holds the segments,
the payload says which ones run (and holds the engines for ``tensorrt``); loading never
converts again, and a payload that is corrupt or belongs to other IR is a clear error."""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from tests.support import models
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.serialization import MAGIC, LoadError
from ziggurat.backends.tensorrt.availability import TensorRTUnavailableError, tensorrt_unavailable_reason
from ziggurat.backends.tensorrt.backend import TensorRTBackend, TensorRTReferenceBackend
from ziggurat.backends.tensorrt.payload import PayloadError


class WithFallback(torch.nn.Module):
    """ConvBNNet with an op TensorRT cannot take in the middle (two segments around it)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = models.randomize_bn(models.ConvBNNet())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(self.net(x), 1).relu() * 0.5 + 1.0


@pytest.fixture
def forbid_conversion(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to make any later conversion fail loudly: loading must not convert again."""
    import ziggurat.backends.tensorrt.segments as segments
    import ziggurat.backends.tensorrt.convert_torch_to_trt as pass_module

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("convert-torch-to-trt ran while loading")

    def forbid() -> None:
        monkeypatch.setattr(segments, "convert_function", refuse)
        monkeypatch.setattr(pass_module, "convert_function", refuse)
        monkeypatch.setattr(pass_module, "convert_module", refuse)

    return forbid


def _compiled(tmp_path: Path, backend: str = "tensorrt-reference") -> tuple[Path, torch.nn.Module, torch.Tensor, Any]:
    models.seeded()
    model = WithFallback().eval()
    x = torch.randn(2, 3, 8, 8)
    compiled = ziggurat.compile(model, (x,), backend=backend)
    path = tmp_path / "model.zig"
    compiled.save(path)
    return path, model, x, compiled


def test_round_trip_without_converting(tmp_path: Path, forbid_conversion: Callable[[], None]) -> None:
    path, model, x, compiled = _compiled(tmp_path)
    assert compiled.report.fallback_ops == {"aten::cumprod": ["no TensorRT converter is registered for aten::cumprod"]}
    forbid_conversion()
    loaded = ziggurat.load(path)
    assert loaded.report.backend == "tensorrt-reference"
    torch.testing.assert_close(loaded(x), model(x), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(loaded(x), compiled(x), rtol=0, atol=0)
    assert sorted(loaded.executable.runners) == ["forward_trt_0", "forward_trt_1"]


def test_the_guard_really_stops_conversion(forbid_conversion: Callable[[], None]) -> None:
    forbid_conversion()
    with pytest.raises(AssertionError, match="ran while loading"):
        ziggurat.compile(torch.nn.ReLU(), (torch.randn(3),), backend="tensorrt-reference", min_block_size=1)


def _sections(path: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[len(MAGIC):len(MAGIC) + 8])
    start = len(MAGIC) + 8
    header = json.loads(data[start:start + length])
    sections: dict[str, bytes] = {}
    offset = start + length
    for s in header["sections"]:
        sections[s["name"]] = data[offset:offset + s["length"]]
        offset += s["length"]
    return header, sections


def _write(path: Path, header: dict[str, Any], sections: dict[str, bytes]) -> None:
    """A well-formed file (lengths and checksums right) around the given sections."""
    header["sections"] = [{"name": k, "length": len(v), "sha256": hashlib.sha256(v).hexdigest()}
                          for k, v in sections.items()]
    head = json.dumps(header).encode()
    path.write_bytes(MAGIC + struct.pack("<Q", len(head)) + head + b"".join(sections.values()))


def test_corrupt_payloads(tmp_path: Path) -> None:
    path, _, _, _ = _compiled(tmp_path)
    header, sections = _sections(path)
    payload = sections["payload"]
    cases = {
        b"garbage": "not a TensorRT segment payload",
        payload[:20]: "truncated",
        payload[:-3]: "corrupt|truncated",
        payload + b"xx": "2 trailing bytes",
        payload.replace(b'"reference"', b'"engines"  '): "holds engines, this backend needs reference",
        payload.replace(b"forward_trt_1", b"forward_trt_7"): r"names segments .*forward_trt_7.*the saved IR has",
    }
    for bad, message in cases.items():
        _write(path, dict(header), {**sections, "payload": bad})
        with pytest.raises(PayloadError, match=message):
            ziggurat.load(path)
    with pytest.raises(LoadError):  # one error type for every bad file
        ziggurat.load(path)


def test_payload_of_another_model(tmp_path: Path) -> None:
    """Same segment names, other shapes: the signatures tell the payloads apart."""
    path, model, _, _ = _compiled(tmp_path)
    other = ziggurat.compile(model, (torch.randn(1, 3, 8, 8),), backend="tensorrt-reference")
    assert sorted(other.executable.runners) == ["forward_trt_0", "forward_trt_1"]
    module = ziggurat.load(path).module_ir
    with pytest.raises(PayloadError, match=r"segment @forward_trt_0 of the payload \(\(tensor<1x3x8x8xf32>\) -> .*"
                                           r"does not match the saved IR \(\(tensor<2x3x8x8xf32>\)"):
        TensorRTReferenceBackend().load(other.executable.serialize(), module,
                                        CompileOptions(backend="tensorrt-reference"))


@pytest.mark.skipif(tensorrt_unavailable_reason() is None, reason="TensorRT is installed here")
def test_loading_engines_without_tensorrt_says_what_is_missing(tmp_path: Path) -> None:
    path, _, _, _ = _compiled(tmp_path)
    header, sections = _sections(path)
    header["backend"] = "tensorrt"
    _write(path, header, sections)
    with pytest.raises(TensorRTUnavailableError, match="tensorrt-reference"):
        ziggurat.load(path)


@pytest.mark.skipif(tensorrt_unavailable_reason() is not None,
                    reason=f"saving engines needs TensorRT and a GPU: {tensorrt_unavailable_reason()}")
def test_engines_round_trip(tmp_path: Path, forbid_conversion: Callable[[], None]) -> None:
    path, model, x, compiled = _compiled(tmp_path, backend="tensorrt")
    forbid_conversion()
    loaded = ziggurat.load(path)
    torch.testing.assert_close(loaded(x), compiled(x), rtol=0, atol=0)
    torch.testing.assert_close(loaded(x), model(x), rtol=1e-3, atol=1e-4)
    header, sections = _sections(path)
    options = CompileOptions(backend="tensorrt")
    with pytest.raises(PayloadError, match="fails its checksum"):
        flipped = bytearray(sections["payload"])
        flipped[-5] ^= 0xFF
        TensorRTBackend().load(bytes(flipped), loaded.module_ir, options)
    reference = TensorRTReferenceBackend().build(loaded.module_ir, options, CompileReport("x")).serialize()
    with pytest.raises(PayloadError, match="holds reference, this backend needs engines"):
        TensorRTBackend().load(reference, loaded.module_ir, options)
