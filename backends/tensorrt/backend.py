"""The ``tensorrt`` and ``tensorrt-reference`` backends of ``ziggurat.compile``.

Both run ``graph-opt{prepack=false}`` and then convert the graph into TensorRT
segments themselves (``convert-torch-to-trt``; options ``min_block_size`` and
``torch_executed_ops`` come from ``compile(..., min_block_size=1)``).  The
forward function then runs op by op in the reference interpreter, except that each
segment call goes to

* ``tensorrt-reference``: the CPU reference executor (TensorRT's documented semantics);
* ``tensorrt``: an engine built by the real TensorRT (inputs moved to CUDA and back).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp

from ziggurat.backends.tensorrt.reference_executor import run_trt_function
from ziggurat.backends.tensorrt.segments import BACKEND_ATTR, ConversionReport, PartitionOptions
from ziggurat.ir.errors import ZigguratError

SegmentRunner = Callable[[Sequence[torch.Tensor]], list[torch.Tensor]]


def _partition_options(options: Any) -> PartitionOptions:
    extra = dict(getattr(options, "extra", {}) or {})
    executed = extra.get("torch_executed_ops", ())
    if isinstance(executed, str):
        executed = tuple(s.strip() for s in executed.split(",") if s.strip())
    return PartitionOptions(int(extra.get("min_block_size", 3)), tuple(executed))


def convert_for_tensorrt(module: ModuleOp, options: Any, report: Any) -> list[ConversionReport]:
    """Run the conversion unless the pipeline already did; fill the compile report."""
    from ziggurat.passes.convert_torch_to_trt import convert_module

    already = any(isinstance(op, FuncOp) and BACKEND_ATTR in op.attributes for op in module.ops)
    reports = [] if already else convert_module(module, _partition_options(options))
    if not getattr(options, "fallback", True):
        left = [r for rep in reports for r in rep.fallback]
        if left:
            from ziggurat.ir.errors import UnsupportedOpsError

            raise UnsupportedOpsError("tensorrt", left)
    for rep in reports:
        for op, n in rep.converted.items():
            report.native_ops[op] = report.native_ops.get(op, 0) + n
        for r in rep.fallback:
            report.fallback_ops.setdefault(r.op.split(" @ ")[0], []).append(r.reason)
        report.stats[f"TensorRT segments of @{rep.function}"] = len(rep.segments)
    return reports


class SegmentedExecutable:
    """Runs the forward function op by op; calls of TensorRT segments go to ``runners``."""

    def __init__(self, module: ModuleOp, runners: dict[str, SegmentRunner], device: str = "cpu") -> None:
        from ziggurat.backends.tensorrt.interpreter_functions import register
        from ziggurat.ir.interpreter import make_interpreter

        register()
        self.module = module
        self.runners = runners
        self.device = device
        self.forward = next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "forward")
        self._interpreter = make_interpreter(module)

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        body = self.forward.body.blocks.first
        assert body is not None
        env: dict[Any, Any] = dict(zip(body.args, inputs, strict=True))
        for op in body.ops:
            args = tuple(env[v] for v in op.operands)
            if isinstance(op, ReturnOp):
                return list(args)
            if isinstance(op, CallOp) and op.callee.string_value() in self.runners:
                results = self.runners[op.callee.string_value()](list(args))
            else:
                try:
                    results = self._interpreter.run_op(op, args)
                except ZigguratError:
                    raise
                except Exception as e:  # noqa: BLE001
                    cause = e.__cause__ or e.__context__
                    if isinstance(cause, ZigguratError):
                        raise cause from None
                    raise ZigguratError(str(e).strip().splitlines()[-1], op=op.name) from None
            env.update(zip(op.results, results, strict=True))
        raise ZigguratError("@forward does not end with func.return", op="tensorrt")


def _segments(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.ops if isinstance(op, FuncOp) and BACKEND_ATTR in op.attributes]


class TensorRTReferenceBackend:
    """``backend="tensorrt-reference"``: TensorRT segments on the CPU reference executor."""

    name = "tensorrt-reference"

    def default_pipeline(self, options: Any) -> str:
        return "graph-opt{prepack=false}"

    def build(self, module: ModuleOp, options: Any, report: Any) -> SegmentedExecutable:
        convert_for_tensorrt(module, options, report)
        runners: dict[str, SegmentRunner] = {}
        for seg in _segments(module):
            runners[seg.sym_name.data] = (lambda f: lambda xs: run_trt_function(f, xs))(seg)
        executable = SegmentedExecutable(module, runners)
        executable.ir = {"trt": _print(module)}  # type: ignore[attr-defined]
        return executable


class TensorRTBackend:
    """``backend="tensorrt"``: one TensorRT engine per segment (needs TensorRT and a GPU)."""

    name = "tensorrt"

    def default_pipeline(self, options: Any) -> str:
        return "graph-opt{prepack=false}"

    def build(self, module: ModuleOp, options: Any, report: Any) -> SegmentedExecutable:
        from ziggurat.backends.tensorrt.availability import import_tensorrt, require_cuda
        from ziggurat.backends.tensorrt.emitter import BuilderOptions, build_engine
        from ziggurat.backends.tensorrt.runtime import TensorRTEngine

        import_tensorrt()
        require_cuda()
        convert_for_tensorrt(module, options, report)
        extra = dict(getattr(options, "extra", {}) or {})
        builder = BuilderOptions(
            workspace_size=int(extra.get("workspace_size", 1 << 30)),
            fp16=bool(extra.get("fp16", False)),
            int8=bool(extra.get("int8", False)),
        )
        runners: dict[str, SegmentRunner] = {}
        for seg in _segments(module):
            engine = TensorRTEngine(build_engine(seg, builder))

            def run(xs: Sequence[torch.Tensor], engine: TensorRTEngine = engine) -> list[torch.Tensor]:
                outs = engine.run([x.to("cuda") for x in xs])
                return [o.cpu() for o in outs]

            runners[seg.sym_name.data] = run
        report.stats["TensorRT engines"] = len(runners)
        executable = SegmentedExecutable(module, runners)
        executable.ir = {"trt": _print(module)}  # type: ignore[attr-defined]
        return executable


def _print(module: ModuleOp) -> str:
    from ziggurat.ir.pipeline import print_module

    return print_module(module)
