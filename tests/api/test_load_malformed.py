"""ziggurat.load on malformed and forged files: always a LoadError, never another exception
or the death of the process (issue 14, "Malformed input, same standard")."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from tests.support import models
from tests.support.saved_files import delete_key, join, rewrite_header, set_key, split
from ziggurat.backends.serialization import LoadError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    models.seeded()
    compiled = ziggurat.compile(models.MLP((8, 16, 4)), (torch.randn(2, 8),), backend="reference")
    path = tmp_path_factory.mktemp("saved") / "mlp.zig"
    compiled.save(path)
    return path.read_bytes()


def _load(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "edited.zig"
    path.write_bytes(data)
    ziggurat.load(path)


HEADER_EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "no backend": (delete_key("backend"), "header lacks 'backend'"),
    "no versions": (delete_key("versions"), "header lacks 'versions'"),
    "no sections": (delete_key("sections"), "header lacks 'sections'"),
    "no torch version": (delete_key("versions", "torch"), "saved with torch None, this process has torch"),
    "no section hash": (delete_key("sections", 0, "sha256"), r"header.sections\[0\] lacks 'sha256'"),
    "options null": (set_key(None, "options"), "header.options is null, not an object"),
    "versions a list": (set_key([], "versions"), "header.versions is an array, not an object"),
    "backend a number": (set_key(3, "backend"), "header.backend is an integer, not a string"),
    "threads a string": (set_key("2", "options", "threads"), "header.options.threads is a string"),
    "prepack a number": (set_key(1, "options", "prepack"), "header.options.prepack is an integer, not a boolean"),
    "extra a list": (set_key({"x": [1]}, "options", "extra"), "options.extra holds a value that is not a scalar"),
    "input types a string": (set_key("tensor<2x8xf32>", "input_types"), "header.input_types is a string"),
    "input type garbage": (set_key(["tensor<2x8xq>"], "input_types"), "input types do not parse"),
    "static input key": (set_key({"x": 3}, "static_inputs"), "static_inputs has a key that is not an input index"),
    "section length a string": (set_key("10", "sections", 0, "length"), r"header.sections\[0\].length is a string"),
    "section length negative": (set_key(-1, "sections", 0, "length"), "negative length"),
    "sections renamed": (set_key("code", "sections", 0, "name"), "header.sections names"),
    "unknown backend": (set_key("tpu", "backend"), "unknown backend 'tpu'"),
}


@pytest.mark.parametrize("edit, message", HEADER_EDITS.values(), ids=list(HEADER_EDITS))
def test_malformed_header_is_load_error(reference_file: bytes, tmp_path: Path,
                                        edit: Callable[[dict[str, Any]], None], message: str) -> None:
    header = copy.deepcopy(split(reference_file)[0])
    edit(header)
    with pytest.raises(LoadError, match=message):
        _load(tmp_path, rewrite_header(reference_file, header))


@pytest.mark.parametrize("header", [[], "x", 3, None, {"format": 1}], ids=["list", "str", "int", "null", "only-format"])
def test_header_of_another_kind_is_load_error(reference_file: bytes, tmp_path: Path, header: Any) -> None:
    with pytest.raises(LoadError):
        _load(tmp_path, rewrite_header(reference_file, header))


def test_deeply_nested_header_is_load_error(reference_file: bytes, tmp_path: Path) -> None:
    data = rewrite_header(reference_file, {})
    nested = b"[" * 100_000 + b"]" * 100_000
    from tests.support.saved_files import _LEN  # pyright: ignore[reportPrivateUsage]
    from ziggurat.backends.serialization import MAGIC

    with pytest.raises(LoadError, match="unreadable header"):
        _load(tmp_path, MAGIC + _LEN.pack(len(nested)) + nested + data[len(MAGIC) + 8 + 2:])


IR_EDITS: dict[str, tuple[Callable[[str], str], str]] = {
    "syntax": (lambda ir: ir.replace("func.func @forward(", "func.func @forward(("), "its IR does not parse"),
    "unknown op": (lambda ir: ir.replace("torch.aten.linear", "torch.aten.linearx", 1), "its IR does not parse"),
    "not utf-8": (lambda ir: "\udcff" + ir, "not UTF-8"),
    "return type": (lambda ir: ir.replace("func.return %", "func.return %x, %", 1), "its IR does not"),
    "truncated": (lambda ir: ir[: len(ir) // 2], "its IR does not parse"),
}


@pytest.mark.parametrize("edit, message", IR_EDITS.values(), ids=list(IR_EDITS))
def test_forged_ir_section_is_load_error(reference_file: bytes, tmp_path: Path,
                                         edit: Callable[[str], str], message: str) -> None:
    header, sections = split(reference_file)
    sections["ir"] = edit(sections["ir"].decode()).encode(errors="surrogateescape")
    with pytest.raises(LoadError, match=message):
        _load(tmp_path, join(header, sections))


# -- object code: checked before LLVM's loader sees it (run in a child: a regression segfaults)
_CHILD = """
import sys
sys.path.insert(0, {root!r})
import torch, ziggurat
from tests.support import models
from tests.support.saved_files import object_of, with_object
from ziggurat.backends.serialization import LoadError

