"""Frontends into the ``torch`` dialect: TorchScript (and ``torch.export``, see ``export``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from ziggurat.ir.errors import ImportError_
from ziggurat.ir.importer.torchscript import import_torchscript


def _export_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ziggurat.ir.importer.export") is not None


def import_model(model: Any, example_inputs: Sequence[Any], frontend: str = "auto") -> ModuleOp:
    """Import any accepted model into a ``torch`` dialect module.

    ``frontend``: ``"torchscript"`` traces/scripts; ``"export"`` uses ``torch.export``;
    ``"auto"`` takes ``torch.export`` for a plain ``nn.Module`` when it can and falls
    back to tracing, and picks the only frontend that fits any other input.
    """
    is_exported = type(model).__name__ == "ExportedProgram"
    if is_exported or frontend == "export":
        if not _export_available():
            raise ImportError_("the torch.export frontend is not available", op="import")
        from ziggurat.ir.importer.export import import_exported

        return import_exported(model, example_inputs)
    plain_module = isinstance(model, torch.nn.Module) and not isinstance(model, torch.jit.ScriptModule)
    if frontend == "auto" and plain_module and _export_available():
        from ziggurat.ir.importer.export import try_import_exported

        module = try_import_exported(model, example_inputs)
        if module is not None:
            return module
    return import_torchscript(model, example_inputs)


__all__ = ["import_model", "import_torchscript"]
