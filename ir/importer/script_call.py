"""The call of a scripted model (``ScriptModule``/``ScriptFunction``): its arguments bound to the
schema of ``forward`` as TorchScript binds them, defaults included.

``forward(self, Tensor x, Tensor? b=None, int k=2)`` compiled with ``(x,)`` imports the graph
with ``b = None`` and ``k = 2`` compiled in, and the compiled module keeps the call signature,
so it can be called as ``m(x)``, ``m(x, b=None)`` or ``m(x=x)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.errors import ModelImportError

P = inspect.Parameter


def script_signature(model: torch.jit.ScriptModule | torch.jit.ScriptFunction) -> inspect.Signature:
    """``forward``'s parameters (``self`` left out), kinds and defaults from its schema."""
    is_module = isinstance(model, torch.jit.ScriptModule)
    method: Any = model.forward if is_module else model
    arguments: list[Any] = list(method.schema.arguments)[1 if is_module else 0:]
    params: list[P] = []
    for a in arguments:
        kind = P.KEYWORD_ONLY if a.kwarg_only else P.POSITIONAL_OR_KEYWORD
        default = a.default_value if a.has_default_value() else P.empty
        params.append(P(a.name, kind, default=default))
    return inspect.Signature(params)


class ScriptCall:
    """The graph inputs (one per parameter) and the call signature of a scripted call."""

    def __init__(self, model: torch.jit.ScriptModule | torch.jit.ScriptFunction, args: Sequence[Any],
                 kwargs: Mapping[str, Any]) -> None:
        signature = script_signature(model)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ModelImportError(f"the example inputs do not fit forward{signature}: {e}", op="compile") from None
        bound.apply_defaults()
        #: one value per graph input, in order (defaults compiled in)
        self.graph_inputs: list[Any] = list(bound.arguments.values())
        self.signature: CallSignature | None = None
        if all(isinstance(v, torch.Tensor) or not _holds_tensor(v) for v in self.graph_inputs):
            count = [0]

            def on_tensor(_: torch.Tensor) -> int:
                count[0] += 1
                return count[0] - 1

            self.signature = CallSignature.bind(signature, args, kwargs, on_tensor)


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, list | tuple):
        return any(_holds_tensor(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())  # pyright: ignore[reportUnknownVariableType]
    return False