models.seeded()
model = models.MLP((8, 16, 4)).eval()
x = torch.randn(2, 8)
compiled = ziggurat.compile(model, (x,), backend="cpu", threads={threads}, cache_dir={cache!r})
compiled.save({path!r})
"""


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_forged_object_code_is_load_error(tmp_path: Path) -> None:
    """Truncated, cut-header and symbol-less objects with matching checksums (a segfault in
    llvmlite before the check) and a missing entry function are LoadErrors."""
    path = str(tmp_path / "cpu.zig")
    code = _CHILD.format(root=str(ROOT), threads=1, cache=str(tmp_path / "cache"), path=path) + f"""
data = open({path!r}, "rb").read()
obj = object_of(data)
shoff = int.from_bytes(obj[40:48], "little")
edits = {{
    "empty": b"",
    "header only": obj[:64],
    "half": obj[: len(obj) // 2],
    "no section table": obj[:shoff],
    "section table moved": obj[:40] + (len(obj) - 64).to_bytes(8, "little") + obj[48:],
    "entry renamed": obj.replace(b"zig_forward_0", b"zig_forwarX_0"),
}}
from ziggurat.backends.cpu.elf_object import SHT_RELA, parse_object
rela = next(s for s in parse_object(obj).sections if s.type == SHT_RELA)
kind = rela.offset + 8  # the first relocation's r_info: its kind in the low bytes
edits["relocation kind"] = obj[:kind] + b"\\xfe" + obj[kind + 1:]
for name, forged in edits.items():
    open({path!r}, "wb").write(with_object(data, forged))
    try:
        ziggurat.load({path!r})
        print(name, "| LOADED")
    except LoadError as e:
        print(name, "| LoadError", str(e).splitlines()[0])
"""
    result = _child(code)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" | ", 1) for line in result.stdout.splitlines() if " | " in line)
    assert len(lines) == 7, result.stdout
    for name, outcome in lines.items():
        assert outcome.startswith("LoadError"), f"{name}: {outcome}"
    assert "defines no function zig_forward_0" in lines["entry renamed"]
    assert "unsupported kind 254" in lines["relocation kind"]


def test_threaded_module_loads_in_a_fresh_process(tmp_path: Path) -> None:
    """Saved code calling OpenMP loads in a process that generated no code (libgomp is loaded
    on demand; it was only loaded by code generation).  The module is compiled and saved here;
    only the load needs the fresh process."""
    from tests.support.saved_files import object_of
    from ziggurat.backends.cpu.jit import undefined_symbols

    path = str(tmp_path / "threaded.zig")
    models.seeded()
    compiled = ziggurat.compile(models.ConvBNNet().eval(), (torch.randn(2, 3, 16, 16),), backend="cpu",
                                isa="scalar", threads=2, cache_dir=str(tmp_path / "cache"))
    compiled.save(path)
    symbols = sorted(undefined_symbols(object_of(Path(path).read_bytes())))
    assert "GOMP_parallel" in symbols, symbols  # the case under test: code that needs libgomp
    result = _child(f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import torch, ziggurat
from tests.support import models
models.seeded()
model = models.ConvBNNet().eval()
x = torch.randn(2, 3, 16, 16)
print(float((ziggurat.load({path!r})(x) - model(x)).abs().max()))
""")
    assert result.returncode == 0, result.stderr[-3000:]
    assert float(result.stdout.split()[-1]) < 1e-4


def test_forged_tensorrt_payload_header_is_load_error(tmp_path: Path) -> None:
    """The segment table of a TensorRT payload is checked against its schema too."""
    import json
    import struct

    from ziggurat.backends.tensorrt.payload import MAGIC as TRT_MAGIC

    models.seeded()
    compiled = ziggurat.compile(models.MLP((8, 16, 16, 4)), (torch.randn(2, 8),), backend="tensorrt-reference")
    path = tmp_path / "trt.zig"
    compiled.save(path)
    header, sections = split(path.read_bytes())
    payload = sections["payload"]
    start = len(TRT_MAGIC) + 8
    (n,) = struct.unpack_from("<Q", payload, len(TRT_MAGIC))
    table = json.loads(payload[start:start + n])
    for edit, message in (
        (lambda t: t["segments"][0].update(engine_bytes="0"), r"segments\[0\].engine_bytes is a string"),
        (lambda t: t["segments"][0].update(engine_bytes=-4), "negative engine size"),
        (lambda t: t.update(segments={"a": 1}), "segments is an object, not an array"),
        (lambda t: t["segments"].append(7), r"segments\[1\] is an integer, not an object"),
    ):
        forged_table = copy.deepcopy(table)
        edit(forged_table)
        head = json.dumps(forged_table).encode()
        sections["payload"] = TRT_MAGIC + struct.pack("<Q", len(head)) + head + payload[start + n:]
        with pytest.raises(LoadError, match=message):
            _load(tmp_path, join(header, sections))
