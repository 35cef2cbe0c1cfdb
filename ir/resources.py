"""Weight blobs behind ``dense_resource<handle>`` attributes.

xDSL keeps dialect resources as hex strings in the builtin dialect's
``OpAsmDialectInterface``.  Model weights are large, so Ziggurat installs a
subclass that stores them as torch tensors and produces MLIR's blob text
(``"0x" + 4-byte alignment + raw bytes``) only when a module is printed, and
decodes parsed blobs lazily.  ``elided_resources()`` prints handles without
data (``--elide-resources``), which keeps dumps of big models readable.

A blob lives while a :class:`~ziggurat.ir.blob_owner.BlobOwner` holds its handle (see
``blob_owner``): a compiled module's blobs are freed with it.  Handles are named after
the tensor's name (a parameter's name), never after a process-wide counter: a tensor
with the same bytes as a live blob of that name *is* that blob (a recompile shares it and
names it the same); a tensor of other bytes takes the plain name when it is free, else the
name plus a digest of its bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import struct
import threading
from collections.abc import Iterable, Iterator

import numpy as np
import torch
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr, TensorType
from xdsl.ir import Attribute

from ziggurat.ir.blob_owner import BlobOwner, current_owner
from ziggurat.ir.types import QUANTIZED_DTYPES, dtype_of, shape_of

_BLOB_ALIGNMENT = 64


def tensor_bytes(tensor: torch.Tensor) -> np.ndarray | None:
    """The bytes of a contiguous CPU tensor as a uint8 array (no copy); ``None`` for a
    tensor without a plain byte image (quantized)."""
    try:
        return tensor.reshape(-1).view(torch.uint8).numpy()
    except (RuntimeError, TypeError):
        return None


def _blob_text(tensor: torch.Tensor) -> str:
    data = tensor_bytes(tensor.contiguous()) if tensor.numel() else None
    return "0x" + struct.pack("<I", _BLOB_ALIGNMENT).hex() + (data.tobytes().hex() if data is not None else "")


def _same_blob(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    x, y = tensor_bytes(a), tensor_bytes(b)
    return x is not None and y is not None and bool(np.array_equal(x, y))


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` may be a view of ``b``'s memory (``b`` given by a caller: its weights)."""
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    except RuntimeError:  # no data pointer (a tensor subclass): assume it does
        return True


