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

A 16-lane float32 load of a bf16 GEMM's result stored as float32 (``round_out``: each value a
bf16 one, what a widened activation after ``addmm`` reads) is rounded to bf16 first, exactly,
and looked up too.  Every use of the function's result must be a rounding back (a float32 use
keeps the whole chain), the function one of ``codegen/lookup.py``'s tables (parameterless transcendental ones), and the lanes 16 (an ``avx512`` kernel).  The table holds eager's own bits
where ``vecmath`` differs from eager's float32 math by a few float32 ulps, and so, across a
16-bit rounding boundary, by one 16-bit ulp, and in GELU's negative tail, where eager's float32
GELU cancels (GELU: 531 of the 65,536 float16 inputs differ, 45 bf16 ones).

The CPU backend runs it on every build where :func:`tables_pay` (``extra`` option
``activation_tables`` overrides it either way).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntegerAttr, ModuleOp, VectorType, f32
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ziggurat.backends.cpu.codegen.lookup import LOOKUP_FUNCTIONS
from ziggurat.backends.cpu.isa import Isa, isa_has
from ziggurat.dialects import loop
from ziggurat.dialects.loop.compute import LOOKUP_LANES


def tables_pay(isa: Isa) -> bool:
    """Whether looking activations up beats computing them on this host: AVX-512 with AMX, the
    Sapphire/Emerald Rapids cores whose gathers are fast (float16 GELU over 3136x384 elements,
    1 thread: README, "Activation tables").  Not Zen 5: there the bf16 GEMM's looked-up GELU
    epilogue was slower than the computed one (``kernels/bf16_tables.py``), and element-wise
    kernels were not measured."""
    return isa is Isa.AVX512 and isa_has(isa, "amx-tile")


def _half_vector(ty: object) -> bool:
    return (isinstance(ty, VectorType) and ty.get_num_dims() == 1 and ty.get_shape()[0] == LOOKUP_LANES
            and isinstance(ty.element_type, BFloat16Type | Float16Type))


def _widened_from(value: SSAValue) -> SSAValue | None:
    """The 16-bit vector ``value`` is ``extf`` of, if it is."""
    owner = value.owner
    if isinstance(owner, loop.CastOp) and owner.kind.data == "extf" and _half_vector(owner.input.type):
        return owner.input
    return None


def _bf16_rounded_load(value: SSAValue, kernel: loop.KernelOp) -> bool:
    """Whether ``value`` is a 16-lane float32 load of a buffer whose only writer is a bf16 GEMM
    that stores its bf16-rounded result as float32 (``round_out``: every lane is a bf16 value,
    so rounding it to bf16 is exact)."""
    load = value.owner
    if not (isinstance(load, loop.VLoadOp) and isinstance(value.type, VectorType)
            and value.type.get_shape() == (LOOKUP_LANES,) and value.type.element_type == f32):
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


def _roundings(op: loop.UnaryOp, half: Attribute) -> list[loop.CastOp] | None:
    """The uses of ``op``'s result, if every one rounds it to ``half``."""
    uses = [use.operation for use in op.result.uses]
    if not uses or not all(isinstance(u, loop.CastOp) and u.kind.data == "truncf" and u.result.type == half
                           for u in uses):
        return None
    return [u for u in uses if isinstance(u, loop.CastOp)]


def _half_input(op: loop.UnaryOp, kernel: loop.KernelOp) -> SSAValue | Operation | None:
    """``op``'s input as a 16-bit vector: the value it widens, or a bf16 rounding (exact) of a
    GEMM's bf16-rounded float32 result."""
    widened = _widened_from(op.input)
    if widened is not None:
        return widened
    if _bf16_rounded_load(op.input, kernel):
        return loop.CastOp("truncf", op.input, VectorType(BFloat16Type(), [LOOKUP_LANES]))
    return None


def _erase_if_unused(op: Operation | None) -> None:
    if op is not None and all(not r.uses for r in op.results):
        op.detach()
        op.erase()


def look_up_half_float_activations(fn: func.FuncOp) -> int:
    """Rewrite the ``avx512`` kernels of the loop-level ``fn``; returns how many functions are
    now looked up."""
    done = 0
    for kernel in [op for op in fn.walk() if isinstance(op, loop.KernelOp)]:
        if kernel.isa.data != Isa.AVX512.value:
            continue
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
                rounding.result.replace_all_uses_with(lookup.result)
                rounding.detach()
                rounding.erase()
            widening = op.input.owner
            op.detach()
            op.erase()
            _erase_if_unused(widening if isinstance(widening, loop.CastOp) else None)
            done += 1
    return done


@dataclass(frozen=True)
class LookUpHalfFloatActivations(ModulePass):
    name = "look-up-half-float-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in loop.loop_functions(op):
            look_up_half_float_activations(fn)


__all__ = ["LookUpHalfFloatActivations", "look_up_half_float_activations", "tables_pay"]
