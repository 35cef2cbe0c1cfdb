"""``torch.compile(model, backend="ziggurat")``: Ziggurat as a Dynamo backend.

Dynamo hands over each captured FX graph with example inputs; the graph goes through the
``torch.export`` frontend (TorchScript tracing if that fails) and the chosen Ziggurat backend.
A graph Ziggurat cannot take runs in eager, with a log line saying why.  Registered under
the ``torch_dynamo_backends`` entry point; ``ziggurat.dynamo_backend(backend=..., **options)``
makes a backend with other options (``torch.compile(m, backend=ziggurat.dynamo_backend("reference"))``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import torch

log = logging.getLogger("ziggurat")

DEFAULT_BACKEND = "cpu"


def _real(inputs: Sequence[Any]) -> list[Any]:
    """Dynamo may pass fake tensors: materialize real ones of the same shape/dtype."""
    from torch._subclasses.fake_tensor import FakeTensor

    real: list[Any] = []
    for x in inputs:
        if isinstance(x, FakeTensor):
            real.append(torch.zeros(x.shape, dtype=x.dtype))
        else:
            real.append(x)
    return real


def dynamo_backend(backend: str | None = None, **options: Any) -> Callable[..., Any]:
    """A Dynamo backend compiling each graph with ``ziggurat.compile(..., backend, **options)``."""

    def compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], **_: Any) -> Callable[..., Any]:
        from ziggurat.backends.driver import compile_model
        from ziggurat.backends.options import CompileOptions
        from ziggurat.ir.errors import ZigguratError

        name = backend or DEFAULT_BACKEND
        try:
            compiled = compile_model(gm, tuple(_real(example_inputs)), CompileOptions.from_kwargs(name, dict(options)))
        except ZigguratError as e:
            log.warning("ziggurat: running this graph in eager (%d nodes): %s",
                        len(gm.graph.nodes), str(e).splitlines()[0])
            return gm.forward
        log.info("ziggurat: compiled a graph of %d nodes for %s", len(gm.graph.nodes), name)

        def run(*args: Any) -> Any:
            out = compiled(*args)
            return out if isinstance(out, tuple | list) else (out,)

        return run

    return compile_graph


ziggurat_dynamo_backend = dynamo_backend()
