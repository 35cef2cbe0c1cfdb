"""``dynamic_shapes=`` as torch.export takes it, over the flat inputs of a model's call.

The spec follows the call: a tuple (the arguments in order) or a dict (by parameter name);
for each tensor ``{dim: Dim}`` or a tuple with a ``Dim`` or None per dim; for a container of
tensors the same container of specs; None for an argument with static sizes.  The flat form
(:func:`flat_dynamic_shapes`) gives each flat input its ``{dim: Dim}``, in the order the
frontends number the inputs, and :func:`shape_symbols_of` reads the symbols torch.export
made (their ranges and the relations it proved) back from the exported program, under the
users' ``Dim`` names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import inspect

import torch

from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.shape_symbols import DimSymbol, InputDim, ShapeSymbols, evaluate
from ziggurat.ir.structure import Const, Container, Leaf, Node

#: flat input index -> {dim: a torch.export Dim (or Dim.AUTO / Dim.DYNAMIC)}
FlatDims = dict[int, dict[int, Any]]


def _error(message: str) -> ZigguratError:
    return ZigguratError(f"dynamic_shapes: {message}", op="compile")


def _is_dim(value: Any) -> bool:
    from torch.export.dynamic_shapes import _DimHint  # pyright: ignore[reportPrivateUsage]

    return isinstance(value, _DimHint) or (hasattr(value, "__name__") and hasattr(value, "min")
                                           and hasattr(value, "max"))


def _tensor_dims(spec: Any, where: str) -> dict[int, Any]:
    if isinstance(spec, Mapping):
        items = list(spec.items())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    elif isinstance(spec, list | tuple):
        items = list(enumerate(spec))  # pyright: ignore[reportUnknownArgumentType]
    else:
        raise _error(f"{where} is a tensor: give {{dim: Dim}} or a tuple of Dim/None per dim, not {spec!r}")
    dims: dict[int, Any] = {}
    for dim, value in items:
        if not isinstance(dim, int):
            raise _error(f"{where}: dim {dim!r} is not an int")
        if value is None:
            continue
        if not _is_dim(value):
            raise _error(f"{where} dim {dim}: {value!r} is not a torch.export Dim")
        dims[dim] = value
    return dims


def _walk(node: Node, spec: Any, where: str, out: FlatDims) -> None:
    if spec is None:
        return
    if isinstance(node, Leaf):
        dims = _tensor_dims(spec, where)
        if dims:
            out[node.index] = dims
        return
    if isinstance(node, Const):
        raise _error(f"{where} is not a tensor ({node.value!r}); its spec must be None")
    assert isinstance(node, Container)
    if node.keys and isinstance(spec, Mapping):
        extra = set(spec) - set(node.keys)  # pyright: ignore[reportUnknownArgumentType]
        if extra:
            raise _error(f"{where} has no key(s) {sorted(map(str, extra))}")  # pyright: ignore[reportUnknownArgumentType]
        for key, item in zip(node.keys, node.items, strict=True):
            _walk(item, spec.get(key), f"{where}[{key!r}]", out)  # pyright: ignore[reportUnknownMemberType]
        return
    if not node.keys and isinstance(spec, list | tuple):
        if len(spec) != len(node.items):  # pyright: ignore[reportUnknownArgumentType]
            raise _error(f"{where} holds {len(node.items)} values, its spec {len(spec)}")  # pyright: ignore
        for i, (item, s) in enumerate(zip(node.items, spec, strict=True)):  # pyright: ignore[reportUnknownArgumentType]
            _walk(item, s, f"{where}[{i}]", out)
        return
    raise _error(f"{where} is a {node.kind}; its spec {spec!r} does not have that structure")


def flat_dynamic_shapes(signature: CallSignature, spec: Any) -> FlatDims:
    """``spec`` (torch.export's ``dynamic_shapes``) as ``{flat input: {dim: Dim}}``."""
    given = [p for p in signature.params if p.value is not None]
    out: FlatDims = {}
    if isinstance(spec, Mapping):
        names = {p.name: p for p in given}
        for key, value in spec.items():  # pyright: ignore[reportUnknownVariableType]
            if key not in names:
                raise _error(f"no input named {key!r}; the call has {', '.join(names) or 'none'}")
            p = names[key]
            assert p.value is not None
            _walk(p.value, value, f"'{key}'", out)
        return out
    if not isinstance(spec, list | tuple):
        raise _error(f"give a tuple (one entry per argument) or a dict by argument name, not {type(spec).__name__}")
    entries = list(spec)  # pyright: ignore[reportUnknownArgumentType]
    for p in given:
        if not entries:
            break
        assert p.value is not None
        if p.kind == inspect.Parameter.VAR_POSITIONAL and isinstance(p.value, Container):
            take = len(p.value.items)
            _walk(p.value, tuple(entries[:take]), f"'*{p.name}'", out)  # pyright: ignore[reportUnknownArgumentType]
            entries = entries[take:]
            continue
        _walk(p.value, entries.pop(0), f"'{p.name}'", out)
    if entries:
        raise _error(f"{len(spec)} entries for {len(given)} argument(s)")  # pyright: ignore[reportUnknownArgumentType]
    return out


def export_dynamic_shapes(flat: FlatDims, n_inputs: int) -> tuple[tuple[dict[int, Any] | None, ...]]:
    """The spec of the flat model (``forward(*flat)``) for ``torch.export.export``."""
    return (tuple(flat.get(i) for i in range(n_inputs)),)


def range_bound(value: Any) -> int | None:
    """A range bound (an int, sympy's / torch's infinity, or None) as an int; None when unbounded."""
    import sympy
    from torch.utils._sympy.numbers import int_oo

    if value is None or value in (int_oo, -int_oo, sympy.oo, -sympy.oo):
        return None  # no bound
    return int(value)


def shape_symbols_of(program: Any, input_names: Sequence[str], flat: FlatDims) -> tuple[ShapeSymbols, dict[str, Any]]:
    """The symbols of an exported ``program``'s user inputs under the users' ``Dim`` names, and
    the sympy symbol of each name (what the importer substitutes sizes for)."""
    import sympy

    sig = program.graph_signature
    constants = {*sig.inputs_to_parameters, *sig.inputs_to_buffers, *sig.inputs_to_lifted_tensor_constants}
    placeholders = [n for n in program.graph_module.graph.nodes
                    if n.op == "placeholder" and n.name not in constants]
    names: dict[Any, str] = {}
    for i, node in enumerate(placeholders):
        val = node.meta.get("val")
        for dim, spec in flat.get(i, {}).items():
            size = val.shape[dim] if isinstance(val, torch.Tensor) and dim < val.dim() else None
            if not isinstance(size, torch.SymInt):
                raise _error(f"input {i} ('{input_names[i]}') dim {dim} is declared dynamic, but torch.export "
                             f"specialized it to {size}: the model's code fixes that size")
            expr = size.node.expr
            name = getattr(spec, "__name__", None)
            if isinstance(expr, sympy.Symbol) and name and not name.startswith("_") and expr not in names:
                if name in names.values():
                    raise _error(f"two symbols are both named '{name}'")
                names[expr] = name
    dims: list[InputDim] = []
    used: dict[str, Any] = {}
    for i, node in enumerate(placeholders):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        for dim, size in enumerate(val.shape):
            if not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr
            for s in sorted(expr.free_symbols, key=str):
                names.setdefault(s, str(s))
                used[names[s]] = s
            text = str(expr.xreplace({s: sympy.Symbol(names[s]) for s in expr.free_symbols}))
            try:
                evaluate(text, {n: 1 for n in used})
            except ValueError:
                raise _error(f"input {i} ('{input_names[i]}') dim {dim} is {text}, a relation Ziggurat "
                             "cannot check (it takes sums and multiples of symbols)") from None
            dims.append(InputDim(i, input_names[i], dim, text))
    ranges = getattr(program, "range_constraints", {}) or {}
    symbols = []
    for name, s in used.items():
        vr = ranges.get(s)
        low = range_bound(vr.lower) if vr is not None else None
        symbols.append(DimSymbol(name, max(low if low is not None else 0, 0), range_bound(vr.upper) if vr is not None else None))
    bare = {d.expr for d in dims}
    for name in used:
        if name not in bare:
            raise _error(f"'{name}' appears only in derived sizes ({', '.join(d.expr for d in dims if name in d.expr)}); "
                         "one input dim must be that symbol alone, so that a call's sizes give its value")
    return ShapeSymbols(tuple(symbols), tuple(dims)), used
