"""``ziggurat.explain``: what a backend will do with a model, before compiling it.

Every op the backend cannot take, all at once, each with its schema, the reason and its
source line; then the fusions that will apply and the backend's own figures (vectorized
share of kernels, prepacked bytes, memory plan, TensorRT segments).  Backends with an
``analyze`` method report without generating code; the others are built with fallback on.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.driver import lower, normalize_inputs
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.dialects.torch import OperatorOp
from ziggurat.ir.blob_owner import owning_blobs
from ziggurat.ir.errors import OpReport
from ziggurat.ir.locations import op_location
from ziggurat.ir.resources import BLOBS


@dataclass
class ExplainReport:
    backend: str
    unsupported: list[OpReport] = field(default_factory=list)
    fusions: dict[str, int] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    #: a dynamic-shape compile's symbols and their ranges (one line each)
    symbols: list[str] = field(default_factory=list)

    def format(self) -> str:
        lines = [f"Ziggurat explain: backend '{self.backend}'"]
        if self.symbols:
            lines.append("symbolic sizes:")
            lines += [f"  {line}" for line in self.symbols]
        if self.unsupported:
            lines.append(f"{len(self.unsupported)} op(s) the backend cannot take (they would run in torch):")
            for r in self.unsupported:
                lines.append("  " + r.format().replace("\n", "\n  "))
        else:
            lines.append("every op runs on the backend")
        if self.fusions:
            lines.append("fusions:")
            lines += [f"  {k:<32} x{v}" for k, v in sorted(self.fusions.items())]
        if self.stats:
            lines.append("backend:")
            lines += [f"  {k}: {v}" for k, v in self.stats.items()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def unknown_ops(module: ModuleOp) -> list[OpReport]:
    """``torch.operator`` ops whose schema torch does not know: no backend can run them."""
    return [
        OpReport(op.op_name.data, "unknown operator (no schema)", None, op_location(op))
        for op in module.walk()
        if isinstance(op, OperatorOp) and op.schema_text is None
    ]


def analyze(backend: Any, module: ModuleOp, options: CompileOptions, report: CompileReport) -> None:
    hook = getattr(backend, "analyze", None)
    if hook is not None:
        hook(module, options, report)
    else:
        backend.build(module, dataclasses.replace(options, fallback=True), report)


def report_from(report: CompileReport, module: ModuleOp) -> ExplainReport:
    fusions = {k: v for k, v in report.pass_stats.get("fuse-post-ops", {}).items() if "+" in k}
    stats: dict[str, Any] = {}
    packed = report.pass_stats.get("prepack-weights", {})
    if packed:
        stats["prepacked weights"] = (f"{packed.get('weights packed', 0)} weights, "
                                      f"{packed.get('bytes packed', 0)} bytes "
                                      f"({packed.get('extra bytes (padding)', 0)} bytes of padding)")
    converted = report.pass_stats.get("convert-torch-to-trt", {})
    if converted:  # TensorRT's int8: which PT2E pairs and weights became Q/DQ layers
        stats["TensorRT int8"] = ", ".join(f"{k} {v}" for k, v in sorted(converted.items()))
    stats.update(report.stats)
    unsupported: list[OpReport] = []
    seen: set[tuple[str, str | None, str]] = set()
    for r in unknown_ops(module) + list(report.unsupported):
        key = (r.op, r.location, r.reason)
        if key not in seen:
            seen.add(key)
            unsupported.append(r)
    return ExplainReport(report.backend, unsupported, fusions, stats)


def explain_model(model: Any, example_inputs: Any, options: CompileOptions,
                  example_kwargs: dict[str, Any] | None = None) -> ExplainReport:
    with owning_blobs(BLOBS.new_owner()):  # the weights are freed on return
        symbols: list[str] = []
        if options.dynamic_shapes is not None:  # explained at the example's sizes
            from ziggurat.backends.dynamic_module import export_dynamic

            dynamic, shapes = export_dynamic(model, normalize_inputs(example_inputs), options, example_kwargs)
            values = dynamic.symbols.bind(shapes)
            lowered = dynamic.lowering(values, shapes, time.perf_counter())
            symbols = [*dynamic.symbols.describe(),
                       "explained at " + ", ".join(f"{k}={v}" for k, v in values.items())]
        else:
            lowered = lower(model, example_inputs, options, example_kwargs)
        analyze(lowered.backend, lowered.module, options, lowered.report)
        report = report_from(lowered.report, lowered.module)
        report.symbols = symbols
        return report
