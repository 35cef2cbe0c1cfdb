"""The TorchScript frontend: models, scripted code, graphs and IR text -> ``torch`` dialect.

* ``nn.Module`` — traced with the example inputs (eval mode, no grad), then frozen.
* ``torch.jit.ScriptModule`` — frozen (weights become constants).
* ``torch.jit.ScriptFunction`` / ``torch._C.Graph`` — imported as they are.
* TorchScript IR text (``graph(%x : Float(2, 3)): ...``) — parsed with ``torch._C.parse_ir``.

Freezing here does not run TorchScript's frozen-graph optimizations (conv-bn
folding etc.): those are Ziggurat's own passes, which must see the original ops.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute

from ziggurat.ir.errors import ModelImportError, ZigguratError, verify_imported
from ziggurat.ir.importer.graph_importer import GraphImporter
from ziggurat.ir.importer.eval_mode import eval_mode
from ziggurat.ir.importer.trace_guard import Specialization, watch_conversions
from ziggurat.ir.locations import user_line
from ziggurat.ir.types import UnsupportedTypeError, example_tensor, tensor_type

TorchScriptSource = torch.nn.Module | torch.jit.ScriptFunction | torch._C.Graph | str


def _freeze(module: torch.jit.ScriptModule) -> torch._C.Graph:
    module = module.eval()
    frozen = torch._C._freeze_module(module._c, [])  # pyright: ignore[reportPrivateUsage]
    graph = frozen._get_method("forward").graph.copy()
    self_arg = graph.inputs().__next__()
    if self_arg.uses():
        raise ModelImportError(
            "the frozen module still reads its own attributes (mutable attributes cannot be "
            "frozen into constants)", op="module",
        )
    graph.eraseInput(0)
    return graph


def _specialization_error(found: Specialization, model: torch.nn.Module) -> ModelImportError:
    return ModelImportError(
        f"{found.conversion}: the model's control flow or shapes depend on the values of its "
        "inputs, and tracing would bake in the path the example inputs took (other inputs would "
        "get wrong results). Script that part (torch.jit.script), or write the branch with "
        "torch.cond / torch.where",
        op=type(model).__name__, location=f"{found.file}:{found.line}",
    )


#: What torch.jit.trace warns when it cuts a value off its trace (its later uses become
#: constants of the graph: the example's values for every input).
_DISCONNECTED = ("won't connect any uses of this value with its current trace",)


def _trace(model: torch.nn.Module, example_inputs: Sequence[Any]) -> torch._C.Graph:
    try:
        with eval_mode(model), torch.no_grad(), warnings.catch_warnings(record=True) as caught, watch_conversions() as specialized:
            warnings.simplefilter("always")
            traced = torch.jit.trace(model, tuple(example_inputs), check_trace=False, strict=False)
    except ZigguratError:
        raise
    except Exception as e:
        raise ModelImportError(f"torch.jit.trace failed: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}",
                               op=type(model).__name__, location=user_line(e)) from None
    if specialized:
        raise _specialization_error(specialized[0], model)
    for record in caught:
        if any(phrase in str(record.message) for phrase in _DISCONNECTED):
            raise ModelImportError(
                f"tracing lost the data flow here ({str(record.message).split('.')[0]}): later uses would "
                "read the example's values as a constant. Script the model (torch.jit.script) or use "
                "torch.export", op=type(model).__name__, location=f"{record.filename}:{record.lineno}")
    assert isinstance(traced, torch.jit.ScriptModule)
    return _freeze(traced)


def _prepare(graph: torch._C.Graph) -> torch._C.Graph:
    graph = graph.copy()
    try:
        torch._C._jit_pass_inline(graph)  # pyright: ignore[reportPrivateUsage]
        torch._C._jit_pass_remove_mutation(graph)  # pyright: ignore[reportPrivateUsage]
        torch._C._jit_pass_dce(graph)  # pyright: ignore[reportPrivateUsage]
    except RuntimeError as e:
        raise ModelImportError(f"TorchScript could not prepare the graph: {str(e).strip().splitlines()[0]}",
                               op="torchscript") from None
    return graph


def _parse_ir(text: str) -> torch._C.Graph:
    try:
        graph = torch._C.parse_ir(text)  # pyright: ignore[reportPrivateUsage]
    except RuntimeError as e:
        raise ModelImportError(f"malformed TorchScript IR: {str(e).strip().splitlines()[0]}",
                               op="torchscript-ir") from None
    _check_schemas(graph, text)
    return graph


def _check_schemas(graph: torch._C.Graph, text: str) -> None:
    """Every operator node of IR text must match one of its schemas (``aten::sum(%none, %x)``
    matches none); the graph passes would fail on it deep inside TorchScript."""
    seen: dict[str, int] = {}
    for node in _all_nodes(graph.nodes()):
        kind = node.kind()
        seen[kind] = seen.get(kind, 0) + 1
        if kind.startswith("prim::") or "::" not in kind or str(node.schema()) != "(no schema)":
            continue
        operands = ", ".join(f"%{v.debugName()} : {v.type()}" for v in node.inputs())
        schemas = [str(s) for s in torch._C._jit_get_schemas_for_operator(kind)  # pyright: ignore
                   if "(a!)" not in str(s)]
        raise ModelImportError(
            f"no schema of {kind} takes these operands ({operands})"
            + (f"; its schemas: {'; '.join(schemas[:4])}" if schemas else f"; {kind} is not a known operator"),
            op=kind, location=_ir_line(kind, seen[kind], text),
        )


def _all_nodes(nodes: Any) -> Iterator[torch._C.Node]:
    for node in nodes:
        yield node
        for block in node.blocks():
            yield from _all_nodes(block.nodes())


def _ir_line(kind: str, occurrence: int, text: str) -> str | None:
    """``<torchscript-ir>:N``: the line of the ``occurrence``-th ``kind`` node in IR text
    (``parse_ir`` renumbers values, but keeps the nodes in order)."""
    count = 0
    for number, line in enumerate(text.splitlines(), 1):
        if f"{kind}(" in line or f"{kind}[" in line:
            count += 1
            if count == occurrence:
                return f"<torchscript-ir>:{number}"
    return None


def to_graph(source: TorchScriptSource, example_inputs: Sequence[Any] | None) -> torch._C.Graph:
    """The TorchScript graph of any accepted source, ready for import."""
    if isinstance(source, str):
        return _prepare(_parse_ir(source))
    if isinstance(source, torch._C.Graph):
        return _prepare(source)
    if isinstance(source, torch.jit.ScriptFunction):
        return _prepare(source.graph)
    if isinstance(source, torch.jit.ScriptModule):
        return _prepare(_freeze(source))
    if isinstance(source, torch.nn.Module):
        if example_inputs is None:
            raise ModelImportError("tracing an nn.Module needs example inputs", op=type(source).__name__)
        return _prepare(_trace(source, example_inputs))
    raise ModelImportError(
        f"cannot import a {type(source).__name__}: expected an nn.Module, ScriptModule, "
        "ScriptFunction, torch._C.Graph or TorchScript IR text", op="import",
    )


def _annotated_examples(graph: torch._C.Graph) -> list[Any]:
    examples: list[Any] = []
    for value in graph.inputs():
        ty = value.type()
        sizes = ty.sizes() if isinstance(ty, torch._C.TensorType) else None  # pyright: ignore
        dtype = ty.dtype() if isinstance(ty, torch._C.TensorType) else None  # pyright: ignore
        if sizes is None or dtype is None or any(s is None for s in sizes):
            raise ModelImportError(
                f"the type of graph input %{value.debugName()} ({ty}) is not fully known; "
                "give the input types, e.g. --input-types 'tensor<1x3x224x224xf32>'",
                op="graph input",
            )
        examples.append(example_tensor(tensor_type(sizes, dtype)))
    return examples


def import_torchscript(
    source: TorchScriptSource,
    example_inputs: Sequence[Any] | None = None,
    *,
    input_types: Sequence[TensorType[Attribute]] | None = None,
    func_name: str = "forward",
    input_names: Sequence[str] | None = None,
) -> ModuleOp:
    """Import a TorchScript model/function/graph/IR text into a ``torch`` dialect module.

    Shapes come from ``example_inputs``, else from ``input_types``, else from the
    types annotated in the graph. ``input_names`` renames the graph inputs.
    """
    graph = to_graph(source, example_inputs)
    if input_names is not None:
        for value, name in zip(graph.inputs(), input_names, strict=False):
            value.setDebugName(name)
    if example_inputs is None:
        if input_types is not None:
            try:
                example_inputs = [example_tensor(t) for t in input_types]
            except UnsupportedTypeError as e:
                raise ModelImportError(str(e), op="--input-types") from None
        else:
            example_inputs = _annotated_examples(graph)
    module = GraphImporter(graph, func_name).import_graph(list(example_inputs))
    verify_imported(module)
    return module
