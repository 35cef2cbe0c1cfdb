"""``compile(model, inputs, dynamic_shapes=...)``: one export for every size in the declared ranges.

The model is exported once with torch.export's ``Dim``s, so its graph is symbolic: the
``torch`` level shows the dynamic dims as ``?`` and the size arithmetic as scalar ops.  Each
call's sizes are checked against the declared ranges and relations (an :class:`InputError`
naming the input, the dim, the value and the range), then run by a build specialized to those
sizes: the exported graph imported with the sizes put in and taken through the backend's
static pipeline.  Builds are kept per size tuple (least recently used first out, at most
``max_specializations``); each new one is a report line.

What is still missing (issue 16): the backends do not yet compile ``?`` dims themselves, so
each new size costs a backend build (the export and the checks are shared).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp

from ziggurat.backends.compiled_module import CompiledModule, forward_function
from ziggurat.backends.driver import Lowered, build_lowered, lower_module
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.sampled_range import sampled_range_lowering, served_box
from ziggurat.ir.errors import InputError, ModelImportError, ZigguratError
from ziggurat.ir.importer import fresh_examples
from ziggurat.ir.importer.autocast import autocast_for
from ziggurat.ir.importer.dynamic_shapes import export_dynamic_shapes, flat_dynamic_shapes, shape_symbols_of
from ziggurat.ir.importer.export import ExportImporter, export, functional
from ziggurat.ir.importer.model_call import ModelCall
from ziggurat.ir.blob_owner import keep_blobs_with, owning_blobs
from ziggurat.ir.ir_levels import IRLevels
from ziggurat.ir.resources import BLOBS
from ziggurat.ir.shape_symbols import EXAMPLE_SIZES_ATTR, ShapeSymbols, example_sizes_attr
from ziggurat.ir.signature import OUTPUTS_ATTR, call_signature, input_names, mark_storage_reads, set_call_signature
from ziggurat.ir.types import dtype_of

log = logging.getLogger("ziggurat")

#: ``report.stats`` key: how the size expressions of the symbolic level were found
SYMBOLIC_SHAPES = "symbolic shapes"
#: ``report.stats`` key: builds made for a new size tuple
SPECIALIZED = "size specializations built"
#: how many size specializations a module keeps by default
MAX_SPECIALIZATIONS = 8
#: ``report.stats`` key: whether one build serves the whole ranges
RANGE_BUILD = "range build"
#: the report line of a range build serving every declared size (from ``range_floor``)
ONE_BUILD = "one build serves every size in the ranges"
#: stats: range builds made for calls with a symbol below the range build's lows
PINNED_RANGE_BUILDS = "range builds with pinned sizes"


@dataclass(frozen=True)
class PinnedRangeBuild:
    """A range build for calls with some symbols below the main range build's lows: those
    pinned to one size (``pinned``, None for a symbol that ranges), the others from ``lows``."""

    pinned: tuple[int | None, ...]
    lows: list[int]
    build: CompiledModule

    def serves(self, key: Sequence[int]) -> bool:
        return all(v == p if p is not None else v >= low for v, p, low in zip(key, self.pinned, self.lows, strict=True))


def annotate_symbolic_shapes(symbolic_ir: ModuleOp) -> str:
    """Write the size expressions on the symbolic level (``ziggurat.shapes``: ``batch x 15``)
    and say how it went.  The per-size builds do not read them, so an op the analysis cannot
    follow, or one it finds holding only for part of a range, is a report line and a warning,
    not a failed compile."""
    from xdsl.context import Context

    from ziggurat.passes.annotate_symbolic_shapes import INCOMPLETE_ATTR, AnnotateSymbolicShapesPass

    try:
        AnnotateSymbolicShapesPass().apply(Context(), symbolic_ir)
    except ZigguratError as e:
        log.warning("symbolic shapes of the torch level: %s", e)
        return f"not annotated: {e}"
    incomplete = forward_function(symbolic_ir).attributes.get(INCOMPLETE_ATTR)
    return "annotated" if incomplete is None else f"annotated, incomplete {incomplete}"


def state_fingerprint(state: dict[str, Any]) -> dict[str, tuple[int, torch.dtype, tuple[int, ...], int]]:
    """Each tensor of a model's state (parameters, buffers, constants) as its storage, dtype,
    shape and version counter: an in-place write or a conversion of the model after
    ``compile()`` changes one of them."""
    return {name: (t.data_ptr(), t.dtype, tuple(t.shape), t._version)  # pyright: ignore[reportPrivateUsage]
            for name, t in state.items() if isinstance(t, torch.Tensor)}


class DynamicCompiledModule(torch.nn.Module):
    """A model compiled for ranges of input sizes. Call it like the original; ``.symbols``
    holds the declared symbols, ``.report`` the compile's report (with one line per size
    specialization), ``.ir["torch"]`` the symbolic ``torch`` level.  That level's weights are
    the model's own tensors, not copies (each build copies what it reads): printed after the
    model changed, it shows the new values, which no build of this module uses (a later size
    refuses to build from them, ``_check_state``)."""

    def __init__(self, program: Any, symbols: ShapeSymbols, sympy_symbols: dict[str, Any],
                 options: CompileOptions, symbolic_ir: ModuleOp, model_name: str,
                 max_specializations: int = MAX_SPECIALIZATIONS) -> None:
        """``program``: the exported program; ``symbolic_ir``: its ``torch`` level, whose function
        holds the call signature, the input names and types (``?`` where a dim is symbolic) and
        the output structure that every specialization shares."""
        super().__init__()
        self._model_name = model_name
        self._program = program
        #: the model's parameters, buffers and constants as compiled (later sizes import them again)
        self._state = state_fingerprint(self._live_state())
        self.symbols = symbols
        self._sympy = sympy_symbols
        self.options = options
        self.module_ir = symbolic_ir
        fn = forward_function(symbolic_ir)
        signature = call_signature(fn)
        if signature is None:
            raise ZigguratError("a dynamic-shape module needs the model's call signature", op="compile")
        self._signature = signature
        self._input_names = input_names(fn)
        self._outputs = fn.attributes[OUTPUTS_ATTR]
        types = list(fn.function_type.inputs.data)
        self._dtypes = [dtype_of(t) for t in types]
        #: each input's sizes, None where the dim is symbolic
        self._static: list[list[int | None]] = [
            [None if d == DYNAMIC_INDEX else int(d) for d in t.get_shape()]  # pyright: ignore
            for t in types]
        self._specializations: OrderedDict[tuple[int, ...], CompiledModule] = OrderedDict()
        #: one build for every size in the ranges, where the backend makes one (``build_range``)
        self.range_build: CompiledModule | None = None
        #: the smallest size of every symbol the range build serves: a backend that samples its
        #: lowerings (``sampled_range_builds``) leaves size 1 (broadcasts, dropped dims) to a
        #: build of its own
        self.range_floor = 2 if _samples_lowerings(options.backend) else 0
        #: per symbol, the smallest size the range build serves (its declared low, the floor, or
        #: higher where the lowerings change structure at small sizes); None: ``range_floor``
        self.range_lows: list[int] | None = None
        #: range builds for calls below ``range_lows``: those symbols pinned to the call's sizes,
        #: the others over their range (None where the backend declined one)
        self._pinned: dict[tuple[int | None, ...], PinnedRangeBuild | None] = {}
        self.max_specializations = max_specializations
        self.report = CompileReport(backend=options.backend)
        self.report.stats[SYMBOLIC_SHAPES] = annotate_symbolic_shapes(symbolic_ir)
        self.ir = IRLevels()
        self.ir.snapshot("torch", symbolic_ir)

    # -- call time ---------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        tensors = self._signature.flat_inputs(args, kwargs)
        shapes = [list(t.shape) if isinstance(t, torch.Tensor) else None for t in tensors]
        return self.specialization(shapes)(*args, **kwargs)

    def specialization(self, shapes: Sequence[Sequence[int] | None]) -> CompiledModule:
        """The build for flat inputs of ``shapes`` (made now if it is new)."""
        self._check_static(shapes)
        values = self.symbols.bind(shapes)
        key = tuple(values[s.name] for s in self.symbols.symbols)
        if self.range_build is not None and all(
                v >= low for v, low in zip(key, self.range_lows or [self.range_floor] * len(key), strict=True)):
            return self.range_build
        pinned = self._pinned_range_build(key)
        if pinned is not None:
            return pinned
        built = self._specializations.get(key)
        if built is not None:
            self._specializations.move_to_end(key)
            return built
        built = self._build(values, [list(s) if s is not None else [] for s in shapes])
        self._specializations[key] = built
        if len(self._specializations) > self.max_specializations:
            self._specializations.popitem(last=False)
        return built

    def _check_static(self, shapes: Sequence[Sequence[int] | None]) -> None:
        names = self._input_names
        if len(shapes) != len(self._static):
            raise InputError(f"expected {len(self._static)} tensor inputs, got {len(shapes)}", op="call")
        for i, (shape, static) in enumerate(zip(shapes, self._static, strict=True)):
            if shape is None:
                raise InputError(f"input {i} ('{names[i]}') must be a tensor", op="call")
            if len(shape) != len(static):
                raise InputError(f"input {i} ('{names[i]}') has rank {len(shape)}; it was compiled for rank "
                                 f"{len(static)} ({self._pattern(i)})", op="call")
            for k, (n, want) in enumerate(zip(shape, static, strict=True)):
                if want is not None and n != want:
                    raise InputError(f"input {i} ('{names[i]}') dim {k} is {n}; it was compiled for {want} "
                                     f"(a static dim: {self._pattern(i)})", op="call")

    def _pattern(self, i: int) -> str:
        exprs = {d.dim: d.expr for d in self.symbols.dims if d.input == i}
        return "[" + ", ".join(exprs.get(k, str(n)) for k, n in enumerate(self._static[i])) + "]"

    @property
    def specializations(self) -> list[dict[str, int]]:
        """The size tuples built so far, oldest first."""
        return [dict(zip((s.name for s in self.symbols.symbols), key, strict=True)) for key in self._specializations]

    # -- builds ------------------------------------------------------------------------------------
    def _live_state(self) -> dict[str, Any]:
        """The tensors a later size's build reads: the exported program's state and constants."""
        program = self._program
        return {**dict(getattr(program, "state_dict", {}) or {}), **dict(getattr(program, "constants", {}) or {})}

    def _check_state(self, doing: str) -> None:
        """A build from tensors changed since ``compile()`` would disagree with the sizes built
        before; so would a saved file, whose exported program holds the tensors as they are now
        (a size built after ``load`` reads them)."""
        changed = sorted(name for name, now in state_fingerprint(self._live_state()).items() if self._state.get(name) != now)
        if changed:
            raise ModelImportError(
                f"{doing}: the model's {', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''} "
                "changed after compile() (written in place or converted); the sizes built so far use the values "
                "it had then: compile the model again", op="compile")

    def lowering(self, values: dict[str, int], shapes: Sequence[Sequence[int]], start: float,
                 options: CompileOptions | None = None, sampled: bool = False) -> Lowered:
        """The exported graph imported at ``values`` (the symbols' sizes; ``shapes``: the inputs')
        and taken through the backend's static pipeline (``options``: the module's by default).
        ``sampled``: a lowering a range build compares with others, where nothing whose shape
        follows the sizes is constant-folded."""
        sizes = {self._sympy[name]: value for name, value in values.items()}
        examples = [torch.zeros(list(shape), dtype=dtype) for shape, dtype in zip(shapes, self._dtypes, strict=True)]
        label = ", ".join(f"{k}={v}" for k, v in values.items())
        self._check_state(f"specializing to {label}")
        try:
            module = ExportImporter(self._program, sizes, mark_sized=sampled).import_program(examples, input_names=self._input_names)
        except ZigguratError as e:
            raise ModelImportError(f"specializing to {label}: {e.message}", op=e.op, schema=e.schema,
                                   location=e.location) from None
        fn = forward_function(module)
        fn.attributes[OUTPUTS_ATTR] = self._outputs
        set_call_signature(fn, self._signature)
        mark_storage_reads(fn)
        return lower_module(module, tuple(examples), options or self.options, start)

    def build_range(self, shapes: Sequence[Sequence[int]]) -> None:
        """One build of the symbolic level for every size in the ranges, where the backend
        builds ``?`` dims (``range_builds``: the reference interpreter, TensorRT segments with
        optimization profiles) or samples its lowerings (``sampled_range_builds``: the CPU
        backend); any failure leaves the per-size builds, with the reason in the report."""
        from ziggurat.backends.registry import get_backend

        backend = get_backend(self.options.backend)
        sampled = _samples_lowerings(self.options.backend)
        if not getattr(backend, "range_builds", False) and not sampled:
            self.report.stats[RANGE_BUILD] = f"not made: the {self.options.backend} backend builds one size at a time"
            return
        start = time.perf_counter()
        examples = tuple(torch.zeros(list(shape), dtype=dtype) for shape, dtype in zip(shapes, self._dtypes, strict=True))
        served: list[int] = []
        try:
            if sampled:
                lows, tops = served_box(self.symbols, self.range_floor)
                built, served = self._sampled_build(lows, tops, start)
            else:
                def lowering() -> Lowered:
                    module = self.module_ir.clone()
                    values = self.symbols.bind(shapes)  # the example's sizes: the TensorRT profiles' opt
                    forward_function(module).attributes[EXAMPLE_SIZES_ATTR] = example_sizes_attr(values)
                    return lower_module(module, examples, self.options, start)

                built = build_lowered(lowering, self.options)
        except ZigguratError as e:
            log.warning("no range build for %s, building per size: %s", self._model_name, e)
            self.report.stats[RANGE_BUILD] = f"not made ({e.message}): one build per size"
            return
        self.range_build = built
        if sampled:
            self.range_lows = served
        for name in ("native_ops", "fallback_ops", "unsupported", "pass_stats"):
            setattr(self.report, name, getattr(built.report, name))
        self.report.stats.update({k: v for k, v in built.report.stats.items() if k not in self.report.stats})
        self.report.stats[RANGE_BUILD] = self._range_text()
        self.report.pass_times.append(("range build", time.perf_counter() - start))
        self.ir.merge(built.ir, skip=("torch",))

    def _range_text(self) -> str:
        """The report line of the range build: what it serves."""
        if self.range_lows is None or all(
                low == max(s.low, self.range_floor) for low, s in zip(self.range_lows, self.symbols.symbols, strict=True)):
            return ONE_BUILD
        raised = ", ".join(f"{s.name} from {low}" for low, s in zip(self.range_lows, self.symbols.symbols, strict=True)
                           if low > max(s.low, self.range_floor))
        return (f"one build serves every size in the ranges with {raised} (the lowerings change structure below: "
                "smaller sizes get range builds of their own)")

    def _sampled_build(self, lows: Sequence[int], tops: Sequence[int], start: float) -> tuple[CompiledModule, list[int]]:
        """A build for the box ``lows``..``tops`` from lowerings at sampled sizes, and the lows
        it serves (``sampled_range_lowering``)."""
        from ziggurat.backends.registry import get_backend

        backend = get_backend(self.options.backend)
        fn = forward_function(self.module_ir)
        options = self.options
        if options.passes is None:
            options = replace(options, passes=backend.range_pipeline(options))
        served: list[int] = []

        def lowering() -> Lowered:
            lowered, box = sampled_range_lowering(
                self.symbols, self._static, lambda values, at: self.lowering(values, at, start, options, sampled=True),
                backend, list(fn.function_type.inputs.data), self.ir["torch"], lows, tops)
            served[:] = box
            return lowered

        built = build_lowered(lowering, self.options)
        return built, list(served)

    @property
    def pinned_builds(self) -> list[PinnedRangeBuild]:
        """The range builds made so far for calls below ``range_lows`` (oldest first)."""
        return [b for b in self._pinned.values() if b is not None]

    def _pinned_range_build(self, key: tuple[int, ...]) -> CompiledModule | None:
        """For a call below the range build's lows: a range build with those symbols pinned to
        the call's sizes (``batch = 1`` over every ``seq``), made at the first such call; None
        where there is none to make or the backend declined it."""
        if self.range_build is None or self.range_lows is None:
            return None
        pinned = tuple(v if v < low else None for v, low in zip(key, self.range_lows, strict=True))
        if all(p is not None for p in pinned):
            return None
        if pinned not in self._pinned:
            self._pinned[pinned] = self._make_pinned(pinned)
        box = self._pinned[pinned]
        return box.build if box is not None and box.serves(key) else None

    def _make_pinned(self, pinned: tuple[int | None, ...]) -> PinnedRangeBuild | None:
        assert self.range_lows is not None
        start = time.perf_counter()
        lows = [p if p is not None else low for p, low in zip(pinned, self.range_lows, strict=True)]
        tops = [p if p is not None else int(s.high or 0) for p, s in zip(pinned, self.symbols.symbols, strict=True)]
        label = ", ".join(f"{s.name}={p}" for p, s in zip(pinned, self.symbols.symbols, strict=True) if p is not None)
        try:
            built, served = self._sampled_build(lows, tops, start)
        except ZigguratError as e:
            log.info("no range build for %s at %s, building per size: %s", self._model_name, label, e.message)
            return None
        stats = self.report.stats
        stats[PINNED_RANGE_BUILDS] = stats.get(PINNED_RANGE_BUILDS, 0) + 1
        self.report.pass_times.append((f"range build {label}", time.perf_counter() - start))
        return PinnedRangeBuild(pinned, served, built)

    def _build(self, values: dict[str, int], shapes: list[list[int]]) -> CompiledModule:
        start = time.perf_counter()
        label = ", ".join(f"{k}={v}" for k, v in values.items())

        def lowering() -> Lowered:
            return self.lowering(values, shapes, start)

        built = build_lowered(lowering, self.options)
        seconds = time.perf_counter() - start
        stats = self.report.stats
        stats[SPECIALIZED] = stats.get(SPECIALIZED, 0) + 1
        self.report.pass_times.append((f"specialize {label}", seconds))
        log.info("built %s for %s in %.2f s", self._model_name, label, seconds)
        if len(self._specializations) == 0:  # the first build's op census stands for all
            for name in ("native_ops", "fallback_ops", "unsupported", "pass_stats"):
                setattr(self.report, name, getattr(built.report, name))
        return built

    def save(self, path: str | Path) -> None:
        """Write one file with the exported program, the symbols and every specialization built
        so far; ``ziggurat.load(path)`` reads it back (those without recompiling)."""
        from ziggurat.backends.dynamic_serialization import save

        self._check_state("saving")
        save(self, Path(path))  # pyright: ignore[reportArgumentType]

    def explain_symbols(self) -> str:
        return "\n".join(self.symbols.describe())

    def extra_repr(self) -> str:
        return f"backend={self.report.backend}, symbols=[{'; '.join(self.symbols.describe())}]"


def _samples_lowerings(backend: str) -> bool:
    from ziggurat.backends.registry import get_backend

    return bool(getattr(get_backend(backend), "sampled_range_builds", False))


def export_dynamic(model: Any, inputs: tuple[Any, ...], options: CompileOptions,
                   example_kwargs: dict[str, Any] | None) -> tuple[DynamicCompiledModule, list[list[int]]]:
    """Export ``model`` once with ``options.dynamic_shapes``: the module (nothing built yet)
    and the example's input shapes."""
    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        raise ZigguratError(f"dynamic_shapes takes a Python nn.Module (exported with torch.export), not a "
                            f"{type(model).__name__}", op="compile")
    if options.frontend == "torchscript":
        raise ZigguratError("dynamic_shapes needs the torch.export frontend: a TorchScript trace fixes every "
                            "size (use frontend='auto' or 'export')", op="compile")
    start = time.perf_counter()
    call = ModelCall(model, fresh_examples(inputs), dict(example_kwargs or {}),
                     autocast_for(model, options.precision, options.frontend))
    flat = flat_dynamic_shapes(call.signature, options.dynamic_shapes)
    if not flat:
        raise ZigguratError("dynamic_shapes declares no dynamic dim; leave it out for a static compile", op="compile")
    _check_examples(call, flat)
    try:
        with call.flat() as flat_model:
            program = export(flat_model, call.tensors, dynamic_shapes=export_dynamic_shapes(flat, len(call.tensors)))
    except ZigguratError:
        raise
    except Exception as e:  # torch.export's own report: a Dim the model's code constrains, ...
        text = str(e).strip()
        raise ModelImportError(f"torch.export with these dynamic_shapes failed: {text[:1500] or type(e).__name__}",
                               op=type(model).__name__) from None
    program = functional(program)
    symbols, sympy_symbols = shape_symbols_of(program, call.input_names, flat)
    # The symbolic level borrows the model's weights for its life instead of copying them: the
    # builds made from it copy what they read (``build_lowered`` settles every borrowed blob a
    # build references), and each size's build imports the program again (``lowering``).
    owner = BLOBS.new_owner(borrows=True)
    with owning_blobs(owner):
        symbolic = ExportImporter(program, symbols=symbols).import_program(call.tensors, input_names=call.input_names)
    keep_blobs_with(symbolic, owner)
    call.finish(symbolic, forward_function(symbolic))
    log.info("exported %s with %s in %.2f s", type(model).__name__, "; ".join(symbols.describe()),
             time.perf_counter() - start)
    compiled = DynamicCompiledModule(program, symbols, sympy_symbols, options, symbolic, type(model).__name__)
    compiled.report.pass_times.append(("export", time.perf_counter() - start))
    return compiled, [list(t.shape) for t in call.tensors]