def _digest(tensor: torch.Tensor) -> str | None:
    data = tensor_bytes(tensor)
    if data is None:
        return None
    h = hashlib.blake2b(digest_size=6)
    h.update(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
    h.update(data.data)
    return h.hexdigest()


def _sanitize(key: str) -> str:
    key = re.sub(r"[^A-Za-z0-9_.]", "_", key) or "blob"
    return "_" + key if key[0].isdigit() else key


class TensorBlobStore(OpAsmDialectInterface):
    """Builtin-dialect resource storage holding tensors instead of hex strings."""

    def __init__(self) -> None:
        super().__init__()
        self._tensors: dict[str, torch.Tensor] = {}
        self._parsed: dict[str, str] = {}
        # Handles of the module being parsed -> the keys they were given (a parsed handle
        # that names an existing blob is renamed, consistently, until its data is parsed).
        self._pending: dict[str, str] = {}
        #: handle -> how many owners hold it
        self._refs: dict[str, int] = {}
        #: name -> the handles ``add_tensor`` gave other bytes under that name
        self._variants: dict[str, set[str]] = {}
        #: handles whose tensor is the caller's own memory, not yet copied (see ``settle``)
        self._borrowed: set[str] = set()
        self._lock = threading.RLock()
        #: how deep this thread is inside the store's own operations, and the releases that
        #: owners' finalizers asked for meanwhile (see ``release``)
        self._depth = 0
        self._deferred: list[list[str]] = []
        self.elide = False
        #: holds the blobs made outside any compile, for the life of the process
        self.process_owner = self.new_owner()

    # -- ownership (see blob_owner) ---------------------------------------------------
    def new_owner(self, borrows: bool = False) -> BlobOwner:
        """``borrows``: blobs added under it keep the caller's tensor until :meth:`settle`."""
        return BlobOwner(self._acquire, self.release, borrows)

    def settle(self, owner: BlobOwner, also: Iterable[str] = ()) -> None:
        """Copy the borrowed blobs ``owner`` holds, and those among ``also`` whoever holds them
        (a module about to be built reads none of the caller's memory: a dynamic module's
        symbolic level, whose owner borrows for its life, shares its blobs with the builds made
        from it).  From now on they are the store's own, and a later write into the model's
        weights does not reach them.  The owner borrows no more."""
        with self._lock:
            owner.borrows = False
            for handle in sorted((owner.handles | set(also)) & self._borrowed):
                self._own(handle)

    def _own(self, handle: str) -> None:
        if handle in self._borrowed:
            self._tensors[handle] = self._tensors[handle].clone()
            self._borrowed.discard(handle)

    def borrowed(self) -> frozenset[str]:
        """Handles whose blob is still the caller's tensor (tests)."""
        with self._lock:
            return frozenset(self._borrowed)

    def _owner(self) -> BlobOwner:
        return current_owner() or self.process_owner

    def _acquire(self, handle: str) -> None:
        with self._lock:
            self._refs[handle] = self._refs.get(handle, 0) + 1

    @contextlib.contextmanager
    def _operation(self) -> Iterator[None]:
        """One of the store's own operations: releases made meanwhile wait for its end."""
        with self._lock:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                while self._depth == 0 and self._deferred:
                    handles = self._deferred.pop()
                    self._release_now(handles)

    def release(self, handles: Iterable[str]) -> None:
        """One owner lets go of ``handles``; a blob no owner holds is dropped.

        An owner's finalizer may run at any allocation, so also inside ``add_tensor`` between
        finding a live blob to share and holding it.  A release made while this thread is
        inside such an operation is applied when the operation ends, after the new holder
        has counted itself."""
        with self._lock:
            if self._depth:
                self._deferred.append(list(handles))
                return
            self._release_now(handles)

    def _release_now(self, handles: Iterable[str]) -> None:
        with self._lock:
            dropped: set[str] = set()
            for handle in handles:
                n = self._refs.get(handle, 0) - 1
                if n > 0:
                    self._refs[handle] = n
                    continue
                self._refs.pop(handle, None)
                self._tensors.pop(handle, None)
                self._borrowed.discard(handle)
                self._parsed.pop(handle, None)
                dropped.add(handle)
            if dropped and self._pending:
                self._pending = {k: v for k, v in self._pending.items() if v not in dropped}
            if dropped and self._variants:
                for base in list(self._variants):
                    self._variants[base] -= dropped
                    if not self._variants[base]:
                        del self._variants[base]

    def live_handles(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._tensors) | frozenset(self._parsed)

    # -- OpAsmDialectInterface (called by the parser) -------------------------------
    def declare_resource(self, key: str) -> str:
        with self._operation():
            unique = self._pending.get(key)
            if unique is None:
                unique = self._numbered(_sanitize(key))
                self._parsed[unique] = ""
                self._pending[key] = unique
            self._owner().hold(unique)
            return unique

    def parse_resource(self, key: str, val: str) -> None:
        if not val.startswith("0x"):
            raise ValueError(f"blob must be a hex string, got: {val[:20]}")
        with self._lock:
            if key not in self._parsed and key not in self._tensors:
                raise KeyError(f"resource {key} was not declared")
            self._tensors.pop(key, None)
            self._borrowed.discard(key)
            self._parsed[key] = val
            self._pending = {k: v for k, v in self._pending.items() if v != key}

    def lookup(self, key: str) -> str | None:
        tensor = self._tensors.get(key)
        if tensor is not None:
            return _blob_text(tensor)
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

    @contextlib.contextmanager
    def parsing(self) -> Iterator[dict[str, str]]:
        """Parse one module within this context: it yields, once the context ends, the
        handles the module declared (its text's handle -> the handle in this store) whose
        data did not come with the text, and the renames stay local to that module."""
        with self._lock:
            saved, self._pending = self._pending, {}
        declared: dict[str, str] = {}
        try:
            yield declared
        finally:
            with self._lock:
                declared.update(self._pending)
                self._pending = saved

    # -- tensors ----------------------------------------------------------------
    def _taken(self, key: str) -> bool:
        return key in self._tensors or key in self._parsed or key in self._refs

    def _numbered(self, key: str) -> str:
        if not self._taken(key):
            return key
        n = 0
        while self._taken(f"{key}_{n}"):
            n += 1
        return f"{key}_{n}"

    def _is(self, key: str, tensor: torch.Tensor) -> bool:
        existing = self._tensors.get(key)
        return existing is not None and _same_blob(existing, tensor)

    def add_tensor(self, key: str, tensor: torch.Tensor, borrow: bool = False, given: bool = False) -> str:
        """Store a copy of ``tensor`` (held by the current owner); returns its handle. A live
        blob of ``key`` (or of a variant of it) with the same bytes is shared; otherwise the
        handle is ``key``, or, when a blob of other bytes has that name, ``key`` and a digest
        of the bytes.  ``borrow`` (the importers' constants: a model's weights), under an
        owner that ``borrows``: a tensor already contiguous on the CPU is kept as it is until
        :meth:`settle`.  Other tensors (the ones passes make) are copied here as before, and
        settling never copies them again; unless ``given``: a tensor a pass made for this blob
        alone (a packed weight), stored as it is (a view is still copied)."""
        data = tensor.detach().to("cpu").contiguous()
        owner = self._owner()
        with self._operation():
            base = _sanitize(key)
            name = next((n for n in (base, *sorted(self._variants.get(base, ()))) if self._is(n, data)), None)
            if name is None:
                name = base
                if self._taken(base):
                    digest = _digest(data)
                    name = self._numbered(f"{base}_{digest}" if digest is not None else base)
                    self._variants.setdefault(base, set()).add(name)
                shared = _shares_memory(data, tensor)
                if shared and borrow and owner.borrows:  # the caller's tensor, copied at settle
                    self._tensors[name] = data
                    self._borrowed.add(name)
                else:
                    self._tensors[name] = data.clone() if shared and not (given and data._base is None) else data
            elif not owner.borrows:
                self._own(name)  # shared by an owner that keeps no borrowed blob
            owner.hold(name)
            return name

    def provide(self, key: str, tensor: torch.Tensor) -> None:
        """The data of ``key``, declared by a parse whose text did not carry it."""
        with self._lock:
            if self._parsed.get(key) != "" or key in self._tensors:
                raise KeyError(f"resource {key} is not awaiting data")
            del self._parsed[key]
            self._tensors[key] = tensor

    def tensor(self, key: str, ty: TensorType[Attribute]) -> torch.Tensor:
        with self._lock:
            if key in self._tensors:
                return self._tensors[key]
            text = self._parsed.get(key)
            if not text:
                raise KeyError(f"dense_resource<{key}> has no data (elided, never declared, "
                               "or released with the module that held it)")
            raw = bytes.fromhex(text[2:])[4:]
            dtype = dtype_of(ty)
            if dtype in QUANTIZED_DTYPES:
                raise ValueError(f"dense_resource<{key}>: a {ty} tensor has no byte image (its scale and "
                                 "zero point are not bytes of the blob)")
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


def resource_attr(tensor: torch.Tensor, name_hint: str, borrow: bool = False, given: bool = False) -> DenseResourceAttr:
    """A ``dense_resource`` attribute owning a copy of ``tensor``'s data (``borrow``, ``given``:
    see :meth:`TensorBlobStore.add_tensor`)."""
    from ziggurat.ir.types import tensor_type_of

    key = BLOBS.add_tensor(name_hint, tensor, borrow, given)
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
