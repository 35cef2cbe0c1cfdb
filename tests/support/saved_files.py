"""Taking saved modules (``compiled.save``) apart and forging them back together.

Tests of malformed input rewrite a file's header, its IR or its object code and, to get past
the checksums, recompute them: a *forged* file, as a malicious or buggy writer would make.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from typing import Any

from ziggurat.backends.serialization import MAGIC

_LEN = struct.Struct("<Q")


def split(data: bytes, magic: bytes = MAGIC) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The header and the sections (by name, in file order) of a well-formed saved file
    (``magic``: a dynamic-shape module's file has its own)."""
    start = len(magic) + _LEN.size
    (n,) = _LEN.unpack_from(data, len(magic))
    header = json.loads(data[start:start + n])
    sections: dict[str, bytes] = {}
    offset = start + n
    for s in header["sections"]:
        sections[s["name"]] = data[offset:offset + s["length"]]
        offset += s["length"]
    return header, sections


def join(header: dict[str, Any], sections: dict[str, bytes], forge: bool = True, magic: bytes = MAGIC) -> bytes:
    """A saved file of ``header`` and ``sections``; ``forge``: with their lengths and hashes
    recomputed (else the header's own entries are kept)."""
    if forge:
        header = dict(header, sections=[
            {"name": k, "length": len(v), "sha256": hashlib.sha256(v).hexdigest()} for k, v in sections.items()])
    head = json.dumps(header).encode()
    return magic + _LEN.pack(len(head)) + head + b"".join(sections.values())


HeaderEdit = Callable[[dict[str, Any]], None]


def delete_key(*keys: str | int) -> HeaderEdit:
    """An edit that deletes ``header[k0][k1]...`` (the last key)."""
    def edit(header: dict[str, Any]) -> None:
        target: Any = header
        for k in keys[:-1]:
            target = target[k]
        del target[keys[-1]]

    return edit


def set_key(value: Any, *keys: str | int) -> HeaderEdit:
    """An edit that sets ``header[k0][k1]...`` to ``value``."""
    def edit(header: dict[str, Any]) -> None:
        target: Any = header
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value

    return edit


def rewrite_header(data: bytes, header: Any) -> bytes:
    """``data`` with its header replaced by the JSON of ``header`` (sections untouched)."""
    start = len(MAGIC) + _LEN.size
    (n,) = _LEN.unpack_from(data, len(MAGIC))
    head = json.dumps(header).encode()
    return MAGIC + _LEN.pack(len(head)) + head + data[start + n:]


def split_object_payload(payload: bytes) -> tuple[bytes, bytes]:
    """A cpu payload's (machine header, ELF object)."""
    (n,) = _LEN.unpack_from(payload)
    return payload[:_LEN.size + n], payload[_LEN.size + n:]


def with_object(data: bytes, obj: bytes) -> bytes:
    """A saved cpu module whose object code is replaced by ``obj``, checksums forged."""
    header, sections = split(data)
    machine, _ = split_object_payload(sections["payload"])
    sections["payload"] = machine + obj
    return join(header, sections)


def object_of(data: bytes) -> bytes:
    return split_object_payload(split(data)[1]["payload"])[1]
