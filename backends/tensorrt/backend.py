"""The ``tensorrt`` and ``tensorrt-reference`` backends of ``ziggurat.compile``.

Both run ``graph-opt,convert-torch-to-trt{...}`` (``min_block_size`` and
``torch_executed_ops`` come from ``compile(..., min_block_size=1)``; with
``fallback=False`` the default ``min_block_size`` is 1, so every convertible op converts
and the rest is one ``UnsupportedOpsError``).  The forward function then runs op by op in
the reference interpreter, except that each segment call goes to

* ``tensorrt-reference``: the CPU reference executor (TensorRT's documented semantics);
* ``tensorrt``: an engine built by the real TensorRT (inputs moved to CUDA and back).

``analyze`` (for ``ziggurat.explain``) reports the partition without building anything;
``load`` rebuilds a saved executable from the saved IR and payload without converting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.executable import CompileReport
from ziggurat.backends.tensorrt.partition_report import (
    conversion_reports,
    fill_compile_report,
    is_converted,
    segment_functions,
)
from ziggurat.backends.tensorrt.payload import read_payload, write_payload
from ziggurat.backends.tensorrt.segmented_executable import SegmentedExecutable, SegmentRunner, reference_runners
from ziggurat.backends.tensorrt.segments import PartitionOptions
from ziggurat.ir.errors import UnsupportedOpsError, ZigguratError


def partition_options(options: Any) -> PartitionOptions:
    extra = dict(getattr(options, "extra", {}) or {})
    executed = extra.get("torch_executed_ops", ())
    if isinstance(executed, str):
        executed = tuple(s.strip() for s in executed.split(",") if s.strip())
    executed = tuple(str(s) for s in executed)
    for name in executed:
        if not name or any(c in name for c in ',"{} '):
            raise ZigguratError(f"torch_executed_ops entry {name!r} is not an op name like 'aten::softmax'",
                                op="compile")
    default_block = 3 if getattr(options, "fallback", True) else 1
    return PartitionOptions(int(extra.get("min_block_size", default_block)), executed)


def default_pipeline(options: Any) -> str:
    p = partition_options(options)
    args = f"min_block_size={p.min_block_size}"
    if p.torch_executed_ops:
        args += f' torch_executed_ops="{",".join(p.torch_executed_ops)}"'
    return f"graph-opt,convert-torch-to-trt{{{args}}}"


def partition(module: ModuleOp, options: Any, report: Any, backend: str, *, strict: bool) -> None:
    """Convert ``module`` unless the pipeline did; fill ``report``; with ``strict`` and
    ``fallback=False``, raise one error naming every op left to torch."""
    if not is_converted(module):
        from ziggurat.backends.tensorrt.convert_torch_to_trt import convert_module

        convert_module(module, partition_options(options))
    reports = conversion_reports(module)
    fill_compile_report(report, reports)
    left = [r for rep in reports for r in rep.fallback]
    if strict and left and not getattr(options, "fallback", True):
        raise UnsupportedOpsError(backend, left)


def analyze(module: ModuleOp, options: Any, report: Any) -> None:
    """The partition of ``module`` (converted on a copy if need be); no engine is built.

    Operators without a schema are left out: ``explain`` lists those for every backend."""
    from ziggurat.backends.tensorrt.segments import UNKNOWN_OPERATOR

    analyzed = CompileReport(report.backend)
    partition(module if is_converted(module) else module.clone(), options, analyzed, "", strict=False)
    for r in analyzed.unsupported:
        if r.reason != UNKNOWN_OPERATOR:
            report.add_unsupported(r)
    for op, n in analyzed.native_ops.items():
        report.native_ops[op] = report.native_ops.get(op, 0) + n
    report.stats.update(analyzed.stats)


#: options of ``ziggurat.compile`` the TensorRT backends take besides ``CompileOptions``'s own
#: (the reference takes the engine builder's too, so one set of options compiles for both)
EXTRA_OPTIONS = ("min_block_size", "torch_executed_ops", "workspace_size", "fp16", "int8")


class TensorRTReferenceBackend:
    """``backend="tensorrt-reference"``: TensorRT segments on the CPU reference executor."""

    name = "tensorrt-reference"
    #: builds ``?`` dims once for a whole range (``DynamicCompiledModule.build_range``)
    range_builds = True
    extra_options = EXTRA_OPTIONS

    def default_pipeline(self, options: Any) -> str:
        return default_pipeline(options)

    def analyze(self, module: ModuleOp, options: Any, report: Any) -> None:
        analyze(module, options, report)

    def build(self, module: ModuleOp, options: Any, report: Any) -> SegmentedExecutable:
        partition(module, options, report, self.name, strict=True)
        return SegmentedExecutable(module, reference_runners(module), write_payload("reference", module))

    def load(self, payload: bytes, module: ModuleOp, options: Any) -> SegmentedExecutable:
        read_payload(payload, module, "reference")
        return SegmentedExecutable(module, reference_runners(module), payload)


class TensorRTBackend:
    """``backend="tensorrt"``: one TensorRT engine per segment (needs TensorRT and a GPU)."""

    name = "tensorrt"
    #: builds ``?`` dims once for a whole range (``DynamicCompiledModule.build_range``)
    range_builds = True
    extra_options = EXTRA_OPTIONS

    def default_pipeline(self, options: Any) -> str:
        return default_pipeline(options)

    def analyze(self, module: ModuleOp, options: Any, report: Any) -> None:
        analyze(module, options, report)

    def build(self, module: ModuleOp, options: Any, report: Any) -> SegmentedExecutable:
        from ziggurat.backends.tensorrt.availability import import_tensorrt, require_cuda
        from ziggurat.backends.tensorrt.emitter import BuilderOptions, build_engine

        import_tensorrt()
        require_cuda()
        partition(module, options, report, self.name, strict=True)
        extra = dict(getattr(options, "extra", {}) or {})
        builder = BuilderOptions(
            workspace_size=int(extra.get("workspace_size", 1 << 30)),
            fp16=bool(extra.get("fp16", False)),
            int8=bool(extra.get("int8", False)),
        )
        engines = {seg.sym_name.data: build_engine(seg, builder) for seg in segment_functions(module)}
        report.stats["TensorRT engines"] = len(engines)
        return SegmentedExecutable(module, engine_runners(engines), write_payload("engines", module, engines), "cpu")

    def load(self, payload: bytes, module: ModuleOp, options: Any) -> SegmentedExecutable:
        from ziggurat.backends.tensorrt.availability import import_tensorrt, require_cuda

        import_tensorrt()
        require_cuda()
        engines = read_payload(payload, module, "engines")
        return SegmentedExecutable(module, engine_runners(engines), payload, "cpu")


def engine_runners(engines: dict[str, bytes]) -> dict[str, SegmentRunner]:
    """A runner per serialized engine: inputs to CUDA, the engine, outputs back to the CPU."""
    from ziggurat.backends.tensorrt.runtime import TensorRTEngine

    runners: dict[str, SegmentRunner] = {}
    for name, blob in engines.items():
        engine = TensorRTEngine(blob)

        def run(xs: Sequence[torch.Tensor], engine: TensorRTEngine = engine) -> list[torch.Tensor]:
            return [o.cpu() for o in engine.run([x.to("cuda") for x in xs])]

        runners[name] = run
    return runners
