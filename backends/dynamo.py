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


class _SizeArguments(torch.nn.Module):
    """A Dynamo graph with symbolic sizes, taking only its tensors: each size argument (a
    SymInt placeholder) is read off the tensor dim it names, so that torch.export sees the
    sizes as the symbols of the tensors' dims."""

    def __init__(self, gm: torch.fx.GraphModule, tensor_positions: list[int],
                 sizes: dict[int, tuple[int, int]]) -> None:
        super().__init__()
        self.gm = gm
        self.tensor_positions = tensor_positions
        #: argument position -> (tensor argument position, dim)
        self.sizes = sizes

    def forward(self, *tensors: torch.Tensor) -> Any:
        args: list[Any] = [None] * (len(self.tensor_positions) + len(self.sizes))
        for position, t in zip(self.tensor_positions, tensors, strict=True):
            args[position] = t
        for position, (source, dim) in self.sizes.items():
            args[position] = args[source].shape[dim]
        return self.gm(*args)


def _symbolic_plan(example_inputs: Sequence[Any]) -> tuple[list[int], dict[int, tuple[int, int]], tuple[Any, ...]] | str | None:
    """For a graph with symbolic sizes: the tensor positions, where each size argument comes
    from, and torch.export's ``dynamic_shapes`` for the tensors (one ``Dim`` per symbol, with
    the range Dynamo's shape environment gives it); None for a static graph; a reason string
    when a size cannot be read off a tensor."""
    from torch.export import Dim

    from ziggurat.ir.importer.dynamic_shapes import range_bound

    symbolic = any(isinstance(x, torch.SymInt) for x in example_inputs) or any(
        isinstance(x, torch.Tensor) and not all(isinstance(d, int) for d in x.shape) for x in example_inputs)
    if not symbolic:
        return None
    tensor_positions = [i for i, x in enumerate(example_inputs) if isinstance(x, torch.Tensor)]
    where: dict[Any, tuple[int, int]] = {}
    dims: dict[Any, Any] = {}
    specs: list[dict[int, Any] | None] = []
    for i in tensor_positions:
        spec: dict[int, Any] = {}
        for d, size in enumerate(example_inputs[i].shape):
            if not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr
            if not expr.is_Symbol:
                return f"input {i} dim {d} is {expr}, not a size symbol"
            where.setdefault(expr, (i, d))
            if expr not in dims:
                vr = size.node.shape_env.var_to_range.get(expr)
                low = range_bound(vr.lower) if vr is not None else None
                high = range_bound(vr.upper) if vr is not None else None
                low = max(low or 0, 0)
                dims[expr] = Dim(str(expr), min=low, max=high) if high is not None else Dim(str(expr), min=low)
            spec[d] = dims[expr]
        specs.append(spec or None)
    sizes: dict[int, tuple[int, int]] = {}
    for i, x in enumerate(example_inputs):
        if isinstance(x, torch.SymInt):
            if x.node.expr not in where:
                return f"size argument {i} ({x.node.expr}) is not the size of an input dim"
            sizes[i] = where[x.node.expr]
        elif not isinstance(x, torch.Tensor):
            return f"argument {i} is a {type(x).__name__}"
    return tensor_positions, sizes, tuple(specs)


def _hint(x: Any) -> Any:
    """A real tensor for a (fake, maybe symbolic) example: the sizes Dynamo saw."""
    from torch.fx.experimental.symbolic_shapes import guard_int

    if isinstance(x, torch.Tensor):
        return torch.zeros([guard_int(d) if isinstance(d, torch.SymInt) else d for d in x.shape], dtype=x.dtype)
    return x


def dynamo_backend(backend: str | None = None, **options: Any) -> Callable[..., Any]:
    """A Dynamo backend compiling each graph with ``ziggurat.compile(..., backend, **options)``."""

    def compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], **_: Any) -> Callable[..., Any]:
        from ziggurat.backends.driver import compile_model
        from ziggurat.backends.options import CompileOptions
        from ziggurat.ir.errors import ZigguratError

        name = backend or DEFAULT_BACKEND
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        values = [n.meta.get("example_value", x) for n, x in zip(placeholders, example_inputs, strict=False)]
        plan = _symbolic_plan(values if len(values) == len(example_inputs) else example_inputs)
        if isinstance(plan, str):
            log.warning("ziggurat: running this graph in eager (%d nodes): symbolic sizes: %s", len(gm.graph.nodes), plan)
            return gm.forward
        if plan is not None:
            return _compile_symbolic(gm, example_inputs, plan, name, options)
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


#: how many graphs with symbolic sizes ran through Ziggurat (not eager): tests read it
SYMBOLIC_GRAPHS_COMPILED = [0]


def _compile_symbolic(gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                      plan: tuple[list[int], dict[int, tuple[int, int]], tuple[Any, ...]],
                      name: str, options: dict[str, Any]) -> Callable[..., Any]:
    """A graph whose sizes are symbols: compiled once, with those symbols as ``dynamic_shapes``.

    The export runs at the graph's first call, not inside Dynamo's compile of the frame (a
    torch.export nested in it leaves Dynamo guards that fail on their own frame); a graph
    Ziggurat cannot take runs in eager from then on, with the log line saying why."""
    from ziggurat.backends.driver import compile_model
    from ziggurat.backends.options import CompileOptions
    from ziggurat.ir.errors import ZigguratError

    positions, sizes, specs = plan
    state: dict[str, Any] = {}

    def build(tensors: tuple[Any, ...]) -> Callable[..., Any]:
        wrapper = _SizeArguments(gm, positions, sizes)
        try:
            compiled = compile_model(wrapper, tuple(t.detach() for t in tensors), CompileOptions.from_kwargs(
                name, {**options, "dynamic_shapes": specs, "frontend": "export"}))
        except ZigguratError as e:
            log.warning("ziggurat: running this graph in eager (%d nodes): %s", len(gm.graph.nodes),
                        str(e).splitlines()[0])
            return gm.forward
        SYMBOLIC_GRAPHS_COMPILED[0] += 1
        log.info("ziggurat: compiled a graph of %d nodes for %s with symbolic sizes (%s)", len(gm.graph.nodes),
                 name, "; ".join(compiled.symbols.describe()))

        def run_compiled(*args: Any) -> Any:
            return compiled(*(args[i] for i in positions))

        return run_compiled

    def run(*args: Any) -> Any:
        target = state.get("run")
        if target is None:
            target = state["run"] = build(tuple(args[i] for i in positions))
        out = target(*args)
        return out if isinstance(out, tuple | list) else (out,)

    return run
