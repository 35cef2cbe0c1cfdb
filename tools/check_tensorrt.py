"""Check the TensorRT path on a machine with TensorRT and a GPU: engines against eager and the reference.

    python -m ziggurat.tools.check_tensorrt                      # the example CNN + the smoke zoo
    python -m ziggurat.tools.check_tensorrt --models resnet18 bert-base
    python -m ziggurat.tools.check_tensorrt --reference          # no GPU: the harness on the CPU reference

Prints one table.  A row per zoo model: import, ``graph-opt``,
``convert-torch-to-trt``, one engine per segment (the ``tensorrt`` backend), run on CUDA;
whether every engine built, the max relative error against eager and against the
``tensorrt-reference`` backend (TensorRT's documented semantics on the CPU), and whether the
saved payload loads back to the same outputs.  A row per ``trt`` op kind: each layer of that
kind in the models' segments, alone in a function whose inputs are the values the reference
computed for it there, built into an engine and compared with the reference's result (eager
has no value for one layer: ``-``).  ``--reference`` runs the reference executor in place of
TensorRT, which checks the harness itself (every error is then 0).

Exit status: 0 every row built and is within tolerance, 1 some row failed, 2 TensorRT (or a
GPU) is not available here (it says what is missing).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue

DEFAULT_MODELS = ("small-cnn", "mlp-b1", "resnet18", "mobilenet_v2", "bert-base")
ModelBuild = Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]
Runner = Callable[[FuncOp, list[torch.Tensor]], list[torch.Tensor]]
#: max relative error of one layer against the reference
LAYER_TOLERANCE = 1e-4


@dataclass
class Row:
    kind: str  # "model" or "op"
    name: str
    built: str = "-"  # "yes", "no", "3/3"
    vs_eager: float | None = None
    vs_reference: float | None = None
    ok: bool = False
    detail: str = ""
    seconds: float = 0.0


def example_models() -> dict[str, tuple[ModelBuild, float]]:
    """name -> (build returning (model, inputs), fp32 tolerance on max relative error)."""
    from ziggurat.examples.small_cnn import build as small_cnn

    models: dict[str, tuple[ModelBuild, float]] = {"small-cnn": (small_cnn, 1e-4)}
    try:
        from ziggurat.bench.models import MODELS
    except ImportError:
        return models
    for name, spec in MODELS.items():
        models[name] = ((lambda s: lambda: (s.build(), s.example_inputs()))(spec), spec.tolerance)
    return models


def convert_model(model: torch.nn.Module, inputs: Sequence[torch.Tensor], min_block_size: int = 1) -> ModuleOp:
    """``model`` imported and converted as the TensorRT backends do (segments of ``trt`` ops)."""
    from ziggurat.backends.options import CompileOptions
    from ziggurat.backends.tensorrt.backend import TensorRTReferenceBackend
    from ziggurat.ir.importer import import_model
    from ziggurat.ir.pipeline import run_pipeline
    from ziggurat.backends.passes import parse_pipeline

    backend = TensorRTReferenceBackend()
    options = CompileOptions(backend=backend.name, extra={"min_block_size": min_block_size})
    module = import_model(model, list(inputs), frontend="torchscript")
    run_pipeline(module, parse_pipeline(backend.default_pipeline(options)))
    return module


def relative_error(got: Sequence[Any], want: Sequence[Any]) -> float:
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        if isinstance(w, torch.Tensor) and w.numel():
            g = g.detach().cpu().to(torch.float64)
            w = w.detach().cpu().to(torch.float64)
            scale = max(float(w.abs().max()), 1e-12)
            worst = max(worst, float((g - w).abs().max()) / scale)
    return worst


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]  # pyright: ignore
    return [value]


def segments(module: ModuleOp) -> list[FuncOp]:
    from ziggurat.backends.tensorrt.segments import BACKEND_ATTR

    return [op for op in module.ops if isinstance(op, FuncOp) and BACKEND_ATTR in op.attributes]


# -- runners: real engines, or the reference in their place -------------------------------------


def engine_runner() -> Runner:
    from ziggurat.backends.tensorrt.emitter import BuilderOptions, build_engine
    from ziggurat.backends.tensorrt.runtime import TensorRTEngine

    def run(func: FuncOp, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        engine = TensorRTEngine(build_engine(func, BuilderOptions()))
        return [o.cpu() for o in engine.run([x.to("cuda") for x in inputs])]

    return run


def reference_runner(func: FuncOp, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    from ziggurat.backends.tensorrt.reference_executor import run_trt_function

    return run_trt_function(func, inputs)


# -- one layer at a time ------------------------------------------------------------------------


@dataclass
class LayerCase:
    """One layer alone in a function, with the inputs and outputs the reference gave it in its model."""

    func: FuncOp
    inputs: list[torch.Tensor]
    expected: list[torch.Tensor]
    origin: str


def isolate(op: Any, values: dict[SSAValue, torch.Tensor], origin: str) -> LayerCase:
    """``op`` (a trt layer) in a function of its own: constants stay constants, other operands are inputs."""
    from ziggurat.dialects.trt import ConstantOp

    outer: list[SSAValue] = []
    for v in op.operands:
        if not isinstance(v.owner, ConstantOp) and v not in outer:
            outer.append(v)
    func = FuncOp(f"single_{op.name.replace('.', '_')}", ([v.type for v in outer], [r.type for r in op.results]))
    block = func.body.blocks.first
    assert block is not None
    mapping: dict[SSAValue, SSAValue] = dict(zip(outer, block.args, strict=True))
    for v in op.operands:
        if isinstance(v.owner, ConstantOp) and v not in mapping:
            constant = v.owner.clone()
            block.add_op(constant)
            mapping[v] = constant.results[0]
    layer = op.clone(value_mapper=mapping)
    block.add_op(layer)
    block.add_op(ReturnOp(*layer.results))
    return LayerCase(func, [values[v] for v in outer], [values[r] for r in op.results], origin)


def layer_cases(name: str, module: ModuleOp, inputs_of: dict[str, list[torch.Tensor]]) -> dict[str, list[LayerCase]]:
    """Per trt op kind, every non-constant layer of ``module``'s segments, isolated."""
    from ziggurat.backends.tensorrt.reference_executor import run_trt_function
    from ziggurat.dialects.trt import ConstantOp, TrtLayerOp

    cases: dict[str, list[LayerCase]] = {}
    for seg in segments(module):
        if seg.sym_name.data not in inputs_of:
            continue
        values: dict[SSAValue, torch.Tensor] = {}
        run_trt_function(seg, inputs_of[seg.sym_name.data], values)
        body = seg.body.blocks.first
        for op in body.ops if body is not None else ():
            if isinstance(op, TrtLayerOp) and not isinstance(op, ConstantOp):
                cases.setdefault(op.name, []).append(isolate(op, values, f"{name} @{seg.sym_name.data} '{op.layer}'"))
    return cases


