"""Frontends into the ``torch`` dialect: TorchScript (and ``torch.export``, see ``export``)."""

from __future__ import annotations

from collections.abc import Sequence
import logging
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from ziggurat.ir.errors import ImportError_
from ziggurat.ir.importer.torchscript import import_torchscript

log = logging.getLogger("ziggurat")


def _export_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ziggurat.ir.importer.export") is not None


def fresh_examples(example_inputs: Sequence[Any]) -> list[Any]:
    """Example inputs that share nothing: each tensor is copied (same shape, dtype and, for a
    dense tensor, strides).

    Example inputs only give shapes and dtypes. Passed as they are, their identity leaks into
    the graph: ``compile(attn, (q, q, q))`` traces or exports one input read three times, and
    the compiled module would then read its first input for every later call. Copies also keep
    a model that mutates its inputs from writing into the caller's tensors while importing."""
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]


def import_model(model: Any, example_inputs: Sequence[Any], frontend: str = "auto") -> ModuleOp:
    """Import any accepted model into a ``torch`` dialect module.

    ``frontend``: ``"torchscript"`` traces/scripts; ``"export"`` uses ``torch.export``;
    ``"auto"`` takes ``torch.export`` for a plain ``nn.Module`` when it can and falls
    back to tracing, and picks the only frontend that fits any other input.
    """
    example_inputs = fresh_examples(example_inputs)
    is_exported = type(model).__name__ == "ExportedProgram"
    if is_exported or frontend == "export":
        if not _export_available():
            raise ImportError_("the torch.export frontend is not available", op="import")
        from ziggurat.ir.importer.export import import_exported

        return import_exported(model, example_inputs)
    plain_module = isinstance(model, torch.nn.Module) and not isinstance(model, torch.jit.ScriptModule)
    if frontend == "auto" and plain_module and _export_available():
        from ziggurat.ir.importer.export import import_exported

        try:
            return import_exported(model, example_inputs)
        except ImportError_ as export_error:
            log.warning("torch.export frontend not used, tracing with TorchScript instead: %s",
                        export_error)
            try:
                return import_torchscript(model, example_inputs)
            except ImportError_ as e:
                raise ImportError_(f"{e.message}\n    (torch.export failed first: {export_error.message})",
                                   op=e.op, schema=e.schema, location=e.location) from None
    return import_torchscript(model, example_inputs)


__all__ = ["fresh_examples", "import_model", "import_torchscript"]
