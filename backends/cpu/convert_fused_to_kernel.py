"""``convert-fused-to-kernel``: every torch/fused op of a function becomes one ``kernel`` op.

    ziggurat-opt model.mlir -p 'graph-opt,prepack-weights,convert-fused-to-kernel'

No decision is made here: each op is wrapped, alone, in the kernel op of its kind
(``kernel_kinds.py``), which takes the op's operands (and any value its regions read from
outside) as inputs and yields its results.  Constants (``torch.literal``, ``arith.constant``)
stay outside, as the kernels' inputs.  ``kernel-fuse`` then merges kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from ziggurat.dialects.kernel import KernelOp, YieldOp
from ziggurat.dialects.torch import LiteralOp



def outside_values(op: Operation) -> list[SSAValue]:
    """The values ``op`` and its regions read that are defined outside ``op``, in first-use order."""
    inside: set[SSAValue] = set()
    for nested in op.walk():
        if nested is not op:
            inside.update(nested.results)
        for region in nested.regions:
            for block in region.blocks:
                inside.update(block.args)
    seen: list[SSAValue] = []
    for nested in op.walk():
        for v in nested.operands:
            if v not in inside and v not in seen:
                seen.append(v)
    return seen


def wrap(op: Operation, kernel_class: type[KernelOp], properties: dict[str, object]) -> KernelOp:
    """``op`` moved into a new kernel op of ``kernel_class`` (inserted before it; ``op``'s
    results are replaced by the kernel's)."""
    inputs = outside_values(op)
    block = Block(arg_types=[v.type for v in inputs])
    for arg, value in zip(block.args, inputs, strict=True):
        if value.name_hint:
            arg.name_hint = value.name_hint
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    inner = op.clone(value_mapper=mapping)
    block.add_op(inner)
    block.add_op(YieldOp(list(inner.results)))
    kernel = kernel_class(inputs, [r.type for r in op.results], Region(block), properties)  # pyright: ignore
    replace_op(op, kernel)
    return kernel


def replace_op(old: Operation, new: Operation) -> None:
    """``new`` in ``old``'s place, reading what it read and read by its readers, with its names."""
    assert old.parent is not None
    old.parent.insert_op_before(new, old)
    for a, b in zip(old.results, new.results, strict=True):
        b.name_hint = a.name_hint
        a.replace_all_uses_with(b)
    old.detach()
    old.erase()


def convert_function(fn: func.FuncOp) -> None:
    from ziggurat.backends.cpu.kernel_kinds import kernel_kind

    for op in list(fn.body.block.ops):
        if isinstance(op, func.ReturnOp | KernelOp | LiteralOp | arith.ConstantOp):
            continue
        kind = kernel_kind(op)
        wrap(op, kind.op_class, dict(kind.properties))


@dataclass(frozen=True)
class ConvertFusedToKernel(ModulePass):
    name = "convert-fused-to-kernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            if "loop.isa" in fn.attributes or fn.body.block.first_op is None:
                continue
            convert_function(fn)
            fn.attributes["kernel.level"] = StringAttr("converted")
