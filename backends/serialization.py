"""``compiled.save(path)`` / ``ziggurat.load(path)``: one file per compiled model.

Layout: ``MAGIC``, an 8-byte little-endian header length, a JSON header (format, versions,
backend, options, input signature, the blob table, and for each section its length and
sha256), then the sections: ``ir`` (the module's MLIR text, its weights printed as handles
only), ``payload`` (the backend's executable: object code, or a TensorRT engine) and
``weights`` (the raw bytes of every weight blob, each distinct blob once; the header's
``blobs`` table maps each handle to its range, see ``ir/blob_table.py``).  Format 1 files
(the blobs as hex inside the IR text, twice their size) still load.  Loading checks the
magic, the versions, the header against ``HEADER_SHAPE``, the lengths (truncation) and the
hashes (corruption) before anything is used, then parses the IR, gives each weight its
bytes (checked against its type), verifies the IR and rebuilds the executable from the
payload without recompiling.  Whatever is wrong with a file, loading it raises
:class:`LoadError` (a forged file with matching hashes included).  The loaded module's
weights are freed with it.  ``dumps``/``loads`` do the same with the file's bytes (a
dynamic-shape module's file holds one per size specialization, see ``dynamic_serialization``);
``load_module`` (``ziggurat.load``) reads a file of either kind, by its magic.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Collection
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from ziggurat.backends.compiled_module import CompiledModule
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.json_shape import OptionalKey, shape_problem
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.registry import get_backend
from ziggurat.ir.blob_owner import keep_blobs_with, owning_blobs
from ziggurat.ir.blob_table import BlobTableError, pack_blobs, unpack_blobs
from ziggurat.ir.context import make_context
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.version import VERSION
from ziggurat.ir.mlir_text import check_string_literals
from ziggurat.ir.pipeline import print_module
from ziggurat.ir.resources import BLOBS
from ziggurat.ir.ssa_order import check_defined_before_use
from ziggurat.ir.types import UnsupportedTypeError, format_type, parse_type_list

if TYPE_CHECKING:
    from ziggurat.backends.dynamic_module import DynamicCompiledModule

MAGIC = b"ZIGGURAT-MODULE\n"
#: the magic of a dynamic-shape module's file (``dynamic_serialization``)
DYNAMIC_MAGIC = b"ZIGGURAT-DYNAMIC\n"
FORMAT = 2
#: the sections of each format this Ziggurat reads, in file order
SECTIONS = {1: ("ir", "payload"), 2: ("ir", "payload", "weights")}
_SCALAR = (bool, int, float, str)
#: What ``save`` writes into the header (see ``json_shape``).
HEADER_SHAPE = {
    "format": int,
    "versions": {"ziggurat": str, "torch": str, "xdsl": str, "llvmlite": str},
    "backend": str,
    "options": OptionalKey({
        "backend": OptionalKey(str), "prepack": OptionalKey(bool), "isa": OptionalKey(str),
        "threads": OptionalKey((int, type(None))), "fallback": OptionalKey(bool),
        "extra": OptionalKey(dict),
    }),
    "static_inputs": OptionalKey(dict),
    "input_types": OptionalKey([str]),
    "sections": [{"name": str, "length": int, "sha256": str}],
    "blobs": OptionalKey([{"handle": str, "offset": int, "length": int}]),
}


class LoadError(ZigguratError):
    """A saved module that cannot be loaded (corrupt, truncated, other versions)."""


def versions() -> dict[str, str]:
    return {
        "ziggurat": VERSION,
        "torch": torch.__version__,
        "xdsl": version("xdsl"),
        "llvmlite": version("llvmlite"),
    }


def _options_json(options: CompileOptions | None) -> dict[str, Any]:
    if options is None:
        return {}
    return {
        "backend": options.backend, "prepack": options.prepack, "isa": options.isa,
        "threads": options.threads, "fallback": options.fallback,
        "extra": {k: v for k, v in options.extra.items() if isinstance(v, int | float | str | bool)},
    }


def save(compiled: CompiledModule, path: Path) -> None:
    """Write ``dumps(compiled)`` to ``path``."""
    data = dumps(compiled)
    with open(path, "wb") as f:
        f.write(data)


def dumps(compiled: CompiledModule) -> bytes:
    """The whole file ``save`` writes for ``compiled``."""
    executable = compiled.executable
    serialize = getattr(executable, "serialize", None)
    if serialize is None:
        raise ZigguratError(f"the {compiled.report.backend} backend cannot save its executables",
                            op="save")
    payload: bytes = serialize()
    try:
        blobs, weights = pack_blobs(compiled.module_ir)
    except BlobTableError as e:
        raise ZigguratError(f"cannot save the module's weights: {e}", op="save") from None
    ir_text = print_module(compiled.module_ir, elide=True).encode()
    sections = {"ir": ir_text, "payload": payload, "weights": weights}
    header = {
        "format": FORMAT,
        "versions": versions(),
        "backend": compiled.report.backend,
        "options": _options_json(compiled.options),
        "static_inputs": {str(k): v for k, v in compiled._static_inputs.items()},  # pyright: ignore
        "input_types": [format_type(t) for t in compiled._input_types],  # pyright: ignore
        "blobs": blobs,
        "sections": [
            {"name": name, "length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sections.items()
        ],
    }
    head = json.dumps(header, sort_keys=True).encode()
    return b"".join([MAGIC, struct.pack("<Q", len(head)), head, *sections.values()])


def _read_header(data: bytes, path: Path, magic: bytes = MAGIC,
                 formats: Collection[int] = tuple(SECTIONS)) -> tuple[dict[str, Any], int]:
    """The JSON header after ``magic`` (one of ``formats``) and where the sections start."""
    if not data.startswith(magic):
        raise LoadError(f"{path} is not a saved Ziggurat module (bad magic)", op="load")
    if len(data) < len(magic) + 8:
        raise LoadError(f"{path} is truncated (no header)", op="load")
    (length,) = struct.unpack("<Q", data[len(magic):len(magic) + 8])
    start = len(magic) + 8
    if length > len(data) - start:
        raise LoadError(f"{path} is truncated (header of {length} bytes, file has "
                        f"{len(data) - start})", op="load")
    try:
        header = json.loads(data[start:start + length])
    except (ValueError, RecursionError):  # JSON, UTF-8, too many digits, too deeply nested
        raise LoadError(f"{path} is corrupt (unreadable header)", op="load") from None
    if not isinstance(header, dict) or type(header.get("format")) is not int or header["format"] not in formats:
        raise LoadError(f"{path} has format {header.get('format') if isinstance(header, dict) else '?'}; "
                        f"this Ziggurat reads formats {', '.join(map(str, formats))}", op="load")
    return header, start + length


def _check_versions(header: dict[str, Any], path: Path) -> None:
    """Versions first: a file from another version may well have another header."""
    saved = header.get("versions")
    if not isinstance(saved, dict):
        return  # the header check says what is wrong
    current = versions()
    for key in ("ziggurat", "torch", "xdsl", "llvmlite"):
        if saved.get(key) != current[key]:
            raise LoadError(
                f"{path} was saved with {key} {saved.get(key)}, this process has {key} "
                f"{current[key]}; compile the model again with this version", op="load")


def _check_header(header: dict[str, Any], path: Path) -> None:
    problem = shape_problem(header, HEADER_SHAPE, "header")
    if problem is None:
        extra = header.get("options", {}).get("extra", {})
        if not all(isinstance(v, _SCALAR) for v in extra.values()):
            problem = "header.options.extra holds a value that is not a scalar"
        elif not all(k.isdigit() for k in header.get("static_inputs", {})):
            problem = "header.static_inputs has a key that is not an input index"
        elif [s["name"] for s in header["sections"]] != list(SECTIONS[header["format"]]):
            problem = (f"header.sections names {[s['name'] for s in header['sections']]}, "
                       f"not {list(SECTIONS[header['format']])}")
        elif any(s["length"] < 0 for s in header["sections"]):
            problem = "header.sections has a negative length"
        elif header["format"] >= 2 and "blobs" not in header:
            problem = "header lacks 'blobs'"
    if problem is not None:
        raise LoadError(f"{path} is corrupt ({problem})", op="load")


def _sections(data: bytes, offset: int, header: dict[str, Any], path: Path) -> dict[str, bytes]:
    sections: dict[str, bytes] = {}
    for section in header["sections"]:
        end = offset + section["length"]
        if end > len(data):
            raise LoadError(f"{path} is truncated (section '{section['name']}' needs "
                            f"{section['length']} bytes, {len(data) - offset} left)", op="load")
        chunk = data[offset:end]
        if hashlib.sha256(chunk).hexdigest() != section["sha256"]:
            raise LoadError(f"{path} is corrupt (section '{section['name']}' fails its checksum)",
                            op="load")
        sections[section["name"]] = chunk
        offset = end
    if offset != len(data):
        raise LoadError(f"{path} is corrupt ({len(data) - offset} trailing bytes)", op="load")
    return sections


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


def _module(ir: bytes, path: Path, blobs: tuple[list[dict[str, Any]], bytes] | None) -> ModuleOp:
    """The saved IR, parsed, given its weights (``blobs``: the table and the weights section
    of a format 2 file; format 1 carries them in the text) and verified. The module holds
    its weights: they are freed with it."""
    owner = BLOBS.new_owner()
    try:
        text = ir.decode()
        check_string_literals(text, f"{path}:ir")
        with owning_blobs(owner), BLOBS.parsing() as declared:
            module = Parser(make_context(), text).parse_module()
        if blobs is not None:
            unpack_blobs(module, declared, *blobs)
        elif declared:
            raise BlobTableError(f"the IR uses dense_resource<{sorted(declared)[0]}>, whose data it lacks")
        check_defined_before_use(module)
        module.verify()
    except UnicodeDecodeError:
        raise LoadError(f"{path} is corrupt (its IR section is not UTF-8 text)", op="load") from None
    except ParseError as e:
        raise LoadError(f"{path} is corrupt (its IR does not parse: {e.span.get_location()}: {e.msg})",
                        op="load") from None
    except BlobTableError as e:
        raise LoadError(f"{path} is corrupt ({e})", op="load") from None
    except DiagnosticException as e:
        raise LoadError(f"{path} is corrupt (its IR does not verify: {_first_line(e)})", op="load") from None
    except Exception as e:  # noqa: BLE001 - xDSL's parser on text it was never meant to read
        raise LoadError(f"{path} is corrupt (its IR cannot be read: {type(e).__name__}: {_first_line(e)})",
                        op="load") from None
    keep_blobs_with(module, owner)
    return module


def read_file(path: Path) -> bytes:
    """The bytes of ``path``; a :class:`LoadError` when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise LoadError(f"cannot read {path}: {e.strerror}", op="load") from None


