"""``convert-torch-to-trt``: partial conversion of torch ops into TensorRT segments.

    ziggurat-opt model.mlir -p 'convert-torch-to-trt{min_block_size=1 torch_executed_ops="aten::softmax"}'

Ops with a registered converter whose validator accepts them are grouped into
segments (``func.func @forward_trt_N`` of ``trt`` ops, called with ``func.call``);
everything else stays in torch, listed with its reason, schema and source line in the
function's ``ziggurat.trt_fallback`` attribute; each segment lists the torch ops it took
in ``ziggurat.trt_ops`` (see ``backends/tensorrt/segments.py`` and ``partition_report.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from ziggurat.backends.tensorrt.segments import (
    BACKEND_ATTR,
    ConversionReport,
    PartitionOptions,
    convert_function,
)


def convert_module(module: ModuleOp, options: PartitionOptions | None = None) -> list[ConversionReport]:
    """Run the conversion on every torch-level function of ``module``; one report each."""
    import ziggurat.backends.tensorrt.converters  # noqa: F401  (fills the registry)
    funcs = [op for op in module.ops if isinstance(op, FuncOp) and BACKEND_ATTR not in op.attributes]
    return [convert_function(f, module, options) for f in funcs]


@dataclass(frozen=True)
class ConvertTorchToTrt(ModulePass):
    name = "convert-torch-to-trt"

    min_block_size: int = 3
    #: comma-separated aten keys or names kept in torch (``aten::softmax,aten::add.Tensor``)
    torch_executed_ops: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        executed = tuple(s.strip() for s in self.torch_executed_ops.split(",") if s.strip())
        convert_module(op, PartitionOptions(self.min_block_size, executed))
