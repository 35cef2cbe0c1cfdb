"""The model in inference mode while a frontend traces it, restored afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def eval_mode(model: torch.nn.Module) -> Iterator[None]:
    """Put ``model`` and every submodule in eval mode for the block, then give each its own
    mode back (a submodule left in training mode under an eval model keeps it).

    A module whose ``eval()`` refuses (the graph module of a ``torch.export`` program, as PT2E
    quantization returns it: its mode was fixed when it was exported) is traced as it is."""
    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
    except NotImplementedError:
        pass
    try:
        yield
    finally:
        for module, training in modes:
            module.training = training
