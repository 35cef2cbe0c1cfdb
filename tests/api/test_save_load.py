"""compiled.save / ziggurat.load: round trip and every way a file can be bad."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from tests.support import models
from tests.support.opinfo import assert_same
from tests.support.saved_files import split
from ziggurat.backends.serialization import MAGIC, LoadError


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, torch.nn.Module, torch.Tensor]:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    x = torch.randn(1, 3, 8, 8)
    compiled = ziggurat.compile(model, (x,), backend="reference", passes="graph-opt,prepack-weights")
    path = tmp_path / "model.zig"
    compiled.save(path)
    return path, model, x


def test_round_trip(saved: tuple[Path, torch.nn.Module, torch.Tensor]) -> None:
    path, model, x = saved
    loaded = ziggurat.load(path)
    assert_same(loaded(x), model(x), op="loaded", rtol=1e-5, atol=1e-6)
    with pytest.raises(ziggurat.ir.errors.InputError):  # the signature travels with the file
        loaded(torch.randn(2, 3, 8, 8))


def test_truncated(saved: tuple[Path, torch.nn.Module, torch.Tensor]) -> None:
    path, _, _ = saved
    data = path.read_bytes()
    for cut in (5, len(MAGIC) + 4, len(MAGIC) + 20, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:cut])
        with pytest.raises(LoadError, match="truncated|bad magic|corrupt"):
            ziggurat.load(path)


def test_corrupt(saved: tuple[Path, torch.nn.Module, torch.Tensor]) -> None:
    path, _, _ = saved
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(LoadError, match="corrupt.*checksum"):
        ziggurat.load(path)
    path.write_bytes(b"PK\x03\x04 something else entirely")
    with pytest.raises(LoadError, match="not a saved Ziggurat module"):
        ziggurat.load(path)


def _rewrite_header(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[len(MAGIC):len(MAGIC) + 8])
    start = len(MAGIC) + 8
    header = json.loads(data[start:start + length])
    edit(header)
    head = json.dumps(header).encode()
    path.write_bytes(MAGIC + struct.pack("<Q", len(head)) + head + data[start + length:])


def test_version_mismatch(saved: tuple[Path, torch.nn.Module, torch.Tensor]) -> None:
    path, _, _ = saved
    _rewrite_header(path, lambda h: h["versions"].update(torch="2.0.0"))
    with pytest.raises(LoadError, match="saved with torch 2.0.0, this process has torch 2.13"):
        ziggurat.load(path)
    _rewrite_header(path, lambda h: h.update(format=99))
    with pytest.raises(LoadError, match="format 99"):
        ziggurat.load(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="cannot read"):
        ziggurat.load(tmp_path / "nope.zig")


def test_cpu_backend_round_trip_without_recompiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    x = torch.randn(1, 3, 8, 8)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    path = tmp_path / "cpu.zig"
    compiled.save(path)

    from ziggurat.backends.cpu import jit

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("load must not compile")

    monkeypatch.setattr(jit, "compile_ir", no_compile)
    loaded = ziggurat.load(path)
    assert_same(loaded(x), model(x), op="cpu-loaded", rtol=1e-4, atol=1e-5)
    with pytest.raises(ziggurat.ir.errors.InputError, match="compiled for"):
        loaded(torch.randn(2, 3, 8, 8))


@pytest.mark.parametrize("backend,prepack", [("reference", None), ("cpu", True), ("cpu", False)])
def test_saved_files_hold_no_pipeline_so_the_old_graph_opt_spelling_cannot_break_loading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, prepack: bool | None) -> None:
    """Prepacking left ``graph-opt`` (its ``prepack``/``isa`` options are refused now).  A file
    records the compile options (``prepack``, ``isa``), never a pass pipeline, and loading
    parses none: a file saved before the change loads, even one whose header carried
    ``graph-opt{prepack=false isa=avx2}`` (an unknown header key is ignored)."""
    models.seeded()
    model = models.randomize_bn(models.ConvBNNet())
    x = torch.randn(1, 3, 8, 8)
    options: dict[str, Any] = {"passes": "graph-opt,prepack-weights"} if prepack is None else {"prepack": prepack}
    compiled = ziggurat.compile(model, (x,), backend=backend, cache_dir=tmp_path / "cache", **options)
    path = tmp_path / "model.zig"
    compiled.save(path)
    header = json.dumps(split(path.read_bytes())[0])
    assert "graph-opt" not in header and "prepack-weights" not in header
    _rewrite_header(path, lambda h: h["options"].update(passes="graph-opt{prepack=false isa=avx2}"))

    from xdsl.passes import PassPipeline

    def no_pipeline(*args: object, **kwargs: object) -> None:
        raise AssertionError("load must not parse a pass pipeline")

    monkeypatch.setattr(PassPipeline, "parse_spec", no_pipeline)
    loaded = ziggurat.load(path)
    assert_same(loaded(x), model(x), op=f"{backend}-loaded", rtol=1e-4, atol=1e-5)
    assert loaded.options is not None and loaded.options.prepack == (prepack is not False)
