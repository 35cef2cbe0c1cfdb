"""The passes that belong to a backend (lowering to its dialect, planning its buffers, the
compile report), beside the graph-level ones of ``ziggurat.passes``: the full list that
``ziggurat.compile``, ``ziggurat-opt`` and the xDSL Universe read."""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.passes import ModulePass

from ziggurat.passes import all_passes as graph_level_passes
from ziggurat.passes import lazy_pass
from ziggurat.passes import parse_pipeline as parse_with

#: pass name -> "module:ClassName" (imported only when the pass is used)
BACKEND_PASSES: dict[str, str] = {
    "convert-fused-to-kernel": "ziggurat.backends.cpu.convert_fused_to_kernel:ConvertFusedToKernel",
    "kernel-fuse": "ziggurat.backends.cpu.kernel_fuse:KernelFuse",
    "kernel-layout": "ziggurat.backends.cpu.kernel_layout:KernelLayout",
    "convert-kernel-to-loop": "ziggurat.backends.cpu.convert_kernel_to_loop:ConvertKernelToLoop",
    "convert-torch-to-loop": "ziggurat.backends.cpu.convert_torch_to_loop:ConvertTorchToLoop",
    "plan-loop-buffers": "ziggurat.backends.cpu.plan_loop_buffers:PlanLoopBuffers",
    "reuse-reduction-values": "ziggurat.backends.cpu.reuse_reduction_values:ReuseReductionValues",
    "look-up-half-float-activations":
        "ziggurat.backends.cpu.look_up_half_float_activations:LookUpHalfFloatActivations",
    "prepack-weights": "ziggurat.backends.cpu.prepack_weights:PrepackWeightsPass",
    "fuse-requantize": "ziggurat.backends.cpu.fuse_requantize:FuseRequantizePass",
    "widen-half-floats": "ziggurat.backends.cpu.widen_half_floats:WidenHalfFloatsPass",
    "split-float16-gemms": "ziggurat.backends.cpu.split_float16_gemms:SplitFloat16GemmsPass",
    "convert-torch-to-trt": "ziggurat.backends.tensorrt.convert_torch_to_trt:ConvertTorchToTrt",
    "explain": "ziggurat.backends.explain_pass:ExplainPass",
}


def backend_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {name: lazy_pass(target) for name, target in BACKEND_PASSES.items()}


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every Ziggurat pass: the graph-level ones and the backends'."""
    return {**graph_level_passes(), **backend_passes()}


def parse_pipeline(spec: str) -> list[ModulePass]:
    """The passes of a pipeline spec, any of Ziggurat's or xDSL's.

    Each spec is parsed once: xDSL builds a pass from its spec by reading the class's type
    hints (about 0.4 ms a pass, 3 % of a small op's compile), and the passes are frozen
    dataclasses whose fields are the spec's options, so the same instances serve every
    compile.  A bad spec raises every time (errors are not cached)."""
    return list(_parsed(spec))


@functools.lru_cache(maxsize=256)
def _parsed(spec: str) -> tuple[ModulePass, ...]:
    return tuple(parse_with(spec, backend_passes()))