def segment_inputs(module: ModuleOp, inputs: Sequence[torch.Tensor]) -> dict[str, list[torch.Tensor]]:
    """The inputs each segment receives when the model runs (the reference backend, recorded)."""
    from ziggurat.backends.options import CompileOptions
    from ziggurat.backends.executable import CompileReport
    from ziggurat.backends.tensorrt.backend import TensorRTReferenceBackend
    from ziggurat.backends.tensorrt.segmented_executable import SegmentRunner

    backend = TensorRTReferenceBackend()
    executable = backend.build(module.clone(), CompileOptions(backend=backend.name), CompileReport(backend.name))
    recorded: dict[str, list[torch.Tensor]] = {}
    runners: dict[str, SegmentRunner] = executable.runners
    for seg_name, runner in list(runners.items()):
        def record(xs: Sequence[torch.Tensor], runner: SegmentRunner = runner, seg_name: str = seg_name) -> list[torch.Tensor]:
            recorded.setdefault(seg_name, [x.detach().cpu().clone() for x in xs])
            return runner(xs)

        runners[seg_name] = record
    executable.run(list(inputs))
    return recorded


# -- rows ------------------------------------------------------------------------------------------


def model_row(name: str, build: ModelBuild, tolerance: float, *, reference: bool,
              cases: dict[str, list[LayerCase]]) -> Row:
    from ziggurat.backends.executable import CompileReport
    from ziggurat.backends.options import CompileOptions
    from ziggurat.backends.tensorrt.backend import TensorRTBackend, TensorRTReferenceBackend

    start = time.perf_counter()
    row = Row("model", name)
    model, inputs = build()
    with torch.no_grad():
        expected = _flat(model(*inputs))
    module = convert_model(model, inputs)
    for kind, found in layer_cases(name, module, segment_inputs(module, inputs)).items():
        cases.setdefault(kind, []).extend(found)
    ref_backend = TensorRTReferenceBackend()
    ref_options = CompileOptions(backend=ref_backend.name)
    reference_out = ref_backend.build(module.clone(), ref_options, CompileReport(ref_backend.name)).run(list(inputs))
    backend = ref_backend if reference else TensorRTBackend()
    options = CompileOptions(backend=backend.name, extra={"min_block_size": 1})
    report = CompileReport(backend=backend.name)
    n = len(segments(module))
    try:
        executable = backend.build(module, options, report)
    except Exception as e:  # noqa: BLE001  (the row says why)
        row.built, row.detail = f"0/{n}", _first_line(e)
        return row
    row.built = f"{n}/{n}"
    outputs = executable.run(list(inputs))
    row.vs_eager = relative_error(outputs, expected)
    row.vs_reference = relative_error(outputs, reference_out)
    reloaded = relative_error(backend.load(executable.serialize(), module, options).run(list(inputs)), outputs)
    fallback = sum(len(v) for v in report.fallback_ops.values())
    row.detail = f"{sum(report.native_ops.values())} ops on TensorRT, {fallback} in torch"
    if reloaded > 0.0:
        row.detail += f"; reloaded payload differs by {reloaded:.2e}"
    row.ok = row.vs_eager <= tolerance and reloaded == 0.0
    row.seconds = time.perf_counter() - start
    return row


