"""Any ``torch.export``-able module as a fuzz :class:`Program` (one node per aten call).

Used for programs made by other generators (``nnsmith_bridge.py``): the exported graph's
parameters, buffers and constants become literal constants, its user inputs literal
inputs (call-time inputs are the same values moved, see ``materialize.from_literal``),
and every ``call_function`` node a statement ``vN = torch.ops.aten.op.overload(...)``.
Only torch is needed, so the bridge can run this in another environment.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import torch

from tests.fuzz.program import Node, Program, TensorSpec, dtype_name, literal_text

SUPPORTED = {torch.float32, torch.int64, torch.int32, torch.bool}


class Unsupported(Exception):
    """The graph holds something a program cannot spell (dtype, op kind)."""


def _tensor_spec(name: str, t: torch.Tensor, is_input: bool) -> TensorSpec:
    if t.dtype not in SUPPORTED:
        raise Unsupported(f"dtype {t.dtype}")
    return TensorSpec(name, list(t.shape), dtype_name(t.dtype), "literal", 0,
                      literal=t.detach().reshape(-1).tolist())


def render_constant(value: Any) -> str:
    """Source text of a non-tensor argument (numbers, dtypes, devices, layouts, strings)."""
    if isinstance(value, list | tuple):
        items = [render_constant(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        text = ", ".join(items)
        return f"[{text}]" if isinstance(value, list) else f"({text}{',' if len(items) == 1 else ''})"
    if isinstance(value, float):
        return literal_text([value])[1:-1] if not math.isfinite(value) else repr(value)
    if isinstance(value, torch.dtype):
        return f"torch.{dtype_name(value)}"
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, torch.memory_format | torch.layout):
        return f"torch.{str(value).removeprefix('torch.')}"
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    raise Unsupported(f"argument {value!r}")


def _render(value: Any, names: dict[str, str]) -> str:
    if isinstance(value, torch.fx.Node):
        return names[value.name]
    if isinstance(value, list | tuple) and any(isinstance(v, torch.fx.Node) for v in value):  # pyright: ignore
        items = [_render(v, names) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return f"[{', '.join(items)}]" if isinstance(value, list) else f"({', '.join(items)},)"
    return render_constant(value)


def program_from_export(name: str, ep: torch.export.ExportedProgram, inputs: tuple[torch.Tensor, ...]) -> Program:
    from torch.export.graph_signature import InputKind, OutputKind

    program = Program(name)
    names: dict[str, str] = {}
    user = iter(inputs)
    for spec in ep.graph_signature.input_specs:
        arg = spec.arg.name  # type: ignore[union-attr]
        if spec.kind == InputKind.USER_INPUT:
            value = next(user)
            names[arg] = f"x{len(program.inputs)}"
            program.inputs.append(_tensor_spec(names[arg], value, True))
        else:
            target = spec.target or ""
            value = ep.state_dict[target] if target in ep.state_dict else ep.constants[target]
            names[arg] = f"c{len(program.consts)}"
            program.consts.append(_tensor_spec(names[arg], torch.as_tensor(value), False))
    counter = 0
    for node in ep.graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        counter += 1
        out = f"v{counter}"
        names[node.name] = out
        args = ", ".join([_render(a, names) for a in node.args]
                         + [f"{k}={_render(v, names)}" for k, v in node.kwargs.items()])
        if node.target is operator.getitem:
            code = f"{out} = {_render(node.args[0], names)}[{node.args[1]!r}]"
            op = "getitem"
        elif isinstance(node.target, torch._ops.OpOverload):  # pyright: ignore[reportPrivateUsage]
            code = f"{out} = torch.ops.{node.target.namespace}.{node.target._opname}.{node.target._overloadname}({args})"  # pyright: ignore
            op = f"{node.target.namespace}::{node.target._opname}"  # pyright: ignore
        else:
            raise Unsupported(f"call of {node.target}")
        uses = sorted({names[a.name] for a in node.all_input_nodes})
        program.nodes.append(Node([code], [out], uses, op))
    output = next(n for n in ep.graph_module.graph.nodes if n.op == "output")
    results = output.args[0]
    for spec, value in zip(ep.graph_signature.output_specs, results):
        if spec.kind == OutputKind.USER_OUTPUT and isinstance(value, torch.fx.Node):
            program.outputs.append(names[value.name])
    if not program.outputs:
        raise Unsupported("no tensor outputs")
    return program