def options_of(header: dict[str, Any]) -> CompileOptions:
    """The options of a header checked against ``HEADER_SHAPE`` (``_options_json``'s)."""
    options_json = header.get("options", {})
    return CompileOptions(
        backend=header["backend"], prepack=options_json.get("prepack", True),
        isa=options_json.get("isa", "auto"), threads=options_json.get("threads"),
        fallback=options_json.get("fallback", True), extra=options_json.get("extra", {}),
    )


def load(path: str | Path) -> CompiledModule:
    """Read a module written by ``CompiledModule.save``; never recompiles."""
    path = Path(path)
    return loads(read_file(path), path)


def load_module(path: str | Path) -> CompiledModule | DynamicCompiledModule:
    """``ziggurat.load``: a file of either kind, by its magic (a dynamic-shape module's is
    ``DYNAMIC_MAGIC``, see ``dynamic_serialization``)."""
    path = Path(path)
    data = read_file(path)
    if data.startswith(DYNAMIC_MAGIC):
        from ziggurat.backends.dynamic_serialization import loads as load_dynamic

        return load_dynamic(data, path)
    return loads(data, path)


def loads(data: bytes, path: Path) -> CompiledModule:
    """The module ``dumps`` wrote as ``data`` (read from ``path``, which errors name)."""
    header, offset = _read_header(data, path)
    _check_versions(header, path)
    _check_header(header, path)
    sections = _sections(data, offset, header, path)
    blobs = (header["blobs"], sections["weights"]) if "weights" in sections else None
    module = _module(sections["ir"], path, blobs)
    backend_name = header["backend"]
    options = options_of(header)
    try:
        input_types = parse_type_list(",".join(header["input_types"])) if header.get("input_types") else None
    except (ParseError, UnsupportedTypeError) as e:
        raise LoadError(f"{path} is corrupt (its input types do not parse: {_first_line(e)})", op="load") from None
    try:
        backend = get_backend(backend_name)
    except ZigguratError as e:
        raise LoadError(f"{path}: {e.message}", op="load") from None
    loader = getattr(backend, "load", None)
    if loader is None:
        raise LoadError(f"the {backend_name} backend cannot load saved executables", op="load")
    try:
        executable = loader(sections["payload"], module, options)
        report = CompileReport(backend=backend_name)
        report.stats["loaded from"] = str(path)
        static = {int(k): v for k, v in header.get("static_inputs", {}).items()}
        return CompiledModule(executable, module, report, static, {}, getattr(executable, "device", "cpu"),
                              options=options, input_types=input_types)
    except ZigguratError as e:
        if type(e) is not ZigguratError:
            raise  # a LoadError, or an error of its own kind (TensorRT is not installed ...)
        raise LoadError(f"{path}: {e.message}", op="load") from None
    except Exception as e:  # noqa: BLE001 - the file is the only input: whatever breaks, it is bad
        raise LoadError(f"{path}: the saved {backend_name} executable does not match its IR "
                        f"({type(e).__name__}: {_first_line(e)})", op="load") from None


__all__ = ["LoadError", "dumps", "load", "load_module", "loads", "save"]
