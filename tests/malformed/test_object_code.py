"""Object code is checked before LLVM's loader sees it (``backends/cpu/elf_object.py``):
every way a forged object could crash MCJIT is an ObjectCodeError, and the object cache
rebuilds an entry whose checksum matches but whose object is malformed."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ziggurat.backends.cpu.elf_object import (
    SHT_RELA,
    SHT_SYMTAB,
    STT_FILE,
    ObjectCodeError,
    Section,
    parse_object,
)
from ziggurat.backends.cpu.isa import parse_isa
from ziggurat.backends.cpu.jit import JitError, compile_object, load_object, undefined_symbols

ROOT = Path(__file__).resolve().parents[2]

# A function that calls out (so its object has relocations and, with uwtable, an .eh_frame).
SRC = """
declare float @fmaf(float, float, float)
define float @twice(float %x) uwtable {
  %y = call float @fmaf(float %x, float 2.0, float 0.0)
  %z = call float @fmaf(float %y, float 2.0, float 0.0)
  ret float %z
}
"""


@pytest.fixture(scope="module")
def obj() -> bytes:
    return compile_object(SRC, "scalar")


def _section(data: bytes, name: str) -> Section:
    return next(s for s in parse_object(data).sections if s.name == name)


def _put(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _section_header(data: bytes, index: int) -> int:
    (shoff,) = struct.unpack_from("<Q", data, 40)
    return shoff + 64 * index


def _symtab(data: bytes) -> Section:
    return next(s for s in parse_object(data).sections if s.type == SHT_SYMTAB)


def _symbol(data: bytes, name: str) -> int:
    """The file offset of symbol ``name``'s entry."""
    index = next(i for i, sym in enumerate(parse_object(data).symbols) if sym.name == name)
    return _symtab(data).offset + 24 * index


def _file_symbol(data: bytes) -> int:
    return next(i for i, sym in enumerate(parse_object(data).symbols) if sym.type == STT_FILE)


def _rela(data: bytes) -> Section:
    return next(s for s in parse_object(data).sections if s.type == SHT_RELA)


DAMAGES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "empty": (lambda d: b"", "shorter than an ELF header"),
    "cut in the header": (lambda d: d[:40], "shorter than an ELF header"),
    "bad magic": (lambda d: b"\x7fELG" + d[4:], "not a 64-bit little-endian ELF"),
    "32-bit": (lambda d: d[:4] + b"\x01" + d[5:], "not a 64-bit little-endian ELF"),
    "executable": (lambda d: _put(d, 16, "<H", 2), "not a relocatable x86-64 object"),
    "aarch64": (lambda d: _put(d, 18, "<H", 183), "not a relocatable x86-64 object"),
    "program headers": (lambda d: _put(d, 56, "<H", 1), "program headers"),
    "no section table": (lambda d: d[:_section_header(d, 0)], "leaves the"),
    "section table far away": (lambda d: _put(d, 40, "<Q", 1 << 40), "leaves the"),
    "no sections": (lambda d: _put(d, 60, "<H", 0), "0 sections"),
    "name table out of range": (lambda d: _put(d, 62, "<H", 999), "section-name table 999"),
    "section past the end": (lambda d: _put(d, _section_header(d, _section(d, ".ltext").index) + 24, "<Q",
                                            len(d)), "leaves the"),
    "huge zero fill": (lambda d: _put(_put(d, _section_header(d, 2) + 4, "<I", 8),
                                      _section_header(d, 2) + 32, "<Q", 1 << 40), "zero bytes"),
    "odd alignment": (lambda d: _put(d, _section_header(d, _section(d, ".ltext").index) + 48, "<Q", 24),
                      "alignment 24"),
    "section name out of range": (lambda d: _put(d, _section_header(d, 2), "<I", 1 << 30),
                                  "outside its string table"),
    "symbol table entry size": (lambda d: _put(d, _section_header(d, _symtab(d).index) + 56, "<Q", 16),
                                "malformed symbol table header"),
    "symbol name out of range": (lambda d: _put(d, _symtab(d).offset + 24, "<I", 1 << 30),
                                 "outside its string table"),
    "symbol past its section": (lambda d: _put(d, _symbol(d, "twice") + 8, "<Q", 1 << 20), "leaves its section"),
    "relocation kind": (lambda d: _put(d, _rela(d).offset + 8, "<I", 200), "unsupported kind 200"),
    "relocation offset": (lambda d: _put(d, _rela(d).offset, "<Q", 1 << 32), "leaves"),
    "relocation symbol": (lambda d: _put(d, _rela(d).offset + 12, "<I", 9999), "names no symbol"),
    "relocation against the file symbol": (lambda d: _put(d, _rela(d).offset + 12, "<I", _file_symbol(d)),
                                           "refers to a file symbol"),
    "local undefined symbol": (lambda d: _put(d, _symbol(d, "fmaf") + 4, "<B", 0x00), "local and undefined"),
    "relocated section not loaded": (lambda d: _put(d, _section_header(d, _rela(d).index) + 44, "<I",
                                                    _symtab(d).index), "which is not loaded"),
    "eh_frame record length": (lambda d: _put(d, _section(d, ".eh_frame").offset, "<I", 1 << 20),
                               "leaves the section"),
    "eh_frame CIE pointer": (lambda d: _put(d, _section(d, ".eh_frame").offset + 24 + 4, "<I", 3), "points at no CIE"),
    "eh_frame augmentation": (lambda d: _put(d, _section(d, ".eh_frame").offset + 9, "<B", ord("Q")),
                              "unknown augmentation"),
}


