"""``kernel-layout``: the order each kernel stores its results in, channels-last propagation.

    ziggurat-opt model.mlir -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout'

Runs after ``kernel-fuse`` (it needs ``realize``) and sets ``layout`` on every kernel, one
entry per result:

==================  ==================================================================
``channels_last``   a float32 or int8 convolution's result (those kernels write ``[N, *sp, C]``;
                    the bf16 ones write ``[N, C, *sp]``: ``contiguous``), or
                    an image-shaped float result (rank 3-5, channels and columns > 1)
                    whose kernel mostly reads channel-contiguous memory: each of its
                    element loads from a non-constant input is counted as moving by one
                    element per channel (channels-last input) or per column (contiguous
                    input), and the channels win ties.  Channels-last thus flows from the
                    convolutions through the residual adds, pools and norms between them
                    and the next convolution reads it in place.
``contiguous``      any other result the kernel stores (a GEMM's, torch's, a scan's...)
``""``              a result this kernel does not store: its one reader computes it, a
                    library call or torch lays it out, it is a view (index arithmetic), or
                    it is a graph output written straight into the caller's buffer
==================  ==================================================================

A layout changes only at the graph's boundaries: inputs arrive contiguous, and outputs are
written contiguous into the caller's buffers, whatever the layout of the values they are
computed from.  ``convert-kernel-to-loop`` stores each result as ``layout`` says.

The loads are counted on the kernel's element functions, the CPU lowering's model of how
each op indexes its operands, with each input in the layout its own kernel stored it in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from ziggurat.backends.cpu.lowering.args import RuntimeScalar
from ziggurat.backends.cpu.lowering.context import LoweringOptions
from ziggurat.backends.cpu.lowering.driver import REALIZED_ELSEWHERE, FunctionLowering
from ziggurat.backends.cpu.lowering.layout import channels_first_perm, channels_last_perm, prefers_channels_last
from ziggurat.backends.cpu.lowering.tensors import BufferValue, LazyValue, ReductionValue, TensorValue
from ziggurat.backends.cpu.lowering.views import permute
from ziggurat.dialects.kernel import ConvOp, FallbackOp, GemmOp, KernelOp
from ziggurat.ir.types import dtype_of, shape_of, torch_only_reason

CHANNELS_LAST = "channels_last"
CONTIGUOUS = "contiguous"
NOT_STORED = ""


def stored_by_kernel(reason: str, uses: int, value: object) -> bool:
    """Whether the loop generation writes ``value`` (a result whose realization reason is
    ``reason``) to memory in its kernel: as ``FunctionLowering._realize_as_decided`` does."""
    if not isinstance(value, LazyValue | ReductionValue) or value.buffer is not None:
        return False
    if reason in REALIZED_ELSEWHERE or (reason == "graph output" and uses <= 1):
        return False
    return not (isinstance(value, LazyValue) and value.compute_size()[0] == 0)


class LayoutAnalysis:
    """Lowers each kernel's body to element functions, over placeholders for the values
    earlier kernels stored (in the layout they stored them in), to count its loads."""

    def __init__(self, fn: func.FuncOp, options: LoweringOptions) -> None:
        # realize = {}: nothing inside a kernel body is realized, as in the real lowering
        self.lowering = FunctionLowering(fn, options, realize={})
        self.ctx = self.lowering.ctx
        self.env = self.lowering.env
        for i, arg in enumerate(fn.args):
            self.env[arg] = self._stored(arg, CONTIGUOUS, "in", index=i)

    def _stored(self, value: SSAValue, layout: str, hint: str = "kl", index: int = -1) -> object:
        """What readers see of ``value`` held in memory in ``layout``."""
        ty = value.type
        if not isinstance(ty, TensorType) or torch_only_reason(ty) is not None:
            return RuntimeScalar(value)  # held by the runtime, as the real lowering holds it
        shape, dtype = shape_of(ty), dtype_of(ty)
        if layout != CHANNELS_LAST:
            return BufferValue(self.ctx.new_buffer(shape, dtype, hint, role="input" if index >= 0 else "temp",
                                                   index=index))
        cl_shape = tuple(shape[p] for p in channels_last_perm(len(shape)))
        return permute(self.ctx, BufferValue(self.ctx.new_buffer(cl_shape, dtype, hint)), channels_first_perm(len(shape)))

    def constant(self, op: Operation) -> None:
        """A ``torch.literal`` or ``arith.constant`` outside the kernels."""
        try:
            self.lowering.lower(op)
        except Exception:  # the real lowering reports it; here it only stops being counted
            for res in op.results:
                self.env[res] = None

    def kernel(self, kernel: KernelOp) -> list[str]:
        """``kernel``'s layouts; records what its readers will see of its results."""
        if isinstance(kernel, ConvOp):
            layouts = [_conv_result_layout(r.type) for r in kernel.outputs]
        elif isinstance(kernel, GemmOp | FallbackOp):
            layouts = [CONTIGUOUS if isinstance(r.type, TensorType) else NOT_STORED for r in kernel.outputs]
        else:
            values = self._body_values(kernel)
            if values is None:
                layouts = [CONTIGUOUS if isinstance(r.type, TensorType) else NOT_STORED for r in kernel.outputs]
            else:
                layouts = self._decide(kernel, values)
                for out, layout, value in zip(kernel.outputs, layouts, values, strict=True):
                    self.env[out] = value if layout == NOT_STORED else self._stored(out, layout)
                return layouts
        for out, layout in zip(kernel.outputs, layouts, strict=True):
            self.env[out] = self._stored(out, layout)
        return layouts

    def _body_values(self, kernel: KernelOp) -> list[Any] | None:
        """The element functions of ``kernel``'s results (None: its body does not lower)."""
        for arg, value in zip(kernel.block.args, kernel.inputs, strict=True):
            self.env[arg] = self.env.get(value)
        try:
            for op in kernel.computed_ops():
                self.lowering.lower(op)
        except Exception:  # the real lowering reports it (or sends the op to torch)
            return None
        return [self.env.get(v) for v in kernel.yielded()]

    def _decide(self, kernel: KernelOp, values: list[Any]) -> list[str]:
        layouts: list[str] = []
        for out, reason, value in zip(kernel.outputs, kernel.realize_reasons(), values, strict=True):
            try:
                if not stored_by_kernel(reason, len(list(out.uses)), value):
                    layouts.append(NOT_STORED)
                elif isinstance(value, TensorValue) and prefers_channels_last(value):
                    layouts.append(CHANNELS_LAST)
                else:
                    layouts.append(CONTIGUOUS)
            except Exception:  # an element function that breaks: the real lowering reports it
                layouts.append(CONTIGUOUS)
        return layouts


