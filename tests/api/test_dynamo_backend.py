"""torch.compile(model, backend="ziggurat")."""

from __future__ import annotations

import logging

import pytest
import torch

from tests.support import models
from ziggurat.backends import dynamo


def test_registered_backend_compiles_graphs(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    torch._dynamo.reset()  # pyright: ignore[reportPrivateImportUsage]
    monkeypatch.setattr(dynamo, "DEFAULT_BACKEND", "reference")
    models.seeded()
    model = models.MLP().eval()
    x = torch.randn(3, 32)
    compiled = torch.compile(model, backend="ziggurat")
    with caplog.at_level(logging.INFO, logger="ziggurat"), torch.no_grad():
        out = compiled(x)
    torch.testing.assert_close(out, model(x))
    assert any("compiled a graph" in r.message for r in caplog.records)


def test_graph_it_cannot_take_runs_in_eager(caplog: pytest.LogCaptureFixture) -> None:
    torch._dynamo.reset()  # pyright: ignore[reportPrivateImportUsage]
    model = models.MLP().eval()
    x = torch.randn(3, 32)
    backend = dynamo.dynamo_backend("no-such-backend")
    with caplog.at_level(logging.WARNING, logger="ziggurat"), torch.no_grad():
        out = torch.compile(model, backend=backend)(x)
    torch.testing.assert_close(out, model(x))
    assert any("running this graph in eager" in r.message and "unknown backend" in r.message
               for r in caplog.records)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_three_batch_sizes_compile_symbolic_sizes_not_eager(backend: str, caplog: pytest.LogCaptureFixture) -> None:
    """The second batch size makes Dynamo pass SymInts: that graph compiles once with its
    symbols as dynamic_shapes and serves the third size too; nothing runs in eager."""
    torch._dynamo.reset()  # pyright: ignore[reportPrivateImportUsage]
    models.seeded()
    model = models.MLP().eval()
    compiled = torch.compile(model, backend=dynamo.dynamo_backend(backend), dynamic=None)
    before = dynamo.SYMBOLIC_GRAPHS_COMPILED[0]
    with caplog.at_level(logging.INFO, logger="ziggurat"), torch.no_grad():
        for n in (3, 5, 17):
            x = torch.randn(n, 32)
            torch.testing.assert_close(compiled(x), model(x))
    assert dynamo.SYMBOLIC_GRAPHS_COMPILED[0] == before + 1
    assert not any("running this graph in eager" in r.message for r in caplog.records)
    assert any("with symbolic sizes" in r.message for r in caplog.records)