def op_row(kind: str, cases: list[LayerCase], run: Runner) -> Row:
    start = time.perf_counter()
    row = Row("op", kind)
    built = 0
    worst = 0.0
    failures: list[str] = []
    for case in cases:
        try:
            got = run(case.func, case.inputs)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{case.origin}: {_first_line(e)}")
            continue
        built += 1
        worst = max(worst, relative_error(got, case.expected))
    row.built = f"{built}/{len(cases)}"
    row.vs_reference = worst if built else None
    row.ok = built == len(cases) and worst <= LAYER_TOLERANCE
    row.detail = failures[0] if failures else f"{len(cases)} layers"
    row.seconds = time.perf_counter() - start
    return row


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _error(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def format_table(rows: Sequence[Row]) -> str:
    width = max([len(r.name) for r in rows] + [10])
    lines = [f"{'':4}  {'kind':5}  {'name':<{width}}  {'built':>6}  {'vs eager':>9}  {'vs ref':>9}  {'s':>6}  detail"]
    for r in rows:
        lines.append(f"{'PASS' if r.ok else 'FAIL'}  {r.kind:5}  {r.name:<{width}}  {r.built:>6}  {_error(r.vs_eager):>9}  "
                     f"{_error(r.vs_reference):>9}  {r.seconds:6.1f}  {r.detail}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=list(DEFAULT_MODELS), help="model names (see --list)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--reference", action="store_true",
                        help="run the reference executor in place of TensorRT (checks the harness without a GPU)")
    args = parser.parse_args(argv)
    models = example_models()
    if args.list:
        print("\n".join(sorted(models)))
        return 0
    unknown = [m for m in args.models if m not in models]
    if unknown:
        print(f"check_tensorrt: unknown model(s) {', '.join(unknown)}; known: {', '.join(sorted(models))}",
              file=sys.stderr)
        return 2
    if not args.reference:
        from ziggurat.backends.tensorrt.availability import tensorrt_unavailable_reason

        reason = tensorrt_unavailable_reason()
        if reason is not None:
            print(f"check_tensorrt: TensorRT is not available here, so no engine can be built: {reason}",
                  file=sys.stderr)
            return 2
    rows: list[Row] = []
    cases: dict[str, list[LayerCase]] = {}
    for name in args.models:
        build, tolerance = models[name]
        try:
            rows.append(model_row(name, build, tolerance, reference=args.reference, cases=cases))
        except Exception as e:  # noqa: BLE001  (report every model, then fail)
            rows.append(Row("model", name, detail=_first_line(e)))
    run = reference_runner if args.reference else engine_runner()
    rows += [op_row(kind, found, run) for kind, found in sorted(cases.items())]
    print(format_table(rows), flush=True)
    failed = [f"{r.kind} {r.name}" for r in rows if not r.ok]
    print(f"{len(rows) - len(failed)}/{len(rows)} rows pass" + (f" (failed: {', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
