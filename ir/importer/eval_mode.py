"""The model in inference mode while a frontend traces it, restored afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def eval_mode(model: torch.nn.Module) -> Iterator[None]:
    """Put ``model`` in eval mode for the block and restore its mode after it.

    A module whose ``train``/``eval`` refuses (the graph module of a ``torch.export`` program, as
    PT2E quantization returns it: its mode was fixed when it was exported) is traced as it is."""
    was_training = model.training
    switched = False
    if was_training:
        try:
            model.eval()
            switched = True
        except NotImplementedError:
            pass
    try:
        yield
    finally:
        if switched:
            model.train(was_training)
