"""Weight blobs behind ``dense_resource<handle>`` attributes.

xDSL keeps dialect resources as hex strings in the builtin dialect's
``OpAsmDialectInterface``.  Model weights are large, so Ziggurat installs a
subclass that stores them as torch tensors and produces MLIR's blob text
(``"0x" + 4-byte alignment + raw bytes``) only when a module is printed, and
decodes parsed blobs lazily.  ``elided_resources()`` prints handles without
data (``--elide-resources``), which keeps dumps of big models readable.
"""

from __future__ import annotations

import contextlib
import re
import struct
from collections.abc import Iterable, Iterator

import numpy as np
import torch
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr, TensorType
from xdsl.ir import Attribute

from ziggurat.ir.types import dtype_of, shape_of

_BLOB_ALIGNMENT = 64


def _blob_text(tensor: torch.Tensor) -> str:
    data = tensor.contiguous().view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
    return "0x" + struct.pack("<I", _BLOB_ALIGNMENT).hex() + data.hex()


class TensorBlobStore(OpAsmDialectInterface):
    """Builtin-dialect resource storage holding tensors instead of hex strings."""

    def __init__(self) -> None:
        super().__init__()
        self._tensors: dict[str, torch.Tensor] = {}
        self._parsed: dict[str, str] = {}
        # Handles of the module being parsed -> the keys they were given (a parsed handle
        # that names an existing blob is renamed, consistently, until its data is parsed).
        self._pending: dict[str, str] = {}
        self.elide = False

    # -- OpAsmDialectInterface (called by the parser) -------------------------------
    def declare_resource(self, key: str) -> str:
        if key in self._pending:
            return self._pending[key]
        unique = self._unique(key)
        self._parsed[unique] = ""
        self._pending[key] = unique
        return unique

    def parse_resource(self, key: str, val: str) -> None:
        if not val.startswith("0x"):
            raise ValueError(f"blob must be a hex string, got: {val[:20]}")
        if key not in self._parsed and key not in self._tensors:
            raise KeyError(f"resource {key} was not declared")
        self._tensors.pop(key, None)
        self._parsed[key] = val
        self._pending = {k: v for k, v in self._pending.items() if v != key}

    def lookup(self, key: str) -> str | None:
        if key in self._tensors:
            return _blob_text(self._tensors[key])
        return self._parsed.get(key) or None

    def build_resources(self, keys: Iterable[str]) -> dict[str, str]:
        if self.elide:
            return {}
        result: dict[str, str] = {}
        for key in keys:
            text = self.lookup(key)
            if text:
                result[key] = text
        return result

    # -- tensors ----------------------------------------------------------------
    def _unique(self, key: str) -> str:
        key = re.sub(r"[^A-Za-z0-9_.]", "_", key) or "blob"
        if key[0].isdigit():
            key = "_" + key
        if key not in self._tensors and key not in self._parsed and key not in self._pending.values():
            return key
        n = 0
        while f"{key}_{n}" in self._tensors or f"{key}_{n}" in self._parsed or f"{key}_{n}" in self._pending.values():
            n += 1
        return f"{key}_{n}"

    def add_tensor(self, key: str, tensor: torch.Tensor) -> str:
        key = self._unique(key)
        self._tensors[key] = tensor.detach().to("cpu").contiguous().clone()
        return key

    def tensor(self, key: str, ty: TensorType[Attribute]) -> torch.Tensor:
        if key in self._tensors:
            return self._tensors[key]
        text = self._parsed.get(key)
        if not text:
            raise KeyError(f"dense_resource<{key}> has no data (elided or never declared)")
        raw = bytes.fromhex(text[2:])[4:]
        dtype = dtype_of(ty)
        shape = shape_of(ty)
        np_bytes = np.frombuffer(raw, dtype=np.uint8).copy()
        flat = torch.from_numpy(np_bytes).view(dtype) if np_bytes.size else torch.empty(0, dtype=dtype)
        expected = int(np.prod(shape)) if shape else 1
        if flat.numel() != expected:
            raise ValueError(
                f"dense_resource<{key}> holds {flat.numel()} elements, its type {ty} needs {expected}"
            )
        result = flat.reshape(shape)
        self._tensors[key] = result
        del self._parsed[key]
        return result


def _install() -> TensorBlobStore:
    interfaces = Builtin._interfaces  # pyright: ignore[reportPrivateUsage]
    for i, existing in enumerate(interfaces):
        if isinstance(existing, TensorBlobStore):
            return existing
        if isinstance(existing, OpAsmDialectInterface):
            store = TensorBlobStore()
            interfaces[i] = store
            return store
    store = TensorBlobStore()
    interfaces.append(store)
    return store


BLOBS: TensorBlobStore = _install()


def resource_attr(tensor: torch.Tensor, name_hint: str) -> DenseResourceAttr:
    """A ``dense_resource`` attribute owning a copy of ``tensor``'s data."""
    from ziggurat.ir.types import tensor_type_of

    key = BLOBS.add_tensor(name_hint, tensor)
    return DenseResourceAttr.from_params(key, tensor_type_of(tensor))


def resource_tensor(attr: DenseResourceAttr) -> torch.Tensor:
    """The tensor behind a ``dense_resource`` attribute."""
    ty = attr.type
    assert isinstance(ty, TensorType)
    return BLOBS.tensor(attr.resource_handle.data, ty)


@contextlib.contextmanager
def elided_resources(elide: bool = True) -> Iterator[None]:
    """Within this context, printed modules reference blobs without their data."""
    old = BLOBS.elide
    BLOBS.elide = elide
    try:
        yield
    finally:
        BLOBS.elide = old
