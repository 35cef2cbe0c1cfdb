"""Frontends into the ``torch`` dialect: TorchScript (and ``torch.export``, see ``export``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer.autocast import autocast_for
from ziggurat.ir.importer.model_call import ModelCall
from ziggurat.ir.importer.script_call import ScriptCall
from ziggurat.ir.importer.torchscript import import_torchscript
from ziggurat.ir.signature import mark_storage_reads, set_call_signature

log = logging.getLogger("ziggurat")


def fresh_examples(example_inputs: Sequence[Any]) -> list[Any]:
    """Example inputs that share nothing: each tensor is copied (same shape, dtype and, for a
    dense tensor, strides).

    Example inputs only give shapes and dtypes. Passed as they are, their identity leaks into
    the graph: ``compile(attn, (q, q, q))`` traces or exports one input read three times, and
    the compiled module would then read its first input for every later call. Copies also keep
    a model that mutates its inputs from writing into the caller's tensors while importing."""
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]


def _forward(module: ModuleOp) -> Any:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "forward")


def import_model(model: Any, example_inputs: Sequence[Any], frontend: str = "auto",
                 example_kwargs: Mapping[str, Any] | None = None, precision: str = "fp32") -> ModuleOp:
    """Import any accepted model into a ``torch`` dialect module.

    ``frontend``: ``"torchscript"`` traces/scripts; ``"export"`` uses ``torch.export``;
    ``"auto"`` takes ``torch.export`` for a plain ``nn.Module`` when it can and falls
    back to tracing, and picks the only frontend that fits any other input.
    ``example_kwargs``: keyword arguments of the example call (a Python model or an
    ``ExportedProgram``). ``precision``: ``"bf16"``/``"fp16"`` import the model as it runs
    under ``torch.autocast`` (``autocast.py``).
    """
    autocast = autocast_for(model, precision, frontend)
    if autocast is not None:
        from ziggurat.ir.importer.export import import_exported

        call = ModelCall(model, example_inputs, dict(example_kwargs or {}), autocast)
        with call.flat() as flat_model:
            module = import_exported(flat_model, call.tensors, input_names=call.input_names)
        module = call.finish(module, _forward(module))
        mark_storage_reads(_forward(module))
        return module
    module = _import_model(model, example_inputs, frontend, example_kwargs)
    mark_storage_reads(_forward(module))
    return module


def _import_model(model: Any, example_inputs: Sequence[Any], frontend: str = "auto",
                  example_kwargs: Mapping[str, Any] | None = None) -> ModuleOp:
    kwargs = dict(example_kwargs or {})
    is_exported = type(model).__name__ == "ExportedProgram"
    plain_module = isinstance(model, torch.nn.Module) and not isinstance(model, torch.jit.ScriptModule)
    if plain_module and not is_exported:
        return _import_python_model(model, example_inputs, kwargs, frontend)  # copies the examples itself
    example_inputs = fresh_examples(example_inputs)
    kwargs = {k: v.detach().clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    if is_exported or frontend == "export":
        from ziggurat.ir.importer.export import import_exported

        return import_exported(model, example_inputs, kwargs)
    if isinstance(model, torch.jit.ScriptModule | torch.jit.ScriptFunction):
        return _import_scripted(model, example_inputs, kwargs)
    if kwargs:
        raise ModelImportError(f"keyword example inputs ({', '.join(kwargs)}) need a Python nn.Module, a "
                               f"scripted model or an ExportedProgram, not a {type(model).__name__}", op="import")
    return import_torchscript(model, example_inputs)


def _import_scripted(model: torch.jit.ScriptModule | torch.jit.ScriptFunction, args: Sequence[Any],
                     kwargs: dict[str, Any]) -> ModuleOp:
    """A scripted model, its example call bound to ``forward``'s schema (defaults compiled in)."""
    call = ScriptCall(model, args, kwargs)
    module = import_torchscript(model, call.graph_inputs)
    if call.signature is not None:
        set_call_signature(_forward(module), call.signature)
    return module


def _import_python_model(model: torch.nn.Module, args: Sequence[Any], kwargs: dict[str, Any],
                         frontend: str) -> ModuleOp:
    """A plain ``nn.Module``, called with flat tensors (``ModelCall``) under either frontend."""
    call = ModelCall(model, args, kwargs)
    if frontend != "torchscript":
        from ziggurat.ir.importer.export import import_exported

        try:
            with call.flat() as flat_model:
                module = import_exported(flat_model, call.tensors, input_names=call.input_names)
            return call.finish(module, _forward(module))
        except ModelImportError as export_error:
            if frontend == "export":
                raise
            log.warning("torch.export frontend not used, tracing with TorchScript instead: %s", export_error)
            try:
                with call.flat() as flat_model:
                    module = import_torchscript(flat_model, call.tensors, input_names=call.input_names)
                return call.finish(module, _forward(module))
            except ModelImportError as e:
                raise ModelImportError(f"{e.message}\n    (torch.export was tried first: {export_error.format()})",
                                       op=e.op, schema=e.schema, location=e.location) from None
    with call.flat() as flat_model:
        module = import_torchscript(flat_model, call.tensors, input_names=call.input_names)
    return call.finish(module, _forward(module))


__all__ = ["fresh_examples", "import_model", "import_torchscript"]
