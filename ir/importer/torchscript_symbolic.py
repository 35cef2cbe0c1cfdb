"""A TorchScript model (``.pt``, a ScriptFunction, IR text) imported with ``?`` input sizes:
``ziggurat-opt model.pt --input-types 'tensor<?x128xf32>' --dim-ranges 'batch=1:64'``.

The TorchScript importer evaluates the graph on example inputs, which fixes every size.  For
symbolic sizes the graph goes through torch's own converter (``torch._export.converter``,
TorchScript to an FX graph) and is exported with the declared ranges as ``Dim``s, the same
route as ``ziggurat.compile(..., dynamic_shapes=...)``: the ``torch`` level is the exported
program's, with ``ziggurat.shape_symbols`` and run-time size arithmetic.  A graph the converter
or torch.export cannot take is a ``ModelImportError`` with their reason.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from ziggurat.ir.dim_ranges import bind_dims
from ziggurat.ir.errors import ModelImportError, ZigguratError
from ziggurat.ir.importer.dynamic_shapes import shape_symbols_of
from ziggurat.ir.shape_symbols import ShapeSymbols, evaluate
from ziggurat.ir.symbolic_shapes import symbol_hints
from ziggurat.ir.types import dtype_of


def _script(source: Any) -> Any:
    """A ScriptModule or ScriptFunction for the converter (IR text and graphs become functions)."""
    if isinstance(source, str):
        try:
            graph = torch._C.parse_ir(source)  # pyright: ignore[reportPrivateUsage]
        except RuntimeError as e:
            raise ModelImportError(f"cannot parse the TorchScript IR: {str(e).strip().splitlines()[0]}",
                                   op="import") from None
        source = graph
    if isinstance(source, torch._C.Graph):  # pyright: ignore[reportPrivateUsage]
        return torch._C._create_function_from_graph("forward", source)  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    if isinstance(source, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        return source
    raise ModelImportError(f"a symbolic TorchScript import takes a ScriptModule, a ScriptFunction, a graph or IR "
                           f"text, not a {type(source).__name__}", op="import")


def _input_names(script: Any) -> list[str]:
    graph = script.graph
    values = list(graph.inputs())
    if isinstance(script, torch.jit.ScriptModule):
        values = values[1:]  # self
    return [v.debugName().split(".")[0] or f"arg{i}" for i, v in enumerate(values)]


def _dims(symbols: ShapeSymbols) -> dict[int, dict[int, Any]]:
    """torch.export ``Dim``s for the declared symbols, per flat input and dim."""
    from torch.export import Dim

    base = {s.name: Dim(s.name, min=s.low, max=s.high) if s.high is not None else Dim(s.name, min=s.low)
            for s in symbols.symbols}
    flat: dict[int, dict[int, Any]] = {}
    for d in symbols.dims:
        flat.setdefault(d.input, {})[d.dim] = evaluate(d.expr, base)  # pyright: ignore[reportArgumentType]
    return flat


def import_torchscript_symbolic(source: Any, input_types: Sequence[Attribute], dim_ranges: str) -> ModuleOp:
    """The symbolic ``torch`` level of ``source`` for inputs of ``input_types`` (``?`` sizes)
    bound to the symbols of ``dim_ranges`` (see :mod:`ziggurat.ir.dim_ranges`)."""
    from torch._export.converter import TS2EPConverter

    from ziggurat.ir.importer.export import ExportImporter, functional

    script = _script(source)
    names = _input_names(script)
    if len(names) != len(input_types):
        raise ModelImportError(f"--input-types gives {len(input_types)} types for {len(names)} graph inputs "
                               f"({', '.join(names)})", op="--input-types")
    declared = bind_dims(input_types, names, dim_ranges)
    hints = symbol_hints(declared.symbols)
    examples: list[torch.Tensor] = []
    for i, ty in enumerate(input_types):
        shape = [evaluate(next(d.expr for d in declared.dims if d.input == i and d.dim == k), hints)
                 if n < 0 else int(n) for k, n in enumerate(ty.get_shape())]  # pyright: ignore[reportAttributeAccessIssue]
        examples.append(torch.randn(shape).to(dtype_of(ty)) if dtype_of(ty).is_floating_point
                        else torch.ones(shape, dtype=dtype_of(ty)))
    flat = _dims(declared)
    spec = tuple(flat.get(i) for i in range(len(examples)))

    class Converter(TS2EPConverter):
        """torch's converter, retracing with the declared ``Dim``s (it marks every dim AUTO)."""

        def retrace_as_exported_program(self, gm: torch.fx.GraphModule, name_to_constant: dict[str, Any]) -> Any:
            from torch.export.graph_signature import InputKind

            ep = torch.export._trace._export(gm, self.sample_args, dynamic_shapes=spec, strict=False,  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
                                             pre_dispatch=True)
            # as the converter does after its own retrace: tensor constants traced as buffers
            tensors = {k: v for k, v in name_to_constant.items() if isinstance(v, (torch.Tensor, torch.ScriptObject))}
            ep._constants.update(tensors)  # pyright: ignore[reportPrivateUsage]
            for k in name_to_constant:
                ep.state_dict.pop(k, None)
            for input_spec in ep.graph_signature.input_specs:
                if input_spec.kind == InputKind.BUFFER and input_spec.target in tensors:
                    input_spec.kind = InputKind.CONSTANT_TENSOR
                    input_spec.persistent = None
            return ep

    try:
        with warnings.catch_warnings():  # the converter's notes on its own steps (state_dict entries, ...)
            warnings.simplefilter("ignore")
            program = functional(Converter(script, tuple(examples)).convert())
    except ZigguratError:
        raise
    except Exception as e:  # noqa: BLE001 - the converter's or torch.export's own reason
        text = str(e).strip()
        raise ModelImportError(f"converting the TorchScript graph for symbolic sizes failed: "
                               f"{text[:1200] or type(e).__name__}", op="import") from None
    symbols, _ = shape_symbols_of(program, names, flat)
    return ExportImporter(program, symbols=symbols).import_program(examples, input_names=names)
