"""The ``cpu`` backend: loop-level lowering, LLVM code generation, JIT, runtime.

    compiled = ziggurat.compile(model, (x,), backend="cpu", isa="avx2", threads=2)
    compiled.report   # native vs torch ops, kernels vectorized, arena bytes
    compiled.ir["loop"], compiled.ir["llvm"]
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Operation

from ziggurat.backends.cpu.codegen.module import describe, generate
from ziggurat.backends.cpu.isa import Isa, host_run_isa
from ziggurat.backends.cpu.jit import compile_ir, default_object_cache
from ziggurat.backends.cpu.loop_bodies import NativeLoopBody, log_interpreted, loops_of, native_body
from ziggurat.backends.cpu.memory_plan import annotate, plan_memory
from ziggurat.backends.cpu.object_cache import ObjectCache
from ziggurat.backends.cpu.runtime import CpuExecutable
from ziggurat.backends.executable import CompileReport
from ziggurat.backends.options import CompileOptions
from ziggurat.dialects import loop
from ziggurat.dialects.fused import FusedOp
from ziggurat.dialects.torch import TorchOp
from ziggurat.dialects.torch.op_registry import op_key, schema_text
from ziggurat.ir.errors import OpReport
from ziggurat.ir.locations import op_location
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.ir_levels import IRLevels

log = logging.getLogger("ziggurat")


def _bool(v: bool) -> str:
    return "true" if v else "false"


def loop_pass_spec(options: CompileOptions, range_schedule: bool = False) -> str:
    threads = options.threads or 0
    schedule = " range_schedule=true" if range_schedule else ""
    return (f"convert-fused-to-kernel,kernel-fuse,kernel-layout,"
            f"convert-kernel-to-loop{{isa={options.isa} threads={threads} prepack={_bool(options.prepack)} "
            f"fallback={_bool(options.fallback)}{schedule}}}")


def forward_of(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "forward":
            return op
    raise ZigguratError("the module has no @forward function", op="cpu backend")


def kernel_stats(fn: func.FuncOp) -> dict[str, object]:
    kernels = [op for op in fn.walk() if isinstance(op, loop.KernelOp)]
    vectorized = sum(1 for k in kernels if k.is_vectorized)
    gemm_ops = [op for op in fn.walk() if isinstance(op, loop.GemmOp)]
    stats: dict[str, object] = {
        "kernels": len(kernels),
        "vectorized kernels": vectorized,
        "vectorized share": round(vectorized / len(kernels), 4) if kernels else 1.0,
        "gemm calls": len(gemm_ops),
    }
    bf16 = Counter(str(op.spec.data["bf16_kernel"].data) for op in gemm_ops  # pyright: ignore[reportAttributeAccessIssue]
                   if "bf16_kernel" in op.spec.data)
    for kernel, count in sorted(bf16.items()):
        stats[f"bf16 gemm calls ({kernel})"] = count
    int8 = Counter(str(op.spec.data["int8_kernel"].data) for op in gemm_ops  # pyright: ignore[reportAttributeAccessIssue]
                   if "int8_kernel" in op.spec.data)
    for kernel, count in sorted(int8.items()):
        stats[f"int8 gemm calls ({kernel})"] = count
    return stats


def fallback_reports(fn: func.FuncOp) -> list[OpReport]:
    """The ops of a loop-level ``fn`` that run through torch, each with the reason recorded
    by the lowering (``loop.fallback_ops``, in program order), its schema and location."""
    reasons = fn.attributes.get("loop.fallback_ops")
    if not isinstance(reasons, DictionaryAttr):
        return []
    seen: Counter[str] = Counter()
    reports: list[OpReport] = []
    for op in fn.walk():
        if not isinstance(op, TorchOp | FusedOp):  # a fused GEMM/conv falls back too (a bf16 one)
            continue
        key = op_key(op)
        recorded = reasons.data.get(key)
        if not isinstance(recorded, ArrayAttr) or seen[key] >= len(recorded.data):
            continue
        reason = recorded.data[seen[key]]
        seen[key] += 1
        reports.append(OpReport(key, reason.data if isinstance(reason, StringAttr) else str(reason),
                                schema_text(op), op_location(op)))
    return reports


def _count_native_loop(report: CompileReport, loop_op: Operation, body: CompileReport) -> None:
    """``report`` with ``loop_op`` counted native, and its body's fallbacks (which run through
    torch inside the native body) listed."""
    reasons = report.fallback_ops.get("torch.loop", [])
    if reasons:
        reasons.pop(0)
        if not reasons:
            del report.fallback_ops["torch.loop"]
    where = op_location(loop_op)
    loops = [r for r in report.unsupported if r.op == "torch.loop"]
    mine = next((r for r in loops if r.location == where), loops[0] if loops else None)
    if mine is not None:
        report.unsupported.remove(mine)
    report.native_ops["torch.loop"] = report.native_ops.get("torch.loop", 0) + 1
    for key, n in body.native_ops.items():
        report.native_ops[key] = report.native_ops.get(key, 0) + n
    for key, body_reasons in body.fallback_ops.items():
        report.fallback_ops.setdefault(key, []).extend(f"{r} (in a loop body)" for r in body_reasons)
    report.unsupported += body.unsupported
    report.stats["native loop bodies"] = report.stats.get("native loop bodies", 0) + 1


class CpuBackend:
    name = "cpu"
    #: options of ``ziggurat.compile`` this backend takes besides ``CompileOptions``'s own:
    #: ``profile``, ``activation_tables`` (True by default: look 16-bit activations up in tables
    #: of eager's answers, ``look_up_half_float_activations``; False computes them) and
    #: ``float16_gemms_on_amx`` (True/False: float16 GEMMs as split bf16 ones or on the float32
    #: kernels, instead of ``split_float16_gemms.split_pays``)
    extra_options = ("profile", "activation_tables", "float16_gemms_on_amx")
    #: a dynamic-shape compile lowers at sampled sizes and ``symbolize_range`` makes one
    #: loop level of them (``backends/sampled_range.py``)
    sampled_range_builds = True

    @staticmethod
    def symbolize_range(template: ModuleOp, at: Sequence[int], lower: Callable[[Sequence[int]], ModuleOp],
                        ranges: Sequence[tuple[str, int, int]], variants: Mapping[int, Sequence[int]],
                        checks: Sequence[Sequence[int]]) -> None:
        """Rewrite the loop-level ``template`` (lowered at the sizes ``at``) into one for every
        size in ``ranges``, from the lowerings ``lower`` makes at the variants and checks
        (``symbolize.py``); a :class:`ZigguratError` when they differ in a way run-time sizes
        cannot express."""
        from ziggurat.backends.cpu.symbolize import SymbolizeDeclined, SymbolRange, symbolize

        try:
            symbolize(template, at, lower, [SymbolRange(*r) for r in ranges], variants, checks)
        except SymbolizeDeclined as e:
            raise ZigguratError(f"the lowerings at sampled sizes differ: {e}", op="compile") from None

    @staticmethod
    def same_structure(a: ModuleOp, b: ModuleOp) -> bool:
        """Two loop levels of one graph differ at most in integers (``symbolize.diff``)."""
        from ziggurat.backends.cpu.symbolize import SymbolizeDeclined, diff

        try:
            diff(a, b)
        except SymbolizeDeclined:
            return False
        return True

    def range_pipeline(self, options: CompileOptions) -> str:
        """The pipeline of a range build's sampled lowerings: the default one, its loops
        scheduled for every size of the range (``convert-kernel-to-loop{range_schedule}``)."""
        return self.default_pipeline(options).replace(loop_pass_spec(options), loop_pass_spec(options, True))

    def default_pipeline(self, options: CompileOptions) -> str:
        """``graph-opt``, ``widen-half-floats`` (bf16 element-wise ops in float32),
        ``split-float16-gemms`` (float16 GEMMs on the bf16 tile unit, where it pays), then (with
        ``prepack``) the backend's ``prepack-weights`` for the ISA and ``fuse-requantize`` (a
        quantize -> dequantize pair into the int8 GEMM before it), then the kernel level (``convert-fused-to-kernel``, ``kernel-fuse``,
        ``kernel-layout``) and
        ``convert-kernel-to-loop``."""
        from ziggurat.passes import all_passes

        specs = [loop_pass_spec(options)]
        if options.prepack:
            specs[:0] = [f"prepack-weights{{isa={options.isa}}}", f"fuse-requantize{{isa={options.isa}}}"]
        split = options.extra.get("float16_gemms_on_amx")
        amx = "" if split is None else f" amx={'true' if split else 'false'}"
        specs[:0] = [f"widen-half-floats{{isa={options.isa}}}", f"split-float16-gemms{{isa={options.isa}{amx}}}"]
        if "graph-opt" in all_passes():
            specs.insert(0, "graph-opt")
        return ",".join(specs)

    @staticmethod
    def _at_loop_level(module: ModuleOp, options: CompileOptions) -> func.FuncOp:
        fn = forward_of(module)
        if "loop.isa" not in fn.attributes:
            from ziggurat.ir.pipeline import run_pipeline
            from ziggurat.backends.passes import parse_pipeline

            run_pipeline(module, parse_pipeline(loop_pass_spec(options)))
            fn = forward_of(module)
        return fn

    @staticmethod
    def _isa_threads(fn: func.FuncOp) -> tuple[Isa, int]:
        """The ISA and thread count ``convert-kernel-to-loop`` recorded on ``fn``."""
        isa_attr = fn.attributes["loop.isa"]
        threads_attr = fn.attributes["loop.threads"]
        assert isinstance(isa_attr, StringAttr) and isinstance(threads_attr, IntegerAttr)
        return host_run_isa(isa_attr.data), int(threads_attr.value.data)

    def analyze(self, module: ModuleOp, options: CompileOptions, report: CompileReport) -> None:
        """What ``build`` reports (native and fallback ops, kernels vectorized, memory plan,
        segments) from the loop level, without generating or compiling LLVM IR."""
        fn = self._at_loop_level(module, replace(options, fallback=True))
        plan = plan_memory(fn)
        abi = describe(fn, plan, *self._isa_threads(fn))
        self._report(fn, report, plan.arena_bytes, plan.unplanned_bytes, abi, from_cache=None)
        self._native_loop_bodies(fn, options, report, build=False)

    def build(self, module: ModuleOp, options: CompileOptions, report: CompileReport) -> CpuExecutable:
        fn = self._at_loop_level(module, options)
        from ziggurat.backends.cpu.profile import profiling_requested

        if profiling_requested(options.extra):
            fn.attributes["loop.profile"] = IntegerAttr(1, 64)
        isa, threads = self._isa_threads(fn)
        from ziggurat.backends.cpu.look_up_half_float_activations import look_up_half_float_activations
        from ziggurat.backends.cpu.reuse_reduction_values import reuse_reduction_values

        if bool(options.extra.get("activation_tables", True)):
            look_up_half_float_activations(fn)
        reuse_reduction_values(fn)
        plan = plan_memory(fn)
        annotate(fn, plan)
        ir = IRLevels()
        ir.snapshot("loop", module)
        llvm_module, abi = generate(fn, plan, isa, threads)
        ir["llvm"] = str(llvm_module)
        cache = ObjectCache(options.cache_dir) if options.cache_dir is not None else default_object_cache()
        library = compile_ir(ir["llvm"], isa, cache=cache)  # printed once: ResNet-18's module takes 0.4 s to print
        self._report(fn, report, plan.arena_bytes, plan.unplanned_bytes, abi, library.from_cache)
        executable = CpuExecutable(fn, abi, library, ir, cache, follow_torch_threads=options.threads is None)
        executable.loop_bodies.update(self._native_loop_bodies(fn, options, report, build=True))
        return executable

    def _native_loop_bodies(self, fn: func.FuncOp, options: CompileOptions, report: CompileReport | None,
                            build: bool) -> dict[Operation, NativeLoopBody]:
        """The body of each ``torch.loop`` of the loop-level ``fn`` compiled natively where it
        lowers (``loop_bodies.py``; with ``build`` False, only taken to the loop level, as
        ``analyze`` does); ``report`` counts such a loop as native and lists its body's
        fallbacks."""
        body_options = replace(options, passes=None, fallback=True, dump_ir=None)
        bodies: dict[Operation, NativeLoopBody] = {}
        for loop_op in loops_of(fn):
            body_report = CompileReport(backend=self.name)

            def compile_body(module: ModuleOp, body_report: CompileReport = body_report) -> tuple[CpuExecutable | None, int]:
                from ziggurat.backends.passes import parse_pipeline
                from ziggurat.ir.pipeline import run_pipeline

                run_pipeline(module, parse_pipeline(self.default_pipeline(body_options)))
                runner = None
                if build:
                    runner = self.build(module, body_options, body_report)
                else:
                    self.analyze(module, body_options, body_report)
                return runner, sum(body_report.native_ops.values())

            body, reason = native_body(loop_op, compile_body)
            if body is None:
                log_interpreted(loop_op, reason)
                continue
            if body.runner is not None:
                bodies[loop_op] = body
            if report is not None:
                _count_native_loop(report, loop_op, body_report)
        return bodies

    def load(self, payload: bytes, module: ModuleOp, options: CompileOptions) -> CpuExecutable:
        """An executable from ``CpuExecutable.serialize()`` output and its loop-level module."""
        from ziggurat.backends.cpu.objects import read_object_code

        fn = forward_of(module)
        threads_attr = fn.attributes.get("loop.threads")
        if not isinstance(threads_attr, IntegerAttr):
            raise ZigguratError("the saved module is not at the loop level", op="load")
        code = read_object_code(payload)
        plan = plan_memory(fn)
        abi = describe(fn, plan, code.isa, int(threads_attr.value.data))
        library = code.load([s.function for s in abi.segments if s.kind == "native"])
        ir = IRLevels()
        ir.snapshot("loop", module)
        executable = CpuExecutable(fn, abi, library, ir, follow_torch_threads=options.threads is None)
        executable.loop_bodies.update(self._native_loop_bodies(fn, options, None, build=True))
        return executable

    @staticmethod
    def _report(fn: func.FuncOp, report: CompileReport, arena: int, unplanned: int, abi: object,
                from_cache: bool | None) -> None:
        """Fill ``report`` from the loop-level ``fn``; ``from_cache`` is None when nothing was compiled."""
        native = fn.attributes.get("loop.native_ops")
        if isinstance(native, DictionaryAttr):
            report.native_ops = {k: int(v.value.data) for k, v in native.data.items()}  # pyright: ignore
        fallback = fn.attributes.get("loop.fallback_ops")
        if isinstance(fallback, DictionaryAttr):
            report.fallback_ops = {k: [s.data for s in v.data] for k, v in fallback.data.items()  # pyright: ignore
                                   if isinstance(v, ArrayAttr)}
        report.unsupported = fallback_reports(fn)
        report.stats.update(kernel_stats(fn))
        segments = getattr(abi, "segments", [])
        report.stats["native segments"] = sum(1 for s in segments if s.kind == "native")
        report.stats["arena bytes (peak)"] = arena
        report.stats["intermediate bytes without reuse"] = unplanned
        report.stats["isa"] = str(fn.attributes["loop.isa"].data)  # pyright: ignore
        if from_cache is not None:
            report.stats["object cache hit"] = from_cache
        if getattr(abi, "profile", None):
            report.stats["profiling"] = "on: compiled.executable.profile() lists time per kernel/GEMM"
