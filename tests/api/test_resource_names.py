"""Weight blob names are deterministic (issue 15, item 7): derived from the parameter names
and the bytes, never from a process-wide counter, so a recompile of the same model names
its weights the same (and shares them) and hits the object cache."""

from __future__ import annotations

import gc
import re
from pathlib import Path

import torch

import ziggurat
from tests.support import models
from tests.support.host import weight_panels
from ziggurat.ir.resource_refs import referenced_handles
from ziggurat.ir.resources import BLOBS, resource_attr, resource_tensor


def _model(seed: int) -> torch.nn.Module:
    models.seeded(seed)
    return models.MLP((16, 64, 8)).eval()


def test_recompile_names_weights_the_same_and_hits_the_cache(tmp_path: Path) -> None:
    x = torch.randn(3, 16)
    model = _model(0)
    first = ziggurat.compile(model, (x,), cache_dir=tmp_path)
    second = ziggurat.compile(model, (x,), cache_dir=tmp_path)  # the first is still alive
    assert first.report.stats["object cache hit"] is False
    assert second.report.stats["object cache hit"] is True
    names = referenced_handles(first.module_ir)
    assert names == referenced_handles(second.module_ir)
    # the parameter's name, with a digest of the bytes if another live blob has that name
    assert all(re.fullmatch(rf"net(\.\d\.bias|_\d_weight_{weight_panels()})(_[0-9a-f]{{12}})?", n) for n in names), names
    assert first.ir["loop"] == second.ir["loop"]
    assert torch.equal(first(x), second(x))


def test_recompile_shares_the_blobs() -> None:
    x = torch.randn(3, 16)
    model = _model(0)
    first = ziggurat.compile(model, (x,), backend="reference", passes="graph-opt,prepack-weights")
    second = ziggurat.compile(model, (x,), backend="reference", passes="graph-opt,prepack-weights")
    for op in first.module_ir.walk():
        value = op.properties.get("value")
        if value is not None and "dense_resource" in str(value):
            twin = [o for o in second.module_ir.walk() if o.properties.get("value") == value]
            assert twin and resource_tensor(value) is resource_tensor(twin[0].properties["value"])  # pyright: ignore


def test_other_weights_under_the_same_names_get_names_from_their_bytes() -> None:
    x = torch.randn(3, 16)
    gc.collect()
    a = ziggurat.compile(_model(0), (x,), backend="reference")
    b = ziggurat.compile(_model(1), (x,), backend="reference")
    b_again = ziggurat.compile(_model(1), (x,), backend="reference")
    names_a, names_b = referenced_handles(a.module_ir), referenced_handles(b.module_ir)
    assert names_a.isdisjoint(names_b)
    assert all(re.fullmatch(r"net\.\d\.(weight|bias)_[0-9a-f]{12}", n) for n in names_b), names_b
    assert referenced_handles(b_again.module_ir) == names_b
    assert torch.equal(b(x), _model(1)(x)) and torch.equal(a(x), _model(0)(x))


def test_recompile_names_weights_as_the_first_compile_did() -> None:
    """Also when the first compile's names carry digests (another model held the plain
    names) and that other model is gone by the recompile."""
    x = torch.randn(3, 16)
    gc.collect()
    other = ziggurat.compile(_model(1), (x,), backend="reference")
    first = ziggurat.compile(_model(0), (x,), backend="reference")
    names = referenced_handles(first.module_ir)
    assert names.isdisjoint(referenced_handles(other.module_ir))
    del other
    gc.collect()
    assert referenced_handles(ziggurat.compile(_model(0), (x,), backend="reference").module_ir) == names


def test_store_names() -> None:
    w = torch.arange(40, dtype=torch.float32)
    name = BLOBS.add_tensor("test_store_names.w", w)
    assert name == "test_store_names.w"
    assert BLOBS.add_tensor("test_store_names.w", w.clone()) == name  # same bytes: the same blob
    other = BLOBS.add_tensor("test_store_names.w", w + 1)
    assert other.startswith("test_store_names.w_") and other != name
    assert BLOBS.add_tensor("test_store_names.w", w + 1) == other
    # same bytes, other dtype or shape: another blob
    assert BLOBS.add_tensor("test_store_names.w", w.view(torch.int32)) not in (name, other)
    assert BLOBS.add_tensor("test_store_names.w", w.reshape(4, 10)) not in (name, other)
    attr = resource_attr(w, "test_store_names.w")
    assert attr.resource_handle.data == name and torch.equal(resource_tensor(attr), w)
