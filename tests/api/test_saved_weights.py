"""A saved module holds each weight once, as raw bytes (issue 15, item 7): the IR section
prints the blobs as handles only, the weights section holds each distinct blob once; files
of format 1 (blobs as hex in the IR text) still load; a blob table that does not match the
IR is a LoadError."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

import ziggurat
from tests.support import models
from tests.support.saved_files import join, split
from tests.support.host import weight_panels
from ziggurat.backends.serialization import LoadError
from ziggurat.ir.pipeline import print_module


def _parameter_bytes(model: nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


def test_saved_file_holds_each_weight_once(tmp_path: Path) -> None:
    """Before: the IR section carried every blob as hex text, twice the parameters' size."""
    models.seeded()
    model = models.MLP((256, 512, 256, 64)).eval()
    x = torch.randn(4, 256)
    compiled = ziggurat.compile(model, (x,), backend="cpu", cache_dir=tmp_path / "cache")
    path = tmp_path / "mlp.zig"
    compiled.save(path)
    header, sections = split(path.read_bytes())
    params = _parameter_bytes(model)
    assert params <= len(sections["weights"]) < params * 1.01
    assert path.stat().st_size < params * 1.01 + len(sections["payload"]) + len(sections["ir"]) + 4096
    assert "dialect_resources" not in sections["ir"].decode() and len(sections["ir"]) < params // 20
    # (a name takes a digest of the bytes while another live blob holds it)
    names = {re.sub(r"_[0-9a-f]{12}$", "", b["handle"]) for b in header["blobs"]}
    panels = weight_panels()
    assert names == {"net.0.bias", "net.2.bias", "net.4.bias", f"net_0_weight_{panels}", f"net_2_weight_{panels}",
                     f"net_4_weight_{panels}"}
    loaded = ziggurat.load(path)
    assert torch.equal(loaded(x), compiled(x))


class _Twins(nn.Module):
    """Two layers whose weights have the same bytes under different names."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(64, 64)
        self.b = nn.Linear(64, 64)
        with torch.no_grad():
            self.b.weight.copy_(self.a.weight)
            self.b.bias.copy_(self.a.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_equal_blobs_are_saved_once(tmp_path: Path, backend: str) -> None:
    models.seeded()
    model = _Twins().eval()
    x = torch.randn(2, 64)
    compiled = ziggurat.compile(model, (x,), backend=backend, cache_dir=tmp_path / "cache")
    path = tmp_path / "twins.zig"
    compiled.save(path)
    header, sections = split(path.read_bytes())
    assert len(header["blobs"]) == 4
    assert len({(b["offset"], b["length"]) for b in header["blobs"]}) == 2
    assert len(sections["weights"]) < _parameter_bytes(model) * 0.6
    assert torch.equal(ziggurat.load(path)(x), compiled(x))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, torch.Tensor, torch.Tensor]:
    models.seeded()
    model = models.MLP((8, 16, 4)).eval()
    x = torch.randn(2, 8)
    compiled = ziggurat.compile(model, (x,), backend="reference")
    path = tmp_path_factory.mktemp("saved") / "mlp.zig"
    compiled.save(path)
    return path.read_bytes(), x, compiled(x)


def _load(tmp_path: Path, data: bytes) -> Any:
    path = tmp_path / "edited.zig"
    path.write_bytes(data)
    return ziggurat.load(path)


def test_format_1_files_still_load(saved: tuple[bytes, torch.Tensor, torch.Tensor], tmp_path: Path) -> None:
    data, x, y = saved
    module = _load(tmp_path, data).module_ir
    header, sections = split(data)
    old = {k: v for k, v in header.items() if k != "blobs"} | {"format": 1}
    text = print_module(module, elide=False)
    assert "dialect_resources" in text
    loaded = _load(tmp_path, join(old, {"ir": text.encode(), "payload": sections["payload"]}))
    assert torch.equal(loaded(x), y)
    # a format 1 file whose text lacks a blob's data
    elided = print_module(module).encode()
    with pytest.raises(LoadError, match="whose data it lacks"):
        _load(tmp_path, join(old, {"ir": elided, "payload": sections["payload"]}))
    # format 1 has no weights section; format 2 needs it and its table
    with pytest.raises(LoadError, match="header.sections names"):
        _load(tmp_path, join(old, sections))
    with pytest.raises(LoadError, match="header lacks 'blobs'"):
        _load(tmp_path, join({k: v for k, v in header.items() if k != "blobs"}, sections))


def _edit_blob(i: int, **changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(header: dict[str, Any]) -> None:
        entry = header["blobs"][i]
        for k, v in changes.items():
            entry[k] = v(entry[k]) if callable(v) else v

    return edit


BLOB_TABLE_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "past the section": (_edit_blob(0, offset=lambda o: o + 10**6), "lies outside the blob section"),
    "negative offset": (_edit_blob(0, offset=-8), "lies outside the blob section"),
    "short": (_edit_blob(1, length=lambda n: n - 4), r"holds \d+ bytes, its type tensor<.*> needs"),
    "renamed": (_edit_blob(0, handle="net.9.weight"), "which the IR does not use"),
    "listed twice": (lambda h: h["blobs"].append(dict(h["blobs"][0])), "lists 'net.*' twice"),
    "missing": (lambda h: h["blobs"].pop(0), "which the file does not hold"),
    "offset a string": (_edit_blob(0, offset="0"), r"header.blobs\[0\].offset is a string"),
}


@pytest.mark.parametrize("edit, message", BLOB_TABLE_EDITS.values(), ids=list(BLOB_TABLE_EDITS))
def test_forged_blob_table_is_load_error(saved: tuple[bytes, torch.Tensor, torch.Tensor], tmp_path: Path,
                                         edit: Callable[[dict[str, Any]], None], message: str) -> None:
    header, sections = split(saved[0])
    header = copy.deepcopy(header)
    edit(header)
    with pytest.raises(LoadError, match=message):
        _load(tmp_path, join(header, sections))


def test_blob_used_with_two_types_is_load_error(saved: tuple[bytes, torch.Tensor, torch.Tensor],
                                                tmp_path: Path) -> None:
    header, sections = split(saved[0])
    text = sections["ir"].decode()
    handles = [b["handle"] for b in header["blobs"]]
    weight = next(h for h in handles if re.match(r"net\.\d\.weight", h))
    other = next(h for h in handles if h != weight and f"dense_resource<{h}>" in text)
    sections["ir"] = text.replace(f"dense_resource<{other}>", f"dense_resource<{weight}>").encode()
    header["blobs"] = [b for b in header["blobs"] if b["handle"] != other]
    with pytest.raises(LoadError, match="is used as tensor<.*> and as tensor<"):
        _load(tmp_path, join(header, sections))