def test_compiled_objects_parse(obj: bytes) -> None:
    parsed = parse_object(obj)
    assert ".eh_frame" in {s.name for s in parsed.sections}
    assert "twice" in parsed.defined_functions()
    assert {s.name for s in parsed.undefined_globals()} >= {"fmaf"}
    assert "fmaf" in undefined_symbols(obj)


@pytest.mark.parametrize("damage, message", DAMAGES.values(), ids=list(DAMAGES))
def test_malformed_object_is_refused(obj: bytes, damage: Callable[[bytes], bytes], message: str) -> None:
    damaged = damage(obj)
    with pytest.raises(ObjectCodeError, match=message):
        parse_object(damaged)
    with pytest.raises(JitError, match="malformed object code"):
        load_object(damaged, parse_isa("scalar"))


def test_missing_entry_function_is_refused(obj: bytes) -> None:
    with pytest.raises(ObjectCodeError, match="defines no function zig_forward_0"):
        parse_object(obj).require_functions(["twice", "zig_forward_0"])


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_forged_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    """A cache entry whose object is cut short but whose length and checksum were rewritten to
    match (in a child: before the check, LLVM's loader segfaulted on it)."""
    result = _child(f"""
        import ctypes, hashlib, logging, sys
        sys.path.insert(0, {str(ROOT)!r})
        logging.basicConfig(level=logging.WARNING, format="%(message)s")
        from ziggurat.backends.cpu.jit import compile_ir
        from ziggurat.backends.cpu.object_cache import _HEADER, HEADER_SIZE, MAGIC, FORMAT_VERSION, ObjectCache
        SRC = "define i64 @answer(i64 %x) {{\\n  %y = mul i64 %x, 6\\n  ret i64 %y\\n}}\\n"
        cache = ObjectCache({str(tmp_path)!r})
        lib = compile_ir(SRC, "auto", cache=cache)
        path = cache.path_for(lib.key)
        blob = path.read_bytes()
        payload = blob[HEADER_SIZE:][:200]
        path.write_bytes(_HEADER.pack(MAGIC, FORMAT_VERSION, bytes.fromhex(lib.key), len(payload),
                                      hashlib.sha256(payload).digest()) + payload)
        again = compile_ir(SRC, "auto", cache=cache)
        answer = again.ctypes_function("answer", ctypes.c_int64, [ctypes.c_int64])(7)
        print("from_cache", again.from_cache, "rejected", cache.stats.rejected, "answer", answer)
    """)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "from_cache False rejected 1 answer 42" in result.stdout, result.stdout
    assert "malformed object code" in result.stderr, result.stderr
