"""``look-up-half-float-activations``: a float32 function of a 16-bit lane, rounded back to 16
bits, becomes a ``loop.lookup`` of eager's answers.

    ziggurat-opt model.mlir -p 'convert-torch-to-loop,look-up-half-float-activations'

A bf16 or float16 activation is widened (``widen-half-floats``): the kernel widens the lane,
computes the float32 function and rounds the result back, as eager does::

    %1 = loop.cast "extf" %0 : vector<16xbf16> -> vector<16xf32>
    %2 = loop.unary "gelu_erf"(%1) : vector<16xf32> -> vector<16xf32>
    %3 = loop.cast "truncf" %2 : vector<16xf32> -> vector<16xbf16>
  ->
    %3 = loop.lookup "gelu_erf"(%0) : vector<16xbf16> -> vector<16xbf16>

The lanes are the kernel's: 16 in an ``avx512`` kernel, 8 in an ``avx2`` one, and in a scalar
kernel one 16-bit scalar (``arith.extf -> loop.unary -> arith.truncf``).  A float32 load of a
bf16 GEMM's result stored as float32 (``round_out``: each value a bf16 one, what a widened
activation after ``addmm`` reads) is rounded to bf16 first, exactly, and looked up too.  Every
use of the function's result must be a rounding back (a float32 use keeps the whole chain), and
the function one of ``codegen/lookup.py``'s tables (parameterless transcendental ones).

The table holds eager's own bits where ``vecmath`` differs from eager's float32 math by a few
float32 ulps, and so, across a 16-bit rounding boundary, by one 16-bit ulp, and in GELU's
negative tail, where eager's float32 GELU cancels.  Computed, on the Intel AMX host GELU was off
on 531 of the 65,536 float16 inputs and 45 bf16 ones; on the AVX2 EPYC (torch's AVX2 kernels)
float16 sigmoid on 7, SiLU 2, sine 2, GELU 410 and its tanh form 214, and bf16 GELU on 33 and
its tanh form 23 (fuzz seed 222: float16 sigmoid and tanh-form GELU an ulp off eager).

The CPU backend runs it on every build, for every ISA; ``compile(..., activation_tables=False)``
computes the functions instead (faster where gathers are slow, and not eager's bits).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntegerAttr, ModuleOp, VectorType, f32
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ziggurat.backends.cpu.codegen.lookup import LOOKUP_FUNCTIONS
from ziggurat.dialects import loop
from ziggurat.dialects.loop.compute import LOOKUP_LANES, is_lookup_type


def _widened_from(value: SSAValue) -> SSAValue | None:
    """The 16-bit value ``value`` is ``extf`` of, if it is (``loop.cast`` in a vector kernel,
    ``arith.extf`` in a scalar one)."""
    owner = value.owner
    if isinstance(owner, loop.CastOp) and owner.kind.data == "extf" and is_lookup_type(owner.input.type):
        return owner.input
    if isinstance(owner, arith.ExtFOp) and is_lookup_type(owner.input.type):
        return owner.input
    return None


def _is_rounding_to(op: Operation, half: Attribute) -> bool:
    if isinstance(op, loop.CastOp):
        return op.kind.data == "truncf" and op.result.type == half
    return isinstance(op, arith.TruncFOp) and op.result.type == half


def _bf16_rounded_load(value: SSAValue, kernel: loop.KernelOp) -> bool:
    """Whether ``value`` is a float32 vector load of a buffer whose only writer is a bf16 GEMM
    that stores its bf16-rounded result as float32 (``round_out``: every lane is a bf16 value,
    so rounding it to bf16 is exact)."""
    load = value.owner
    if not (isinstance(load, loop.VLoadOp) and isinstance(value.type, VectorType)
            and value.type.get_num_dims() == 1 and value.type.get_shape()[0] in LOOKUP_LANES
            and value.type.element_type == f32):
        return False
    arg = load.operands[0]
    if not isinstance(arg, BlockArgument) or arg.block is not kernel.body.block or arg.index >= len(kernel.ins):
        return False
    buffer = kernel.ins[arg.index]
    if not isinstance(buffer.owner, loop.AllocOp):
        return False
    writers = [use.operation for use in buffer.uses
               if not (isinstance(use.operation, loop.KernelOp) and use.index < len(use.operation.ins))]
    if len(writers) != 1 or not isinstance(writers[0], loop.GemmOp) or writers[0].c != buffer:
        return False
    spec = writers[0].spec.data
    round_out = spec.get("round_out")
    return "bf16_kernel" in spec and isinstance(round_out, IntegerAttr) and bool(round_out.value.data)


def _roundings(op: loop.UnaryOp, half: Attribute) -> list[Operation] | None:
    """The uses of ``op``'s result, if every one rounds it to ``half``."""
    uses = [use.operation for use in op.result.uses]
    if not uses or not all(_is_rounding_to(u, half) for u in uses):
        return None
    return uses


def _half_input(op: loop.UnaryOp, kernel: loop.KernelOp) -> SSAValue | Operation | None:
    """``op``'s input as a 16-bit vector: the value it widens, or a bf16 rounding (exact) of a
    GEMM's bf16-rounded float32 result."""
    widened = _widened_from(op.input)
    if widened is not None:
        return widened
    if _bf16_rounded_load(op.input, kernel):
        ty = op.input.type
        assert isinstance(ty, VectorType)
        return loop.CastOp("truncf", op.input, VectorType(BFloat16Type(), ty.get_shape()))
    return None


def _erase_if_unused(op: Operation | None) -> None:
    if op is not None and all(not r.uses for r in op.results):
        op.detach()
        op.erase()


def look_up_half_float_activations(fn: func.FuncOp) -> int:
    """Rewrite the kernels of the loop-level ``fn``, of any ISA; returns how many functions are
    now looked up."""
    done = 0
    for kernel in [op for op in fn.walk() if isinstance(op, loop.KernelOp)]:
        for op in [o for o in kernel.body.walk() if isinstance(o, loop.UnaryOp)]:
            if op.kind.data not in LOOKUP_FUNCTIONS or op.parameters:
                continue
            half = _half_input(op, kernel)
            if half is None:
                continue
            roundings = _roundings(op, SSAValue.get(half).type)
            if roundings is None:
                continue
            block = op.parent_block()
            assert block is not None
            if isinstance(half, Operation):
                block.insert_op_before(half, op)
            lookup = loop.LookupOp(op.kind.data, half)
            block.insert_op_before(lookup, op)
            for rounding in roundings:
                rounding.results[0].replace_all_uses_with(lookup.result)
                rounding.detach()
                rounding.erase()
            widening = op.input.owner
            op.detach()
            op.erase()
            _erase_if_unused(widening if isinstance(widening, loop.CastOp | arith.ExtFOp) else None)
            done += 1
    return done


@dataclass(frozen=True)
class LookUpHalfFloatActivations(ModulePass):
    name = "look-up-half-float-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in loop.loop_functions(op):
            look_up_half_float_activations(fn)


__all__ = ["LookUpHalfFloatActivations", "look_up_half_float_activations"]
