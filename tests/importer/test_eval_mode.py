"""Frontends trace a model in eval mode (``ir/importer/eval_mode.py``)."""

from __future__ import annotations

import pytest
import torch

import ziggurat


@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_eval_mode_covers_submodules_and_restores_each(frontend: str) -> None:
    """A model in eval mode with a dropout left training is traced in eval mode throughout
    (no dropout), and every module gets its own mode back afterwards (a regression of
    94fb1b6, which skipped ``eval()`` for a model already in eval mode)."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.ReLU()).eval()
    model[1].train()
    x = torch.randn(4, 8)
    compiled = ziggurat.compile(model, (x,), backend="cpu", frontend=frontend)
    assert [m.training for m in model.modules()] == [False, False, True, False]
    with torch.no_grad():
        want = model[2](model[0](x))
    torch.testing.assert_close(compiled(x), want)


def test_a_module_whose_eval_refuses_is_traced_as_it_is() -> None:
    """The GraphModule of an exported program raises on ``eval()`` (as PT2E's does): it
    compiles, in the mode it was exported in."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval()
    x = torch.randn(2, 8)
    exported = torch.export.export(model, (x,)).module()

    def refuse(mode: bool = True) -> torch.nn.Module:
        raise NotImplementedError("Calling train() or eval() is not supported for exported models.")

    exported.train = refuse  # type: ignore[method-assign]
    exported.eval = lambda: refuse(False)  # type: ignore[method-assign]
    compiled = ziggurat.compile(exported, (x,), backend="cpu")
    torch.testing.assert_close(compiled(x), model(x))
