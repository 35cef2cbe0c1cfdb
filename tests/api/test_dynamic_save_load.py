"""``DynamicCompiledModule.save`` / ``ziggurat.load`` (issue 16, "save/load keep the ranges"): the
saved sizes load without a build, other sizes in range build from the saved program, the
ranges and their errors are those of the compile, and a malformed file is a LoadError."""

from __future__ import annotations

import copy
import io
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.export import Dim

import ziggurat
from tests.support.saved_files import delete_key, join, set_key, split
from ziggurat.backends.dynamic_module import SPECIALIZED, DynamicCompiledModule
from ziggurat.backends.dynamic_serialization import MAGIC
from ziggurat.backends.serialization import LoadError
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.pipeline import print_module



class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        y = torch.softmax(self.proj(x) @ x.transpose(1, 2) + mask, -1) @ x
        return {"y": self.norm(y + x), "pooled": y.mean(1)}


def _inputs(n: int, t: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(n, t, 16), torch.randn(n, t, t)


def _compile(backend: str, per_size: bool = True) -> tuple[torch.nn.Module, DynamicCompiledModule]:
    """``per_size``: drop the range build of a backend that makes one (the reference backends),
    so that the module builds per size, as on the CPU backend."""
    torch.manual_seed(0)
    model = Block().eval()
    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=2, max=32)
    compiled = ziggurat.compile(model, _inputs(2, 5), backend,
                                dynamic_shapes={"x": {0: batch, 1: seq}, "mask": {0: batch, 1: seq, 2: seq}})
    assert isinstance(compiled, DynamicCompiledModule)
    if per_size and compiled.range_build is not None:
        compiled.range_build = None
        compiled.specialization([[2, 5, 16], [2, 5, 5]])
    return model, compiled


def _error(call: Callable[[], Any]) -> str:
    with pytest.raises(InputError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_round_trip_keeps_builds_and_ranges(backend: str, tmp_path: Path) -> None:
    model, compiled = _compile(backend)
    compiled(*_inputs(3, 9))
    path = tmp_path / "block.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    assert isinstance(loaded, DynamicCompiledModule)
    assert loaded.specializations == [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 9}]
    assert loaded.symbols == compiled.symbols
    assert loaded.symbols.describe() == compiled.symbols.describe() == [
        "batch in [1, 8]: x dim 0, mask dim 0", "seq in [2, 32]: x dim 1, mask dim 1, mask dim 2"]
    assert loaded.ir["torch"] == compiled.ir["torch"]
    for n, t in [(2, 5), (3, 9)]:  # the saved sizes: no build
        x, mask = _inputs(n, t)
        torch.testing.assert_close(loaded(x, mask), model(x, mask), rtol=1e-4, atol=1e-5)
    assert SPECIALIZED not in loaded.report.stats
    x, mask = _inputs(8, 32)  # a new size in range: built from the saved program
    torch.testing.assert_close(loaded(x, mask), model(x, mask), rtol=1e-4, atol=1e-5)
    assert loaded.report.stats[SPECIALIZED] == 1
    assert loaded.specializations[-1] == {"batch": 8, "seq": 32}
    for bad in [(9, 5), (2, 33), (2, 1)]:  # outside a range: the compile's own message
        assert _error(lambda: loaded(*_inputs(*bad))) == _error(lambda: compiled(*_inputs(*bad)))
    x, mask = torch.randn(2, 5, 16), torch.randn(2, 5, 6)  # a relation broken
    assert _error(lambda: loaded(x, mask)) == _error(lambda: compiled(x, mask))


@pytest.mark.parametrize("backend", ["reference", "tensorrt-reference"])
def test_round_trip_of_a_range_build(backend: str, tmp_path: Path) -> None:
    """A backend that builds the whole ranges once saves that build: every size in range loads
    and runs without a build."""
    model, compiled = _compile(backend, per_size=False)
    assert compiled.range_build is not None
    compiled.save(tmp_path / "block.zig")
    loaded = ziggurat.load(tmp_path / "block.zig")
    assert isinstance(loaded, DynamicCompiledModule) and loaded.range_build is not None
    saved_ir, loaded_ir = (print_module(m.range_build.module_ir) for m in (compiled, loaded))  # type: ignore[union-attr]
    assert saved_ir.count("ziggurat.trt_profile") == loaded_ir.count("ziggurat.trt_profile")
    assert (backend == "tensorrt-reference") == ("ziggurat.trt_profile" in loaded_ir)
    for n, t in [(1, 2), (3, 9), (8, 32)]:
        x, mask = _inputs(n, t)
        torch.testing.assert_close(loaded(x, mask), model(x, mask), rtol=1e-4, atol=1e-5)
    assert SPECIALIZED not in loaded.report.stats and loaded.specializations == []
    assert _error(lambda: loaded(*_inputs(9, 5))) == _error(lambda: compiled(*_inputs(9, 5)))
    header, sections = _split((tmp_path / "block.zig").read_bytes())
    assert header["range_build"] is True and "range" in sections
    sections["range"] = sections["spec-0"] if "spec-0" in sections else b"not a module"
    with pytest.raises(LoadError):
        _load(tmp_path, _join(header, sections))


