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