def _conv_result_layout(ty: Attribute) -> str:
    """The order a convolution writes its result in: the float32 and int8 kernels ``[N, *sp, C]``;
    the bf16 ones are ``W @ im2col(x)`` per image, ``[N, C, *sp]`` (``lowering/conv_bf16.py``), so
    a pool or an add after a bf16 convolution that took it for channels-last read it a plane
    apart per lane (ResNet-50's max pool: a 16-bit gather per channel, 1.1 ms)."""
    if not isinstance(ty, TensorType):
        return NOT_STORED
    return CONTIGUOUS if dtype_of(ty) == torch.bfloat16 else CHANNELS_LAST


def assign_layouts(fn: func.FuncOp, options: LoweringOptions) -> None:
    analysis = LayoutAnalysis(fn, options)
    for op in fn.body.block.ops:
        if isinstance(op, KernelOp):
            try:
                layouts = analysis.kernel(op)
            except Exception:  # the analysis only chooses an order: contiguous is always correct
                layouts = [CONTIGUOUS if isinstance(r.type, TensorType) else NOT_STORED for r in op.outputs]
            op.layout = ArrayAttr([StringAttr(x) for x in layouts])
        elif not isinstance(op, func.ReturnOp):
            analysis.constant(op)


@dataclass(frozen=True)
class KernelLayout(ModulePass):
    name = "kernel-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.backends.cpu.isa import parse_isa

        options = LoweringOptions(parse_isa("auto"), 1)
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            level = fn.attributes.get("kernel.level")
            if isinstance(level, StringAttr) and level.data == "fused":
                assign_layouts(fn, options)
