"""The compile driver behind ``ziggurat.compile``: import, pass pipeline, backend build."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat.backends.compiled_module import CompiledModule, forward_function, static_inputs_of
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.heap import release_free_heap
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.registry import get_backend
from ziggurat.ir.blob_owner import current_owner, keep_blobs_with, owning_blobs
from ziggurat.ir.importer import import_model
from ziggurat.ir.ir_levels import IRLevels
from ziggurat.ir.pipeline import run_pipeline
from ziggurat.ir.resource_refs import referenced_handles
from ziggurat.ir.resources import BLOBS
from ziggurat.ir.statistics import Statistics
from ziggurat.backends.passes import parse_pipeline

log = logging.getLogger("ziggurat")


def normalize_inputs(example_inputs: Any) -> tuple[Any, ...]:
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, list | tuple):
        return tuple(example_inputs)  # pyright: ignore[reportUnknownArgumentType]
    from ziggurat.ir.errors import ZigguratError

    raise ZigguratError(
        f"example_inputs must be a tensor or a tuple of inputs, got {type(example_inputs).__name__}",
        op="compile",
    )


@dataclass
class Lowered:
    """A model imported and taken through its backend's graph pipeline."""

    module: ModuleOp
    backend: Any
    report: CompileReport
    inputs: tuple[Any, ...]
    ir: IRLevels
    start: float
    #: the model's input types at the torch level (backends may change the signature)
    input_types: list[Any]


def lower(model: Any, example_inputs: Any, options: CompileOptions,
          example_kwargs: dict[str, Any] | None = None) -> Lowered:
    """Import ``model`` and run the pipeline (``options.passes`` or the backend's default)."""
    inputs = normalize_inputs(example_inputs)
    if example_kwargs is not None and not isinstance(example_kwargs, dict):
        from ziggurat.ir.errors import ZigguratError

        raise ZigguratError(f"example_kwargs must be a dict of keyword inputs, got {type(example_kwargs).__name__}",
                            op="compile")
    backend = get_backend(options.backend)
    start = time.perf_counter()
    if options.verbose:
        logging.basicConfig(level=logging.INFO, format="[ziggurat] %(message)s")
        log.setLevel(logging.INFO)
    module = import_model(model, inputs, options.frontend, example_kwargs, options.precision)
    log.info("imported %s in %.1f ms", type(model).__name__, (time.perf_counter() - start) * 1e3)
    return lower_module(module, inputs, options, start)


def lower_module(module: ModuleOp, inputs: tuple[Any, ...], options: CompileOptions, start: float) -> Lowered:
    """Run the pipeline on an imported ``module`` (``start``: when the import began)."""
    backend = get_backend(options.backend)
    report = CompileReport(backend=options.backend)
    report.pass_times.append(("import", time.perf_counter() - start))
    ir = IRLevels()
    ir.snapshot("torch", module)
    input_types = list(forward_function(module).function_type.inputs.data)
    spec = options.passes if options.passes is not None else backend.default_pipeline(options)
    passes = parse_pipeline(spec) if spec else []
    stats = Statistics()
    owner = current_owner()
    before = owner.handles if owner is not None else frozenset[str]()

    def release_intermediates(_: ModulePass, lowered: ModuleOp) -> None:
        # blobs one pass made and a later one replaced, and the heap they took back to the OS:
        # without, all were live until the build (a bf16 MLP widened for the float32 kernels
        # peaked at 4.4x its float32 weights)
        # (the walk for the handles the IR still reads only when there is something to release)
        if owner is not None and owner.made_since(before) and owner.release_made_since(
                before, referenced_handles(lowered)):
            release_free_heap()

    report.pass_times += run_pipeline(module, passes, dump_dir=options.dump_ir, stats=stats,
                                      hooks=[release_intermediates])
    report.add_pass_stats(stats)
    if passes:
        ir.snapshot("graph", module)
    return Lowered(module, backend, report, inputs, ir, start, input_types)


def compile_model(model: Any, example_inputs: Any, options: CompileOptions,
                  example_kwargs: dict[str, Any] | None = None) -> Any:
    if options.dynamic_shapes is not None and options.frontend == "torchscript":
        from ziggurat.backends.dynamic_trace import compile_traced_dynamic

        return compile_traced_dynamic(model, normalize_inputs(example_inputs), options, example_kwargs)
    if options.dynamic_shapes is not None:
        from ziggurat.backends.dynamic_module import compile_dynamic

        return compile_dynamic(model, normalize_inputs(example_inputs), options, example_kwargs)
    return build_lowered(lambda: lower(model, example_inputs, options, example_kwargs), options)


def build_lowered(lowering: Callable[[], Lowered], options: CompileOptions) -> CompiledModule:
    """Lower (``lowering()``) and build with the backend: a :class:`CompiledModule`."""
    # The weight blobs this compile makes are held by `owner`, which lives as long as the
    # compiled module's IR: deleting the compiled module frees them.
    # The model's weights are borrowed, not copied, while the pipeline runs: those it folds or
    # packs into new blobs are dropped before the build without ever being copied, and the
    # rest are copied (settled) before the backend reads them.
    owner = BLOBS.new_owner(borrows=True)
    try:
        with owning_blobs(owner):
            lowered = lowering()
            module, backend, report, inputs, ir, start = (
                lowered.module, lowered.backend, lowered.report, lowered.inputs, lowered.ir, lowered.start)
            handles = referenced_handles(module)
            owner.release_except(handles)
            BLOBS.settle(owner, also=handles)  # and what another owner borrowed (a dynamic module's symbolic level)
            for handle in handles:  # ... and holds them: the build outlives that level if a caller keeps only it
                owner.hold(handle)
            build_start = time.perf_counter()
            executable = backend.build(module, options, report)
    except BaseException:
        owner.release_except(())  # a failed build keeps none of the weights it made
        raise
    owner.release_except(referenced_handles(module))  # weights replaced by folded/packed ones
    keep_blobs_with(module, owner)
    release_free_heap()  # the compile's temporaries, freed, back to the OS
    report.pass_times.append((f"build ({backend.name})", time.perf_counter() - build_start))
    report.total_time = time.perf_counter() - start
    log.info("compiled for %s in %.2f s", backend.name, report.total_time)
    ir.merge(getattr(executable, "ir", {}))
    return CompiledModule(executable, module, report, static_inputs_of(inputs), ir,
                          device=getattr(executable, "device", "cpu"), options=options,
                          input_types=lowered.input_types)
