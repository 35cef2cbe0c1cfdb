"""The executable part of a saved TensorRT module (``compiled.save`` / ``ziggurat.load``).

The saved IR already holds the converted module: the torch-level ``@forward`` calling the
``@forward_trt_N`` segment functions.  The payload says which segments the executable
runs and, for ``tensorrt``, carries one serialized engine per segment::

    MAGIC | u64 header length | JSON header | engine bytes of segment 0 | segment 1 | ...

    header = {"kind": "reference" | "engines",
              "segments": [{"name": "forward_trt_0", "signature": "(tensor<...>) -> ...",
                            "layers": 12, "engine_bytes": 0 | n, "engine_sha256": "..."}]}

Loading checks the payload against the saved IR (the same segments, signatures and
layer counts) and never converts or builds again.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from ziggurat.backends.json_shape import shape_problem
from ziggurat.backends.serialization import LoadError
from ziggurat.backends.tensorrt.partition_report import segment_functions
from ziggurat.ir.errors import ZigguratError

MAGIC = b"ZIGGURAT-TRT\n"
KINDS = ("reference", "engines")
HEADER_SHAPE = {"kind": str, "segments": [{"name": str, "signature": str, "layers": int, "engine_bytes": int,
                                           "engine_sha256": str}]}


class PayloadError(LoadError):
    """A saved TensorRT payload that is corrupt or does not match the saved IR."""

    def __init__(self, message: str) -> None:
        super().__init__(message, op="load (tensorrt payload)")


@dataclass(frozen=True)
class SegmentEntry:
    name: str
    signature: str
    layers: int


def _entry(func: FuncOp) -> SegmentEntry:
    body = func.body.blocks.first
    layers = 0 if body is None else len(body.ops) - 1  # all but func.return
    return SegmentEntry(func.sym_name.data, str(func.function_type), layers)


def write_payload(kind: str, module: ModuleOp, engines: Mapping[str, bytes] | None = None) -> bytes:
    """The payload of ``module``'s segments (``engines``: segment name -> serialized engine)."""
    if kind not in KINDS:
        raise ValueError(f"payload kind {kind!r}")
    engines = engines or {}
    entries: list[dict[str, Any]] = []
    blobs: list[bytes] = []
    for func in segment_functions(module):
        e = _entry(func)
        blob = engines.get(e.name, b"")
        if kind == "engines" and not blob:
            raise ZigguratError(f"no engine was built for @{e.name}", op="save")
        entries.append({"name": e.name, "signature": e.signature, "layers": e.layers,
                        "engine_bytes": len(blob), "engine_sha256": hashlib.sha256(blob).hexdigest()})
        blobs.append(blob)
    head = json.dumps({"kind": kind, "segments": entries}, sort_keys=True).encode()
    return MAGIC + struct.pack("<Q", len(head)) + head + b"".join(blobs)


def _header(payload: bytes) -> tuple[dict[str, Any], int]:
    if not payload.startswith(MAGIC):
        raise PayloadError("the payload is not a TensorRT segment payload (bad magic)")
    start = len(MAGIC) + 8
    if len(payload) < start:
        raise PayloadError("the payload is truncated (no header)")
    (length,) = struct.unpack("<Q", payload[len(MAGIC):start])
    if length > len(payload) - start:
        raise PayloadError(f"the payload is truncated (header of {length} bytes, {len(payload) - start} left)")
    try:
        header = json.loads(payload[start:start + length])
    except (ValueError, RecursionError):  # JSON, UTF-8, too many digits, too deeply nested
        raise PayloadError("the payload is corrupt (unreadable header)") from None
    problem = shape_problem(header, HEADER_SHAPE, "payload header")
    if problem is None and header["kind"] not in KINDS:
        problem = f"payload header.kind is {header['kind']!r}, not one of {', '.join(KINDS)}"
    if problem is None and any(s["engine_bytes"] < 0 for s in header["segments"]):
        problem = "payload header.segments has a negative engine size"
    if problem is not None:
        raise PayloadError(f"the payload is corrupt ({problem})")
    return header, start + length  # pyright: ignore[reportUnknownVariableType]


def read_payload(payload: bytes, module: ModuleOp, kind: str) -> dict[str, bytes]:
    """Check ``payload`` against the saved ``module``; segment name -> engine bytes (empty for
    the reference kind)."""
    header, offset = _header(payload)
    if header["kind"] != kind:
        raise PayloadError(f"the payload holds {header['kind']}, this backend needs {kind}")
    in_ir = {f.sym_name.data: _entry(f) for f in segment_functions(module)}
    saved = header["segments"]
    names = [str(s.get("name")) if isinstance(s, dict) else "?" for s in saved]
    if sorted(names) != sorted(in_ir):
        raise PayloadError(f"the payload names segments {names}, the saved IR has {sorted(in_ir)}")
    engines: dict[str, bytes] = {}
    for s in saved:
        mine = in_ir[s["name"]]
        if s.get("signature") != mine.signature or s.get("layers") != mine.layers:
            raise PayloadError(
                f"segment @{mine.name} of the payload ({s.get('signature')}, {s.get('layers')} layers) does not "
                f"match the saved IR ({mine.signature}, {mine.layers} layers)")
        n = int(s.get("engine_bytes", 0))
        blob = payload[offset:offset + n]
        if len(blob) != n:
            raise PayloadError(f"the payload is truncated (the engine of @{mine.name} needs {n} bytes)")
        if hashlib.sha256(blob).hexdigest() != s.get("engine_sha256"):
            raise PayloadError(f"the payload is corrupt (the engine of @{mine.name} fails its checksum)")
        engines[mine.name] = blob
        offset += n
    if offset != len(payload):
        raise PayloadError(f"the payload is corrupt ({len(payload) - offset} trailing bytes)")
    if kind == "engines" and any(not b for b in engines.values()):
        raise PayloadError("the payload lacks an engine for a segment")
    return engines
