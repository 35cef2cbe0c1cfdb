"""A module's weight blobs as raw bytes, each distinct blob once (saved modules).

MLIR text carries a blob as hex, twice its size; a saved module keeps its IR without the
blobs (``print_module(..., elide=True)``) and the blobs as one byte section: a table of
``{"handle", "offset", "length"}`` entries (blobs with the same bytes share one range;
ranges start at multiples of 64) and the bytes.  :func:`pack_blobs` writes them,
:func:`unpack_blobs` gives them back to the handles a parse declared, after checking every
entry against the types the IR gives each handle: anything inconsistent is a
:class:`BlobTableError`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute

from ziggurat.ir.resource_refs import op_resource_attrs
from ziggurat.ir.resources import BLOBS, tensor_bytes
from ziggurat.ir.types import UnsupportedTypeError, dtype_of, is_quantized_element, shape_of

ALIGNMENT = 64


class BlobTableError(ValueError):
    """The blob table does not match the IR (the message says how)."""


def resource_types(module: ModuleOp) -> dict[str, TensorType[Attribute]]:
    """Each ``dense_resource`` handle of ``module`` -> its type; a handle used with two
    types, or with a type that is not a tensor, is a :class:`BlobTableError`."""
    types: dict[str, TensorType[Attribute]] = {}
    for _op, attr in op_resource_attrs(module):
        handle, ty = attr.resource_handle.data, attr.type
        if not isinstance(ty, TensorType):
            raise BlobTableError(f"dense_resource<{handle}> has the type {ty}, not a tensor type")
        seen = types.setdefault(handle, ty)  # pyright: ignore[reportUnknownArgumentType]
        if seen != ty:
            raise BlobTableError(f"dense_resource<{handle}> is used as {seen} and as {ty}")
    return types


def _nbytes(ty: TensorType[Attribute]) -> int:
    if is_quantized_element(ty):  # its scale and zero point are not bytes of the blob
        raise UnsupportedTypeError(f"a {ty} tensor has no byte image")
    n = 1
    for d in shape_of(ty):
        n *= d
    return n * torch.empty((), dtype=dtype_of(ty)).element_size()


def pack_blobs(module: ModuleOp) -> tuple[list[dict[str, Any]], bytes]:
    """The table and bytes of every blob ``module`` refers to (handles sorted)."""
    table: list[dict[str, Any]] = []
    chunks: list[bytes | memoryview] = []
    placed: dict[bytes, tuple[int, int]] = {}
    size = 0
    for handle, ty in sorted(resource_types(module).items()):
        data = tensor_bytes(BLOBS.tensor(handle, ty).contiguous())
        if data is None:
            raise BlobTableError(f"dense_resource<{handle}> ({ty}) has no byte image to save")
        view = data.data  # uint8, contiguous
        digest = hashlib.sha256(view).digest()
        if digest not in placed:
            pad = -size % ALIGNMENT
            chunks += [b"\0" * pad, view]
            placed[digest] = (size + pad, len(view))
            size += pad + len(view)
        offset, length = placed[digest]
        table.append({"handle": handle, "offset": offset, "length": length})
    return table, b"".join(chunks)


def unpack_blobs(module: ModuleOp, declared: Mapping[str, str], table: Sequence[Mapping[str, Any]],
                 data: bytes) -> None:
    """Give each handle a parse of ``module`` ``declared`` (its text's handle -> the store's)
    its bytes from ``table``/``data``."""
    entries: dict[str, Mapping[str, Any]] = {}
    for entry in table:
        handle = entry["handle"]
        if handle in entries:
            raise BlobTableError(f"the blob table lists '{handle}' twice")
        offset, length = entry["offset"], entry["length"]
        if offset < 0 or length < 0 or offset + length > len(data):
            raise BlobTableError(f"the blob '{handle}' lies outside the blob section "
                                 f"({offset}+{length} of {len(data)} bytes)")
        entries[handle] = entry
    unused = sorted(set(entries) - set(declared))
    if unused:
        raise BlobTableError(f"the blob table holds '{unused[0]}', which the IR does not use")
    types = resource_types(module)
    for text_handle, handle in declared.items():
        entry = entries.get(text_handle)
        if entry is None:
            raise BlobTableError(f"the IR uses dense_resource<{text_handle}>, which the file does not hold")
        ty = types.get(handle)
        if ty is None:
            continue  # declared but not referenced by any op that survived parsing
        try:
            expected, dtype = _nbytes(ty), dtype_of(ty)
        except UnsupportedTypeError as e:
            raise BlobTableError(f"dense_resource<{text_handle}>: {e}") from None
        if entry["length"] != expected:
            raise BlobTableError(f"the blob '{text_handle}' holds {entry['length']} bytes, its type "
                                 f"{ty} needs {expected}")
        raw = np.frombuffer(data, dtype=np.uint8, count=expected, offset=entry["offset"]).copy()
        flat = torch.from_numpy(raw).view(dtype) if expected else torch.empty(0, dtype=dtype)
        BLOBS.provide(handle, flat.reshape(shape_of(ty)))


__all__ = ["ALIGNMENT", "BlobTableError", "pack_blobs", "resource_types", "unpack_blobs"]
