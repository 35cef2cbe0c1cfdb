"""In-place writes an op's schema does not declare.

``batch_norm`` in training mode (and ``instance_norm`` with ``use_input_stats``) updates its
``running_mean`` / ``running_var`` in place, but its schema types them ``Tensor?``, not
``Tensor(a!)?``: importing it from the schema alone drops the write, so a later read of the
statistics (or another argument that is the same tensor, ``bias=running_var``) sees the old
values, and a running statistic passed in by the caller is never updated (seed 11 program
3727).  The importers treat these arguments as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ziggurat.ir.errors import ModelImportError

#: op -> (the flag that makes it update its statistics, the statistics it then writes)
_WRITES: dict[str, tuple[str, tuple[str, ...]]] = {
    "aten::batch_norm": ("training", ("running_mean", "running_var")),
    "aten::native_batch_norm": ("training", ("running_mean", "running_var")),
    "aten::_batch_norm_impl_index": ("training", ("running_mean", "running_var")),
    "aten::instance_norm": ("use_input_stats", ("running_mean", "running_var")),
}


def hidden_writes(op: str, args: Mapping[str, Any]) -> list[str]:
    """The arguments ``op`` (``aten::name``, any overload) writes in place although its schema
    does not say so, given its arguments by name (a flag that is not a Python bool, a value
    known only at run time, counts as set)."""
    entry = _WRITES.get(op.split(".")[0])
    if entry is None:
        return []
    flag, stats = entry
    if args.get(flag) is False:
        return []
    return [name for name in stats if args.get(name) is not None]


def describe(op: str, written: list[str]) -> str:
    """Why such an op is refused: the refusal's text."""
    name = op.split(".")[0]
    flag = _WRITES[name][0] if name in _WRITES else "training"
    return (f"{name.split('::')[-1]} with {flag}=True updates its {' and '.join(written)} in place, a write "
            f"its schema does not declare; pass them as None, or {flag}=False")


def node_hidden_writes(node: torch.fx.Node) -> list[str]:
    """:func:`hidden_writes` of an exported graph's node."""
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):  # pyright: ignore[reportPrivateUsage]
        return []
    schema = target._schema  # pyright: ignore[reportPrivateUsage]
    if schema.name not in _WRITES:
        return []
    return hidden_writes(schema.name, _bound(node, schema))


def check_exported(program: Any, functionalized: Any) -> None:
    """Refuses what functionalizing ``program`` (``run_decompositions``) cannot make eager's:
    a written statistic that is also another argument of its op (``bias=running_var``: the
    functional form reads the value before the update, eager's kernel after it), and a hidden
    write the functional program still holds (``instance_norm`` stays as it is)."""
    for node in program.graph_module.graph.nodes:
        written = node_hidden_writes(node)
        if not written:
            continue
        args = _bound(node, node.target._schema)
        for name in written:
            others = [k for k, v in args.items() if k != name and v is args[name]]
            if others:
                raise ModelImportError(f"{describe(node.target._schema.name, written)}; its {', '.join(others)} is "
                                       f"the same tensor as its {name}, which torch.export's functional form reads "
                                       "before the update and eager after it", op=str(node.target))
    for node in functionalized.graph_module.graph.nodes:
        written = node_hidden_writes(node)
        if written:
            raise ModelImportError(describe(node.target._schema.name, written), op=str(node.target))


def _bound(node: torch.fx.Node, schema: Any) -> dict[str, Any]:
    """The node's arguments by name, defaults filled in."""
    out: dict[str, Any] = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            out[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            out[arg.name] = node.kwargs[arg.name]
        else:
            out[arg.name] = arg.default_value if arg.has_default_value() else None
    return out


def _instance_norm(input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                   running_mean: torch.Tensor | None, running_var: torch.Tensor | None, use_input_stats: bool,
                   momentum: float, eps: float, cudnn_enabled: bool) -> torch.Tensor:
    """Eager's ``at::instance_norm`` (Normalization.cpp) as aten ops: ``batch_norm`` over
    ``[1, N * C, *spatial]`` with the statistics repeated N times, then each statistic the mean
    of its N updates, written back with ``copy_`` (which functionalizing turns into a write of
    the caller's tensor, or a refused write of a buffer)."""
    n, c = input.shape[0], input.shape[1]
    aten = torch.ops.aten
    mean = aten.repeat.default(running_mean, [n]) if running_mean is not None else None
    var = aten.repeat.default(running_var, [n]) if running_var is not None else None
    out = aten.batch_norm.default(
        aten.reshape.default(input, [1, n * c, *input.shape[2:]]),
        aten.repeat.default(weight, [n]) if weight is not None else None,
        aten.repeat.default(bias, [n]) if bias is not None else None,
        mean, var, use_input_stats, momentum, eps, cudnn_enabled)
    if use_input_stats:
        if running_mean is not None and mean is not None:
            aten.copy_.default(running_mean, aten.mean.dim(aten.view.default(mean, [n, c]), [0]))
        if running_var is not None and var is not None:
            aten.copy_.default(running_var, aten.mean.dim(aten.view.default(var, [n, c]), [0]))
    return aten.view.default(out, list(input.shape))


def decompositions(program: Any) -> dict[Any, Any]:
    """What functionalizing ``program`` must decompose so that every hidden write becomes a
    ``copy_``: ``instance_norm`` with running statistics (``run_decompositions`` keeps it)."""
    if any(node.target is torch.ops.aten.instance_norm.default and node_hidden_writes(node)
           for node in program.graph_module.graph.nodes):
        return {torch.ops.aten.instance_norm.default: _instance_norm}
    return {}
