"""``ziggurat.bisect``: which pass, and which op, first breaks the numerics?

The model is imported and every value gets a unique name.  The reference interpreter runs
the module after import and after every pass of the backend's pipeline, recording each
value by name; rewrites keep the name of the value they replace (a fused conv+relu carries
the relu's name), so values are compared at every op boundary that still exists.  The
first value beyond the tolerance names the pass and the op; then the backend's native
code is run and its outputs compared with eager.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ziggurat.backends.compiled_module import forward_function
from ziggurat.backends.driver import normalize_inputs
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.backends.registry import get_backend
from ziggurat.ir.blob_owner import owning_blobs
from ziggurat.ir.context import make_context
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.importer import import_model
from ziggurat.ir.importer.autocast import autocast_for
from ziggurat.ir.interpreter import run
from ziggurat.ir.locations import op_location
from ziggurat.ir.pipeline import expand_pipeline
from ziggurat.ir.resources import BLOBS
from ziggurat.ir.signature import call_signature
from ziggurat.ir.structure import tensor_leaves
from ziggurat.backends.passes import parse_pipeline


@dataclass
class Divergence:
    stage: str
    op: str
    value: str
    location: str | None
    max_abs: float
    max_rel: float
    expected: str
    actual: str

    def format(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return (f"first divergence after '{self.stage}': {self.op} (%{self.value}){where}\n"
                f"  max abs error {self.max_abs:.3e}, max rel error {self.max_rel:.3e}\n"
                f"  expected: {self.expected}\n  actual:   {self.actual}")


@dataclass
class BisectResult:
    tolerance: float
    stages: list[tuple[str, float | None]] = field(default_factory=list)
    divergence: Divergence | None = None

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def format(self) -> str:
        lines = [f"{name:<32} " + ("not interpretable at this level" if err is None else f"max rel error {err:.3e}")
                 for name, err in self.stages]
        lines.append(self.divergence.format() if self.divergence else
                     f"no divergence beyond {self.tolerance:g}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


class _Recorder(Interpreter.Listener):
    def __init__(self) -> None:
        self.values: dict[str, tuple[Operation, Any]] = {}

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        for result, value in zip(op.results, results):
            if result.name_hint and isinstance(value, torch.Tensor):
                self.values[result.name_hint] = (op, value)  # the last value of a name wins


def _name_values(module: ModuleOp) -> None:
    for i, op in enumerate(module.walk()):
        for j, result in enumerate(op.results):
            result.name_hint = f"{result.name_hint or 'v'}_b{i}_{j}"


def _summary(t: torch.Tensor) -> str:
    flat = t.detach().reshape(-1)[:6].tolist()
    return f"{tuple(t.shape)} {t.dtype} [" + ", ".join(f"{v:.5g}" for v in flat) + (", ...]" if t.numel() > 6 else "]")


def _errors(actual: torch.Tensor, expected: torch.Tensor) -> tuple[float, float]:
    if actual.shape != expected.shape:
        return float("inf"), float("inf")
    a, e = actual.double(), expected.double()
    diff = float((a - e).abs().max()) if a.numel() else 0.0
    scale = float(e.abs().max()) if e.numel() else 0.0
    return diff, diff / max(scale, 1e-30)


def _record(module: ModuleOp, inputs: Sequence[Any], func_name: str) -> tuple[list[Any], _Recorder] | None:
    recorder = _Recorder()
    try:
        outputs = run(module, inputs, func_name, listeners=[recorder])
    except ZigguratError:
        return None
    return outputs, recorder


def _first_divergence(stage: str, reference: _Recorder, current: _Recorder,
                      tolerance: float) -> Divergence | None:
    for name, (op, value) in current.values.items():
        if name not in reference.values:
            continue
        expected = reference.values[name][1]
        if value.shape != expected.shape or value.dtype != expected.dtype:
            continue
        max_abs, max_rel = _errors(value, expected)
        if max_rel > tolerance:
            return Divergence(stage, op.name, name, op_location(op), max_abs, max_rel,
                              _summary(expected), _summary(value))
    return None


def _outputs_error(actual: Sequence[Any], expected: Sequence[Any]) -> float:
    worst = 0.0
    for a, e in zip(actual, expected):
        if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor):
            worst = max(worst, _errors(a, e)[1])
    return worst


def bisect_module(module: ModuleOp, inputs: Sequence[Any], passes: Sequence[ModulePass],
                  expected: Sequence[Any] | None = None, tolerance: float = 1e-4,
                  ctx: Context | None = None, func_name: str = "forward") -> BisectResult:
    """Bisect ``passes`` on ``module`` (IR level only). ``expected``: eager outputs, if known."""
    ctx = ctx or make_context()
    result = BisectResult(tolerance)
    _name_values(module)
    recorded = _record(module, inputs, func_name)
    if recorded is None:
        raise ZigguratError("the imported module cannot be interpreted", op="bisect")
    outputs, reference = recorded
    if expected is not None:
        err = _outputs_error(outputs, expected)
        result.stages.append(("import", err))
        if err > tolerance:
            result.divergence = Divergence("import", "func.return", "outputs", None, float("nan"), err,
                                           _summary(expected[0]), _summary(outputs[0]))
            return result
    for _parents, p in expand_pipeline(passes):
        p.apply(ctx, module)
        module.verify()
        recorded = _record(module, inputs, func_name)
        if recorded is None:
            result.stages.append((p.name, None))
            continue
        new_outputs, current = recorded
        result.stages.append((p.name, _outputs_error(new_outputs, outputs)))
        divergence = _first_divergence(p.name, reference, current, tolerance)
        if divergence is not None:
            result.divergence = divergence
            return result
    return result


def _copies(values: Sequence[Any]) -> list[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in values]


def bisect_model(model: Any, example_inputs: Any, options: CompileOptions, tolerance: float = 1e-4,
                 extra_passes: Sequence[ModulePass] = (), example_kwargs: dict[str, Any] | None = None) -> BisectResult:
    """Bisect the backend's pipeline (``options.passes`` or its default, then ``extra_passes``),
    then the backend's native code, against eager."""
    inputs = normalize_inputs(example_inputs)
    kwargs = dict(example_kwargs or {})
    expected: list[Any] | None = None
    autocast = autocast_for(model, options.precision, options.frontend)
    if callable(model):
        with torch.no_grad(), autocast.context() if autocast is not None else nullcontext():
            expected = tensor_leaves(model(*_copies(inputs), **dict(zip(kwargs, _copies(list(kwargs.values()))))))
        if autocast is not None:
            expected = [autocast.output(t) for t in expected]
    backend = get_backend(options.backend)
    with owning_blobs(BLOBS.new_owner()):  # the weights are freed on return
        module = import_model(model, inputs, options.frontend, kwargs, options.precision)
        signature = call_signature(forward_function(module))
        tensors = (signature.flat_inputs(inputs, kwargs) if signature is not None
                   else [x for x in inputs if isinstance(x, torch.Tensor)])
        spec = options.passes if options.passes is not None else backend.default_pipeline(options)
        passes = [*(parse_pipeline(spec) if spec else []), *extra_passes]
        result = bisect_module(module, tensors, passes, expected, tolerance)
        if result.divergence is not None or expected is None:
            return result
        executable = backend.build(module, options, CompileReport(backend=options.backend))
        forward_function(module)
        native = executable.run(tensors)
    err = _outputs_error(native, expected)
    result.stages.append((f"native ({options.backend})", err))
    if err > tolerance:
        result.divergence = Divergence(f"native ({options.backend})", "forward", "outputs", None,
                                       float("nan"), err, _summary(expected[0]), _summary(native[0]))
    return result
