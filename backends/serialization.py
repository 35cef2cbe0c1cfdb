"""``compiled.save(path)`` / ``ziggurat.load(path)``: one file per compiled model.

Layout: ``MAGIC``, an 8-byte little-endian header length, a JSON header (format, versions,
backend, options, input signature, and for each section its length and sha256), then the
sections: ``ir`` (the module's MLIR text with its weight blobs) and ``payload`` (the
backend's executable: object code, or a TensorRT engine).  Loading checks the magic, the
versions, the lengths (truncation) and the hashes (corruption) before anything is used, and
rebuilds the executable from the payload without recompiling.
"""

from __future__ import annotations

import hashlib
import json
import struct
from importlib.metadata import version
from pathlib import Path
from typing import Any

import torch
from xdsl.parser import Parser

from ziggurat.backends.compiled_module import CompiledModule
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.registry import get_backend
from ziggurat.ir.context import make_context
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.pipeline import print_module
from ziggurat.ir.types import format_type, parse_type_list

MAGIC = b"ZIGGURAT-MODULE\n"
FORMAT = 1


class LoadError(ZigguratError):
    """A saved module that cannot be loaded (corrupt, truncated, other versions)."""


def versions() -> dict[str, str]:
    import ziggurat

    return {
        "ziggurat": ziggurat.__version__,
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
    executable = compiled.executable
    serialize = getattr(executable, "serialize", None)
    if serialize is None:
        raise ZigguratError(f"the {compiled.report.backend} backend cannot save its executables",
                            op="save")
    payload: bytes = serialize()
    ir_text = print_module(compiled.module_ir, elide=False).encode()
    sections = {"ir": ir_text, "payload": payload}
    header = {
        "format": FORMAT,
        "versions": versions(),
        "backend": compiled.report.backend,
        "options": _options_json(compiled.options),
        "static_inputs": {str(k): v for k, v in compiled._static_inputs.items()},  # pyright: ignore
        "input_types": [format_type(t) for t in compiled._input_types],  # pyright: ignore
        "sections": [
            {"name": name, "length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sections.items()
        ],
    }
    head = json.dumps(header, sort_keys=True).encode()
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for data in sections.values():
            f.write(data)


def _read_header(data: bytes, path: Path) -> tuple[dict[str, Any], int]:
    if not data.startswith(MAGIC):
        raise LoadError(f"{path} is not a saved Ziggurat module (bad magic)", op="load")
    if len(data) < len(MAGIC) + 8:
        raise LoadError(f"{path} is truncated (no header)", op="load")
    (length,) = struct.unpack("<Q", data[len(MAGIC):len(MAGIC) + 8])
    start = len(MAGIC) + 8
    if length > len(data) - start:
        raise LoadError(f"{path} is truncated (header of {length} bytes, file has "
                        f"{len(data) - start})", op="load")
    try:
        header = json.loads(data[start:start + length])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise LoadError(f"{path} is corrupt (unreadable header)", op="load") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise LoadError(f"{path} has format {header.get('format') if isinstance(header, dict) else '?'}; "
                        f"this Ziggurat reads format {FORMAT}", op="load")
    return header, start + length


def _check_versions(header: dict[str, Any], path: Path) -> None:
    saved = header.get("versions", {})
    current = versions()
    for key in ("ziggurat", "torch", "xdsl", "llvmlite"):
        if saved.get(key) != current[key]:
            raise LoadError(
                f"{path} was saved with {key} {saved.get(key)}, this process has {key} "
                f"{current[key]}; compile the model again with this version", op="load")


def load(path: str | Path) -> CompiledModule:
    """Read a module written by ``CompiledModule.save``; never recompiles."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise LoadError(f"cannot read {path}: {e.strerror}", op="load") from None
    header, offset = _read_header(data, path)
    _check_versions(header, path)
    sections: dict[str, bytes] = {}
    for section in header.get("sections", []):
        end = offset + int(section["length"])
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
    if "ir" not in sections or "payload" not in sections:
        raise LoadError(f"{path} is corrupt (missing sections)", op="load")
    module = Parser(make_context(), sections["ir"].decode()).parse_module()
    options_json = header.get("options", {})
    backend_name = header["backend"]
    options = CompileOptions(
        backend=backend_name, prepack=options_json.get("prepack", True),
        isa=options_json.get("isa", "auto"), threads=options_json.get("threads"),
        fallback=options_json.get("fallback", True), extra=options_json.get("extra", {}),
    )
    backend = get_backend(backend_name)
    loader = getattr(backend, "load", None)
    if loader is None:
        raise LoadError(f"the {backend_name} backend cannot load saved executables", op="load")
    executable = loader(sections["payload"], module, options)
    report = CompileReport(backend=backend_name)
    report.stats["loaded from"] = str(path)
    static = {int(k): v for k, v in header.get("static_inputs", {}).items()}
    input_types = parse_type_list(",".join(header["input_types"])) if header.get("input_types") else None
    return CompiledModule(executable, module, report, static, {}, getattr(executable, "device", "cpu"),
                          options=options, input_types=input_types)


__all__ = ["LoadError", "load", "save"]
