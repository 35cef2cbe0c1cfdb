"""A blob shared with an owner that the cyclic garbage collector finalizes in the middle of
``add_tensor`` (or ``declare_resource``) stays alive for the new owner.

Seen in the fuzzer (seed 3, program 1148, in a worker that had compiled a thousand programs):
``torch.literal: dense_resource<c1_...> has no data``.  ``add_tensor`` found a live blob with the
same bytes, held by a compiled module that was already garbage (in a reference cycle); the
collector ran between the lookup and ``hold``, the old owner's finalizer released the blob, and
the new owner then held a handle whose data was gone.  Releases that a finalizer makes while
the store is inside one of its own operations are now applied when that operation ends.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
import torch
from xdsl.dialects.builtin import TensorType, f32

import ziggurat.ir.resources as resources
from ziggurat.ir.blob_owner import owning_blobs
from ziggurat.ir.resources import BLOBS


class _Cycle:
    def __init__(self, owner: Any) -> None:
        self.owner = owner
        self.me = self  # only the cyclic collector frees it


def _garbage_owner_holding(name: str, t: torch.Tensor) -> str:
    owner = BLOBS.new_owner()
    with owning_blobs(owner):
        handle = BLOBS.add_tensor(name, t)
    _Cycle(owner)
    del owner
    return handle


@pytest.fixture
def collect_inside_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector runs inside the store's byte comparison, as an allocation there may make it."""
    same = resources._same_blob  # pyright: ignore[reportPrivateUsage]

    def same_then_collect(a: torch.Tensor, b: torch.Tensor) -> bool:
        result = same(a, b)
        gc.collect()
        return result

    monkeypatch.setattr(resources, "_same_blob", same_then_collect)


@pytest.mark.usefixtures("collect_inside_the_store")
def test_a_shared_blob_outlives_the_garbage_owner_it_was_shared_with() -> None:
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    gc.disable()
    try:
        old = _garbage_owner_holding("blob_gc_probe", t)
        new_owner = BLOBS.new_owner()
        with owning_blobs(new_owner):
            handle = BLOBS.add_tensor("blob_gc_probe", t)
    finally:
        gc.enable()
    assert handle == old  # shared, not copied
    ty = TensorType(f32, [3, 4])
    assert torch.equal(BLOBS.tensor(handle, ty), t)
    del new_owner
    gc.collect()
    assert handle not in BLOBS.live_handles()  # and freed once its last owner goes


@pytest.mark.usefixtures("collect_inside_the_store")
def test_a_variant_blob_outlives_the_garbage_owner_it_was_shared_with() -> None:
    """The digest-named variant (another blob already has the plain name), as in the fuzzer."""
    keep = BLOBS.new_owner()
    with owning_blobs(keep):
        BLOBS.add_tensor("blob_gc_variant", torch.zeros(2))
    t = torch.ones(5)
    gc.disable()
    try:
        old = _garbage_owner_holding("blob_gc_variant", t)
        assert old != "blob_gc_variant"
        new_owner = BLOBS.new_owner()
        with owning_blobs(new_owner):
            handle = BLOBS.add_tensor("blob_gc_variant", t)
    finally:
        gc.enable()
    assert handle == old
    assert torch.equal(BLOBS.tensor(handle, TensorType(f32, [5])), t)
    del new_owner, keep
    gc.collect()
    assert not {h for h in BLOBS.live_handles() if h.startswith("blob_gc_variant")}
