"""A deleted compiled module frees its weights and native code (issue 15, item 7): the weight
blobs its IR holds leave the process-wide store, its JIT engine is collected, and the
process's RSS stays flat over repeated compiles of the same model."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest
import torch

import ziggurat
from tests.support import models
from ziggurat.ir.resource_refs import referenced_handles
from ziggurat.ir.resources import BLOBS

ROOT = Path(__file__).resolve().parents[2]

# Compile, call, delete, collect; ten times; RSS after each (a child process, so that
# nothing else this pytest worker did moves its memory). glibc keeps freed memory in the
# arenas of the threads that freed it (torch's and the native code's workers): malloc_trim
# hands it back first, so that RSS counts what is still allocated.
_CHILD = """
import ctypes, ctypes.util, gc, json, sys
sys.path.insert(0, {root!r})
import torch, ziggurat
from ziggurat.bench.memory import rss_bytes

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
trim = getattr(libc, "malloc_trim", None)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                            torch.nn.ReLU(), torch.nn.Linear(1024, 1024)).eval()
x = torch.randn(4, 1024)
rss = []
for _ in range(10):
    compiled = ziggurat.compile(model, (x,), backend={backend!r}, cache_dir={cache!r})
    compiled(x)
    del compiled
    gc.collect()
    if trim is not None:
        trim(0)
    rss.append(rss_bytes())
print(json.dumps(rss))
"""

PARAMETER_BYTES = 3 * (1024 * 1024 + 1024) * 4  # 12 MiB


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_rss_stays_flat_over_repeated_compiles(tmp_path: Path, backend: str) -> None:
    """Before the fix every compile kept its imported and its packed weights (2 x 12 MiB here)."""
    code = _CHILD.format(root=str(ROOT), backend=backend, cache=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    rss = json.loads(done.stdout.strip().splitlines()[-1])
    growth = rss[9] - rss[1]
    # One weight copy kept per compile would add 8 x 12 MiB; the margin is a fraction of one.
    assert growth < PARAMETER_BYTES // 2, f"RSS grew by {growth / 2**20:.1f} MiB from compile 2 to 10: {rss}"


def _compile(backend: str) -> ziggurat.backends.compiled_module.CompiledModule:  # pyright: ignore
    models.seeded()
    model = models.MLP((64, 256, 32)).eval()
    return ziggurat.compile(model, (torch.randn(2, 64),), backend=backend)


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference", "reference"])
def test_deleted_module_releases_its_blobs(backend: str) -> None:
    compiled = _compile(backend)
    handles = referenced_handles(compiled.module_ir)
    assert handles and handles <= BLOBS.live_handles()
    compiled(torch.randn(2, 64))
    module = weakref.ref(compiled.module_ir)
    del compiled
    gc.collect()
    assert module() is None
    assert not handles & BLOBS.live_handles()


def test_deleted_module_releases_its_native_code() -> None:
    compiled = _compile("cpu")
    library = weakref.ref(compiled.executable.library)
    engine = weakref.ref(compiled.executable.library._engine)  # pyright: ignore[reportPrivateUsage]
    del compiled
    gc.collect()
    assert library() is None and engine() is None


def test_compiled_module_keeps_only_the_blobs_it_reads() -> None:
    """The imported weights, once packed, are released at the end of the compile."""
    before = BLOBS.live_handles()
    compiled = _compile("cpu")
    made = BLOBS.live_handles() - before
    assert made == referenced_handles(compiled.module_ir) - before
    assert any("KN" in h for h in made) and not any(h.endswith(".weight") for h in made)


def test_loaded_module_releases_its_blobs(tmp_path: Path) -> None:
    path = tmp_path / "mlp.zig"
    compiled = _compile("cpu")
    compiled.save(path)
    del compiled
    gc.collect()
    before = BLOBS.live_handles()
    loaded = ziggurat.load(path)
    handles = referenced_handles(loaded.module_ir)
    assert handles and handles <= BLOBS.live_handles()
    del loaded
    gc.collect()
    assert BLOBS.live_handles() == before


def test_blobs_outside_a_compile_stay() -> None:
    """ziggurat-opt and direct pass use: the process owns the blobs made outside a compile."""
    from ziggurat.ir.resources import resource_attr, resource_tensor

    attr = resource_attr(torch.arange(100, dtype=torch.float32), "standalone_blob_test")
    gc.collect()
    assert torch.equal(resource_tensor(attr), torch.arange(100, dtype=torch.float32))


@pytest.mark.parametrize("tool", ["explain", "bisect"])
def test_explain_and_bisect_release_their_blobs(tool: str) -> None:
    models.seeded()
    model = models.MLP((64, 256, 32)).eval()
    gc.collect()
    before = BLOBS.live_handles()
    result = getattr(ziggurat, tool)(model, (torch.randn(2, 64),), backend="cpu")
    assert str(result)
    del result
    gc.collect()
    assert BLOBS.live_handles() == before

