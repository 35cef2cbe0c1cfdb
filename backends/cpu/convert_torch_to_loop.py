"""``convert-torch-to-loop``: the torch/fused level of ``@forward`` -> the ``loop`` level.

    ziggurat-opt model.mlir -p 'convert-torch-to-loop{isa=avx2 threads=2}'

Every op with a native lowering (``backends/cpu/lowering``) becomes kernels over
buffers: element-wise chains and the reductions they feed are fused into one
``loop.kernel``, views become index arithmetic, GEMM-shaped ops ``loop.gemm`` calls.
Ops without one stay as torch ops between ``loop.to_tensor``/``loop.to_buffer``
(run through torch at run time, with a logged warning), or with ``fallback=false`` the
pass raises one ``UnsupportedOpsError`` listing all of them with schema and location.

Options: ``isa`` = auto | avx512 | avx2 | scalar (vector width 16 / 8 / 1 f32 lanes),
``threads`` (0 = every available core), ``prepack`` (pack constant GEMM/conv weights
into the kernels' blocked layout at compile time), ``fallback``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat.ir.errors import ZigguratError


@dataclass(frozen=True)
class ConvertTorchToLoop(ModulePass):
    name = "convert-torch-to-loop"

    isa: str = "auto"
    threads: int = 0
    prepack: bool = True
    fallback: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.backends.cpu.isa import IsaError, parse_isa
        from ziggurat.backends.cpu.lowering.context import LoweringOptions
        from ziggurat.backends.cpu.lowering.driver import lower_function
        from ziggurat.backends.cpu.threads import default_threads

        try:
            isa = parse_isa(self.isa)
        except IsaError as e:
            raise ZigguratError(str(e), op=self.name) from None
        if self.threads < 0:
            raise ZigguratError(f"threads must be >= 0 (0: all cores), got {self.threads}", op=self.name)
        options = LoweringOptions(isa, self.threads or default_threads(), self.prepack, self.fallback)
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if "loop.isa" in fn.attributes or fn.body.block.first_op is None:
                continue
            result = lower_function(fn, options)
            op.body.block.insert_op_before(result.function, fn)
            fn.detach()
            fn.erase(safe_erase=False)
