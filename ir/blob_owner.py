"""Who keeps a weight blob alive.

The blobs behind ``dense_resource`` handles live in one process-wide store (xDSL resolves a
handle through the builtin dialect, with no module at hand), so the store cannot tell by
itself when a blob is no longer needed.  A :class:`BlobOwner` holds handles on behalf of
the IR that reads them: every blob created or parsed while an owner is current
(:func:`owning_blobs`) is held by it, and when the owner is collected its handles are
released; the store drops a blob once no owner holds it.  ``ziggurat.compile`` makes an
owner per compile and ties it to the compiled module (:func:`keep_blobs_with`), so deleting
the compiled module frees its weights.  Outside any such scope (``ziggurat-opt``, direct
use of the passes) the process owner holds blobs for the life of the process.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar

from xdsl.dialects.builtin import ModuleOp

#: (acquire one handle, release handles): the store's reference counting
Acquire = Callable[[str], None]
Release = Callable[[Iterable[str]], None]


class BlobOwner:
    """A set of blob handles held alive; released when this object is collected.

    ``borrows``: tensors given to the store while this owner is current are held without a copy
    until :meth:`~ziggurat.ir.resources.TensorBlobStore.settle` copies the ones still held
    (``ziggurat.compile`` settles before its backend builds).  A model's weights that the
    pipeline replaces by folded or packed ones are then never copied: GPT-2-small in bf16
    skipped a 475 MB copy of its float32 weights."""

    def __init__(self, acquire: Acquire, release: Release, borrows: bool = False) -> None:
        self._acquire = acquire
        self._release = release
        self.borrows = borrows
        self._handles: set[str] = set()
        # The finalizer must not reference ``self``: it runs when ``self`` is collected.
        self._finalizer = weakref.finalize(self, release, self._handles)

    @property
    def handles(self) -> frozenset[str]:
        return frozenset(self._handles)

    def hold(self, handle: str) -> None:
        if handle not in self._handles:
            self._acquire(handle)
            self._handles.add(handle)

    def release_except(self, keep: Iterable[str]) -> None:
        """Release every handle not in ``keep`` (blobs a compile made and no longer reads)."""
        dropped = self._handles - set(keep)
        self._handles -= dropped
        self._release(dropped)

    def made_since(self, before: frozenset[str]) -> bool:
        """Whether this owner holds a handle that is not in ``before``."""
        return not self._handles <= before

    def release_made_since(self, before: frozenset[str], keep: Iterable[str]) -> bool:
        """Release the handles taken since this owner held ``before`` that are not in ``keep``:
        a pipeline's intermediates (a folded cast a later pass widened, a weight it packed).
        Whether there were any."""
        dropped = self._handles - before - set(keep)
        self._handles -= dropped
        self._release(dropped)
        return bool(dropped)


_current: ContextVar[BlobOwner | None] = ContextVar("ziggurat_blob_owner", default=None)
#: module -> the owner of the blobs it reads, for as long as the module lives
_module_owners: weakref.WeakKeyDictionary[ModuleOp, list[BlobOwner]] = weakref.WeakKeyDictionary()


def current_owner() -> BlobOwner | None:
    """The owner new blobs go to (``None``: the process owner)."""
    return _current.get()


@contextlib.contextmanager
def owning_blobs(owner: BlobOwner) -> Iterator[BlobOwner]:
    """Blobs created or parsed within this context are held by ``owner``."""
    token = _current.set(owner)
    try:
        yield owner
    finally:
        _current.reset(token)


def keep_blobs_with(module: ModuleOp, owner: BlobOwner) -> None:
    """``owner`` (and so its blobs) lives as long as ``module`` does."""
    _module_owners.setdefault(module, []).append(owner)


__all__ = ["BlobOwner", "current_owner", "keep_blobs_with", "owning_blobs"]