class Doubled(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.cat([x, x], 0) + y, x.sum()


def test_derived_dim_round_trip(tmp_path: Path) -> None:
    batch = Dim("batch", min=1, max=16)
    compiled = ziggurat.compile(Doubled(), (torch.randn(3, 4), torch.randn(6, 4)), "reference",
                                dynamic_shapes=({0: batch}, {0: 2 * batch}))
    compiled.range_build = None  # the per-size builds (the CPU backend's way)
    compiled.specialization([[3, 4], [6, 4]])
    compiled.save(tmp_path / "doubled.zig")
    loaded = ziggurat.load(tmp_path / "doubled.zig")
    assert loaded.symbols.describe() == ["batch in [1, 16]: x dim 0, y dim 0 = 2*batch"]
    for n in (3, 7):
        x, y = torch.randn(n, 4), torch.randn(2 * n, 4)
        torch.testing.assert_close(loaded(x, y), Doubled()(x, y))
    assert loaded.report.stats[SPECIALIZED] == 1
    x, y = torch.randn(3, 4), torch.randn(5, 4)
    assert _error(lambda: loaded(x, y)) == _error(lambda: compiled(x, y))


def test_traced_dynamic_module_is_not_saved(tmp_path: Path) -> None:
    model = torch.nn.Linear(4, 2)
    compiled = ziggurat.compile(model, (torch.randn(3, 4),), "reference", frontend="torchscript",
                                dynamic_shapes=({0: Dim("n", min=1, max=8)},))
    with pytest.raises(ZigguratError, match="TorchScript frontend cannot be saved"):
        compiled.save(tmp_path / "traced.zig")


# -- malformed files ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    _, compiled = _compile("reference")
    compiled(*_inputs(3, 9))
    path = tmp_path_factory.mktemp("dynamic") / "block.zig"
    compiled.save(path)
    return path.read_bytes()


def _split(data: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    return split(data, MAGIC)


def _join(header: dict[str, Any], sections: dict[str, bytes]) -> bytes:
    """A file of ``header`` and ``sections`` with their lengths and hashes forged to match."""
    return join(header, sections, magic=MAGIC)


def _saved(value: Any) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def _load(tmp_path: Path, data: bytes) -> Any:
    path = tmp_path / "edited.zig"
    path.write_bytes(data)
    return ziggurat.load(path)


def test_forged_file_of_the_saved_parts_loads(saved: bytes, tmp_path: Path) -> None:
    """The edits below are what fails: the helpers alone give a file that loads."""
    loaded = _load(tmp_path, _join(*_split(saved)))
    assert loaded.specializations == [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 9}]


def test_truncated(saved: bytes, tmp_path: Path) -> None:
    for cut in (5, len(MAGIC) + 4, len(MAGIC) + 20, len(saved) // 3, len(saved) // 2, len(saved) - 1):
        with pytest.raises(LoadError, match="truncated|bad magic|corrupt"):
            _load(tmp_path, saved[:cut])


@pytest.mark.parametrize("section", ["program", "program-weights", "spec-0", "spec-1"])
def test_flipped_byte_fails_its_checksum(saved: bytes, tmp_path: Path, section: str) -> None:
    header, sections = _split(saved)
    offset = len(saved) - sum(len(v) for v in sections.values())
    for name, data in sections.items():
        if name == section:
            break
        offset += len(data)
    edited = bytearray(saved)
    edited[offset + len(sections[section]) // 2] ^= 0xFF
    with pytest.raises(LoadError, match=f"section '{section}' fails its checksum"):
        _load(tmp_path, bytes(edited))


HEADER_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "no symbols": (delete_key("symbols"), "header lacks 'symbols'"),
    "symbols a string": (set_key("batch in [1, 8]", "symbols"), "header.symbols is a string, not an object"),
    "symbol dims a dict": (set_key({}, "symbols", "dims"), "header.symbols.dims is an object, not an array"),
    "symbol range a string": (set_key([["batch", "1", 8], ["seq", 2, 32]], "symbols", "symbols"), "header.symbols"),
    "symbol range too big": (set_key([["batch", 1e999, 8], ["seq", 2, 32]], "symbols", "symbols"), "header.symbols"),
    "unknown symbol": (set_key([0, "x", 0, "batch + width"], "symbols", "dims", 0), "unknown symbol 'width'"),
    "static dim bound": (lambda h: h["symbols"]["dims"].append([0, "x", 2, "batch"]),
                         "do not fit the program: dynamic_shapes: input 0 \\('x'\\) dim 2 is declared dynamic"),
    "range widened": (set_key([["batch", 1, 64], ["seq", 2, 32]], "symbols", "symbols"),
                      r"header.symbols are batch in \[1, 64\].*the program declares batch in \[1, 8\]"),
    "dims renamed": (set_key([0, "x", 1, "batch"], "symbols", "dims", 1), "two symbols are both named 'batch'"),
    "no signature": (delete_key("signature"), "header lacks 'signature'"),
    "signature garbage": (set_key("(x: %0", "signature"), "is not a call signature"),
    "outputs garbage": (set_key("{'y': ", "outputs"), "is not a structure"),
    "input names": (set_key(["x"], "input_names"), "header.input_names names 1 inputs, the program takes 2"),
    "versions": (set_key("0.0", "versions", "torch"), "saved with torch 0.0"),
    "format": (set_key(7, "format"), "has format 7"),
    "spec sizes": (set_key({"batch": 2}, "specializations", 0), r"specializations\[0\] is"),
    "spec sizes swapped": (set_key([{"batch": 3, "seq": 9}, {"batch": 2, "seq": 5}], "specializations"),
                           "section spec-0 takes inputs of shapes"),
    "spec repeated": (set_key({"batch": 2, "seq": 5}, "specializations", 1), r"specializations\[1\] repeats"),
    "max specializations": (set_key(0, "max_specializations"), "not positive"),
}


@pytest.mark.parametrize("edit, message", HEADER_EDITS.values(), ids=list(HEADER_EDITS))
def test_malformed_header_is_load_error(saved: bytes, tmp_path: Path,
                                        edit: Callable[[dict[str, Any]], None], message: str) -> None:
    header, sections = _split(saved)
    header = copy.deepcopy(header)
    edit(header)
    with pytest.raises(LoadError, match=message):
        _load(tmp_path, _join(header, sections))


@pytest.mark.parametrize("header", [[], "x", None, {"format": 1}], ids=["list", "str", "null", "only-format"])
def test_header_of_another_kind_is_load_error(saved: bytes, tmp_path: Path, header: Any) -> None:
    _, sections = _split(saved)
    with pytest.raises(LoadError):
        _load(tmp_path, join(header, sections, forge=False, magic=MAGIC))


SECTION_EDITS: dict[str, tuple[str, Callable[[bytes], bytes], str]] = {
    "program garbage": ("program", lambda b: b"PK\x03\x04" + b"\0" * 64, "its program section does not load"),
    "program half": ("program", lambda b: b[: len(b) // 2], "its program section does not load"),
    "program node renamed": ("program", lambda b: b.replace(b"aten.softmax.int", b"aten.softmaxx.int"),
                             "its program section does not load"),
    "weights garbage": ("program-weights", lambda b: b"\0" * 64, "its program-weights section is not tensors"),
    "weights pickle": ("program-weights", lambda b: pickle.dumps(print), "its program-weights section is not tensors"),
    "weights not a table": ("program-weights", lambda b: _saved([torch.ones(2)]), "is not a table of tensors"),
    "weights missing": ("program-weights", lambda b: _saved({}), "its program section does not load"),
    "spec garbage": ("spec-1", lambda b: b"not a module", r"section spec-1\) is not a saved Ziggurat module"),
    "spec half": ("spec-0", lambda b: b[: len(b) // 2], r"section spec-0\) is (truncated|corrupt)"),
}


@pytest.mark.parametrize("name, edit, message", SECTION_EDITS.values(), ids=list(SECTION_EDITS))
def test_forged_section_is_load_error(saved: bytes, tmp_path: Path, name: str, edit: Callable[[bytes], bytes],
                                      message: str) -> None:
    header, sections = _split(saved)
    sections[name] = edit(sections[name])
    with pytest.raises(LoadError, match=message):
        _load(tmp_path, _join(header, sections))


def test_missing_file_is_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="cannot read"):
        ziggurat.load(tmp_path / "absent.zig")
