"""On-disk cache of compiled object code.

Each entry is one file ``<dir>/<key[:2]>/<key>.zobj`` holding a fixed header
followed by the object-file bytes::

    offset  size  field
    0       8     magic  b"ZIGOBJ\\x00\\x01"
    8       4     format version (little-endian u32)
    12      32    key (sha256 digest, raw bytes)
    44      8     payload length (little-endian u64)
    52      32    sha256 of the payload
    84      ...   payload (an ELF relocatable object)

The key is the sha256 of everything that decides the machine code: the LLVM IR
text, the ISA and its LLVM feature string, the host CPU name, the optimisation
level, the llvmlite/LLVM versions and the ziggurat version.  A file whose
header, length or checksum does not match, or whose payload is not a well-formed
object (``elf_object.parse_object``), is reported through a ``logging``
warning, deleted, and treated as a miss - it is never loaded.  Writes go to a
temporary file in the same directory and are renamed into place, so
concurrent processes never observe half-written entries.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

from ziggurat.backends.cpu.elf_object import ObjectCodeError, parse_object
from ziggurat.ir.version import VERSION

log = logging.getLogger(__name__)

MAGIC = b"ZIGOBJ\x00\x01"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sI32sQ32s")
HEADER_SIZE = _HEADER.size
ENV_VAR = "ZIGGURAT_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$ZIGGURAT_CACHE_DIR`` if set, else ``~/.cache/ziggurat``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ziggurat"


def _ziggurat_version() -> str:
    return VERSION


def cache_key(ir_text: str, *parts: str) -> str:
    """Hex sha256 over the IR text, the extra ``parts`` and the tool versions."""
    h = hashlib.sha256()
    fields = [
        f"ziggurat-object-cache/{FORMAT_VERSION}",
        f"llvmlite={llvmlite.__version__}",
        "llvm=" + ".".join(str(v) for v in llvm.llvm_version_info),
        f"ziggurat={_ziggurat_version()}",
        *parts,
    ]
    for field in fields:
        data = field.encode()
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    text = ir_text.encode()
    h.update(struct.pack("<Q", len(text)))
    h.update(text)
    return h.hexdigest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    stores: int = 0
    rejected: int = 0


class ObjectCache:
    """A directory of validated object files, keyed by :func:`cache_key`."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.stats = CacheStats()

    def path_for(self, key: str) -> Path:
        _check_key(key)
        return self.directory / key[:2] / f"{key}.zobj"

    def load(self, key: str) -> bytes | None:
        """The cached payload for ``key``, or ``None`` (miss or bad entry)."""
        path = self.path_for(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            self.stats.misses += 1
            return None
        except OSError as exc:
            log.warning("object cache: cannot read %s (%s); recompiling", path, exc)
            self.stats.misses += 1
            return None
        problem = _validate(blob, key)
        if problem is not None:
            log.warning("object cache: discarding %s: %s; recompiling", path, problem)
            self.stats.rejected += 1
            self.stats.misses += 1
            self._remove(path)
            return None
        self.stats.hits += 1
        return blob[HEADER_SIZE:]

    def store(self, key: str, payload: bytes) -> Path | None:
        """Write ``payload`` under ``key`` atomically; ``None`` if the cache
        directory is not writable (a warning is logged, nothing raised)."""
        path = self.path_for(key)
        header = _HEADER.pack(
            MAGIC, FORMAT_VERSION, bytes.fromhex(key), len(payload), hashlib.sha256(payload).digest()
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(header)
                    f.write(payload)
                os.replace(tmp, path)
            except BaseException:
                self._remove(Path(tmp))
                raise
        except OSError as exc:
            log.warning("object cache: cannot write %s (%s); continuing without caching", path, exc)
            return None
        self.stats.stores += 1
        return path

    def clear(self) -> None:
        """Delete every entry of this cache directory."""
        if not self.directory.is_dir():
            return
        for entry in self.directory.glob("*/*.zobj"):
            self._remove(entry)

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("object cache: cannot delete %s (%s)", path, exc)


def _check_key(key: str) -> None:
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise ValueError(f"object cache key must be 64 lowercase hex digits, got {key!r}")


def _validate(blob: bytes, key: str) -> str | None:
    """Why ``blob`` is not a valid entry for ``key``; ``None`` if it is."""
    if len(blob) < HEADER_SIZE:
        return f"truncated header ({len(blob)} of {HEADER_SIZE} bytes)"
    magic, version, stored_key, length, digest = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        return "bad magic"
    if version != FORMAT_VERSION:
        return f"format version {version}, expected {FORMAT_VERSION} (stale)"
    if stored_key != bytes.fromhex(key):
        return "entry belongs to a different key (stale)"
    payload_len = len(blob) - HEADER_SIZE
    if payload_len != length:
        return f"payload is {payload_len} bytes, header says {length} (truncated or padded)"
    if hashlib.sha256(memoryview(blob)[HEADER_SIZE:]).digest() != digest:
        return "payload checksum mismatch (corrupt)"
    try:  # a forged or miscompiled entry with a matching checksum must not reach LLVM's loader
        parse_object(blob[HEADER_SIZE:])
    except ObjectCodeError as exc:
        return f"malformed object code ({exc})"
    return None