def compile_dynamic(model: Any, inputs: tuple[Any, ...], options: CompileOptions,
                    example_kwargs: dict[str, Any] | None) -> DynamicCompiledModule:
    """Export ``model`` once with ``options.dynamic_shapes`` and build the example's sizes."""
    start = time.perf_counter()
    compiled, shapes = export_dynamic(model, inputs, options, example_kwargs)
    compiled.build_range(shapes)
    try:
        first = compiled.specialization(shapes)
    except InputError as e:
        raise ZigguratError(f"the example inputs are outside the declared ranges: {e.message}", op="compile") from None
    compiled.report.total_time = time.perf_counter() - start
    compiled.ir.merge(first.ir, skip=("torch",))
    return compiled


def _check_examples(call: ModelCall, flat: dict[int, dict[int, Any]]) -> None:
    """Each example size inside the range its ``Dim`` declares (torch.export's own message for
    this names neither the input nor the dim)."""
    for i, dims in flat.items():
        shape = call.tensors[i].shape
        for dim, spec in dims.items():
            where = f"input {i} ('{call.input_names[i]}') dim {dim}"
            if dim >= len(shape):
                raise ZigguratError(f"dynamic_shapes: {where} does not exist (the example has rank {len(shape)})",
                                    op="compile")
            if shape[dim] in (0, 1):
                raise ZigguratError(f"dynamic_shapes: {where} is {shape[dim]} in the example; torch.export fixes "
                                    "sizes 0 and 1 as constants, so give an example of size 2 or more there (every "
                                    "size in the declared range is served, 1 included)", op="compile")
            low, high = getattr(spec, "min", None), getattr(spec, "max", None)
            if not isinstance(low, int) or not isinstance(high, int) or getattr(spec, "root", None) is not None:
                continue  # a hint (Dim.AUTO), or a derived Dim: torch.export checks it
            if not low <= shape[dim] <= high:
                raise ZigguratError(f"the example inputs are outside the declared ranges: {where} is {shape[dim]}, "
                                    f"'{spec.__name__}' is declared [{low}, {high}]", op="compile")
