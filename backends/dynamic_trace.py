"""``dynamic_shapes=`` on the TorchScript frontend: the same ``Dim`` spec, served by tracing.

A TorchScript trace fixes every size, so there is no symbolic graph to specialize: each new
size tuple in the declared ranges is traced again (the model's Python runs once per size) and
built like a static compile.  The ranges, relations and static dims are checked at each call
exactly as on the export path (:class:`DynamicCompiledModule`); the ``torch`` level shown is
the example's.  Derived dims (``2 * batch``) need the export frontend, which proves them.
"""

from __future__ import annotations

import time
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.driver import Lowered, lower_module
from ziggurat.backends.dynamic_module import DynamicCompiledModule, state_fingerprint
from ziggurat.backends.options import CompileOptions
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.importer import fresh_examples, import_model
from ziggurat.ir.importer.dynamic_shapes import flat_dynamic_shapes, range_bound
from ziggurat.ir.importer.model_call import ModelCall
from ziggurat.ir.shape_symbols import DimSymbol, InputDim, ShapeSymbols


def symbols_of_spec(call: ModelCall, flat: dict[int, dict[int, Any]]) -> ShapeSymbols:
    """The symbols the users' ``Dim``s declare (one per name: a name used on several dims
    declares them equal)."""
    symbols: dict[str, DimSymbol] = {}
    dims: list[InputDim] = []
    for i in sorted(flat):
        for dim, spec in sorted(flat[i].items()):
            where = f"input {i} ('{call.input_names[i]}') dim {dim}"
            if getattr(spec, "root", None) is not None or not hasattr(spec, "__name__"):
                raise ZigguratError(f"dynamic_shapes: {where} is a derived dim or a hint; on the TorchScript "
                                    "frontend give plain Dims (the export frontend proves derived ones)",
                                    op="compile")
            name = str(spec.__name__)
            symbol = DimSymbol(name, max(range_bound(getattr(spec, "min", 0)) or 0, 0), range_bound(getattr(spec, "max", None)))
            if symbols.setdefault(name, symbol) != symbol:
                raise ZigguratError(f"dynamic_shapes: two Dims named '{name}' with different ranges", op="compile")
            dims.append(InputDim(i, call.input_names[i], dim, name))
    return ShapeSymbols(tuple(symbols.values()), tuple(dims))


class TracedDynamicModule(DynamicCompiledModule):
    """A dynamic-shape module whose specializations are TorchScript traces of the model."""

    def __init__(self, model: torch.nn.Module, symbols: ShapeSymbols, options: CompileOptions,
                 example_ir: ModuleOp, example_shapes: list[list[int]], example_values: dict[str, int]) -> None:
        super().__init__(None, symbols, {}, options, example_ir, type(model).__name__)
        self._model = model
        self._state = state_fingerprint(self._live_state())
        self._example_ir: ModuleOp | None = example_ir.clone()
        self._example_values = example_values
        dynamic = {(d.input, d.dim) for d in symbols.dims}
        self._static = [[None if (i, k) in dynamic else n for k, n in enumerate(shape)]
                        for i, shape in enumerate(example_shapes)]

    def _live_state(self) -> dict[str, Any]:
        """The tensors a later size's trace reads: the model's parameters and buffers."""
        model = getattr(self, "_model", None)
        return dict(model.state_dict(keep_vars=True)) if model is not None else {}

    def lowering(self, values: dict[str, int], shapes: Any, start: float) -> Lowered:
        examples = [torch.zeros(list(shape), dtype=dtype) for shape, dtype in zip(shapes, self._dtypes, strict=True)]
        # static dims are checked before a specialization: the same symbols, the same shapes
        if self._example_ir is not None and values == self._example_values:
            module, self._example_ir = self._example_ir, None  # the example's trace: not traced twice
        else:
            self._check_state(", ".join(f"{k}={v}" for k, v in values.items()))
            args, kwargs = self._signature.arguments(examples)
            module = import_model(self._model, args, "torchscript", kwargs, self.options.precision)
        return lower_module(module, tuple(examples), self.options, start)


def compile_traced_dynamic(model: Any, inputs: tuple[Any, ...], options: CompileOptions,
                           example_kwargs: dict[str, Any] | None) -> TracedDynamicModule:
    """Check the spec, trace and build the example's sizes; later sizes trace at their first call."""
    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        raise ZigguratError(f"dynamic_shapes takes a Python nn.Module, not a {type(model).__name__}", op="compile")
    start = time.perf_counter()
    call = ModelCall(model, fresh_examples(inputs), dict(example_kwargs or {}))
    flat = flat_dynamic_shapes(call.signature, options.dynamic_shapes)
    if not flat:
        raise ZigguratError("dynamic_shapes declares no dynamic dim; leave it out for a static compile", op="compile")
    symbols = symbols_of_spec(call, flat)
    shapes = [list(t.shape) for t in call.tensors]
    try:
        symbols.bind(shapes)  # the example inside the ranges
    except InputError as e:
        raise ZigguratError(f"the example inputs are outside the declared ranges: {e.message}", op="compile") from None
    example_ir = import_model(model, inputs, "torchscript", example_kwargs, options.precision)
    compiled = TracedDynamicModule(model, symbols, options, example_ir, shapes, symbols.bind(shapes))
    compiled.report.pass_times.append(("trace", time.perf_counter() - start))
    first = compiled.specialization(shapes)
    compiled.report.total_time = time.perf_counter() - start
    compiled.ir.merge(first.ir, skip=("torch",))
    return compiled
