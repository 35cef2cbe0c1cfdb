"""On-disk object cache: hits, and bad entries detected, deleted and rebuilt."""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path

import pytest

from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.object_cache import HEADER_SIZE, ObjectCache, cache_key, default_cache_dir

SRC = """
define i64 @answer(i64 %x) {
  %y = mul i64 %x, 6
  %z = add i64 %y, 0
  ret i64 %z
}
"""


def _call(lib) -> int:  # type: ignore[no-untyped-def]
    return lib.ctypes_function("answer", ctypes.c_int64, [ctypes.c_int64])(7)


def test_miss_then_hit(tmp_path: Path) -> None:
    cache = ObjectCache(tmp_path)
    first = compile_ir(SRC, "auto", cache=cache)
    assert not first.from_cache and _call(first) == 42
    assert cache.path_for(first.key).exists()
    second = compile_ir(SRC, "auto", cache=cache)
    assert second.from_cache and _call(second) == 42
    assert cache.stats.hits == 1 and cache.stats.stores == 1


def test_key_depends_on_ir_and_isa(tmp_path: Path) -> None:
    a = compile_ir(SRC, "auto", cache=ObjectCache(tmp_path)).key
    b = compile_ir(SRC.replace("mul i64 %x, 6", "mul i64 %x, 5"), "auto", cache=ObjectCache(tmp_path)).key
    c = compile_ir(SRC, "scalar", cache=ObjectCache(tmp_path)).key
    assert len({a, b, c}) == 3
    assert cache_key("x", "p") != cache_key("x", "q") and cache_key("x", "p") == cache_key("x", "p")


def _corrupt_flip(blob: bytes) -> bytes:
    data = bytearray(blob)
    for i in range(HEADER_SIZE + 10, len(data), 97):
        data[i] ^= 0xFF
    return bytes(data)


@pytest.mark.parametrize(
    "damage, reason",
    [
        (_corrupt_flip, "checksum"),
        (lambda b: b[: len(b) // 2], "truncated"),
        (lambda b: b[:20], "truncated header"),
        (lambda b: b"XXXXXXXX" + b[8:], "bad magic"),
        (lambda b: b[:8] + b"\x09\x00\x00\x00" + b[12:], "format version"),
        (lambda b: b[:12] + bytes(32) + b[44:], "different key"),
        (lambda b: b + b"\x00" * 16, "payload is"),
    ],
    ids=["flipped-bytes", "truncated", "truncated-header", "magic", "version", "stale-key", "padded"],
)
def test_damaged_entry_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture, damage, reason: str) -> None:  # type: ignore[no-untyped-def]
    cache = ObjectCache(tmp_path)
    lib = compile_ir(SRC, "auto", cache=cache)
    path = cache.path_for(lib.key)
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="ziggurat.backends.cpu.object_cache"):
        again = compile_ir(SRC, "auto", cache=cache)
    assert not again.from_cache
    assert _call(again) == 42
    assert any(reason in rec.getMessage() for rec in caplog.records), [r.getMessage() for r in caplog.records]
    assert cache.stats.rejected == 1
    # The rebuilt entry is valid again.
    third = compile_ir(SRC, "auto", cache=cache)
    assert third.from_cache and _call(third) == 42


def test_env_var_overrides_default_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZIGGURAT_CACHE_DIR", str(tmp_path / "zc"))
    assert default_cache_dir() == tmp_path / "zc"
    assert ObjectCache().directory == tmp_path / "zc"
    monkeypatch.delenv("ZIGGURAT_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "ziggurat"


def test_unwritable_cache_dir_only_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = ObjectCache(blocker / "sub")
    with caplog.at_level(logging.WARNING, logger="ziggurat.backends.cpu.object_cache"):
        lib = compile_ir(SRC, "auto", cache=cache)
    assert _call(lib) == 42
    assert any("cannot write" in r.getMessage() for r in caplog.records)


def test_bad_key_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="64 lowercase hex"):
        ObjectCache(tmp_path).load("../etc/passwd")


def test_kernel_cache_key_covers_every_module_the_kernels_import() -> None:
    """A kernel's cache key hashes the sources that shape its IR (``generator_files``): every
    backend module a kernel module imports is among them.  codegen/bf16.py (the bf16 stores'
    rounding) was not, so an edit of it kept serving the kernels compiled before."""
    import ast
    from pathlib import Path

    import importlib

    from ziggurat.backends.cpu.kernels.gemm_callable import generator_files

    cpu = Path(str(importlib.import_module("ziggurat.backends.cpu.isa").__file__)).resolve().parent
    hashed = {p.resolve() for p in generator_files()}
    checked = 0
    for source in cpu.joinpath("kernels").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ziggurat.backends.cpu."):
                parts = node.module.split(".")[3:]
                target = cpu.joinpath(*parts)
                module = target.with_suffix(".py") if target.with_suffix(".py").exists() else target / "__init__.py"
                if parts[0] == "jit" or not module.exists():  # jit compiles; it does not shape the IR
                    continue
                assert module.resolve() in hashed, f"{source.name} imports {node.module}, which the key does not hash"
                checked += 1
    assert checked > 20
