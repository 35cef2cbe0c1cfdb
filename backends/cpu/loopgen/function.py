"""The whole schedule as the loop-level ``@forward``: buffers, kernels, GEMMs, fallbacks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ziggurat.backends.cpu.loopgen.kernel import KernelOptions, emit_compute
from ziggurat.backends.cpu.loopgen.scan import emit_scan
from ziggurat.backends.cpu.loopgen.types import memref
from ziggurat.backends.cpu.lowering.nodes import (
    ComputeNode,
    FallbackNode,
    GemmNode,
    Node,
    RuntimeOperand,
    ScanNode,
    StaticOperand,
)
from ziggurat.backends.cpu.lowering.values import Buffer, LoweringBug
from ziggurat.dialects import loop
from ziggurat.ir.literals import literal_attr
from ziggurat.ir.types import tensor_type


class FunctionBuilder:
    """Appends the ops of the schedule to ``@forward``'s block."""

    def __init__(self, block: Block, inputs: Sequence[Buffer | SSAValue], options: KernelOptions) -> None:
        """``inputs``: per argument of ``block``, its buffer, or the torch-level argument whose
        value torch ops read as the caller's tensor (a dtype only torch computes: complex,
        float8, quantized), through a ``loop.to_tensor`` no kernel sees."""
        self.block = block
        self.options = options
        self.ssa: dict[Buffer, SSAValue] = {}
        self.runtime: dict[SSAValue, SSAValue] = {}
        self._constants_end: Operation | None = None
        for buf, arg in zip(inputs, block.args, strict=True):
            if isinstance(buf, Buffer):
                self.ssa[buf] = arg
            else:
                ty = buf.type
                assert isinstance(ty, TensorType)
                conv = loop.ToTensorOp(arg, ty)  # pyright: ignore[reportUnknownArgumentType]
                conv.result.name_hint = buf.name_hint
                self.block.add_op(conv)
                self.runtime[buf] = conv.result
        self.kernels: list[loop.KernelOp] = []

    # -- operands ------------------------------------------------------------------------
    def operand(self, buf: Buffer) -> SSAValue:
        hit = self.ssa.get(buf)
        if hit is not None:
            return hit
        if buf.role != "constant":
            raise LoweringBug(f"{buf.name} is read before any kernel writes it")
        attr = buf.value_attr
        if attr is None:
            assert buf.tensor is not None
            attr = literal_attr(buf.tensor, buf.name)
            buf.value_attr = attr
        op = loop.ConstantOp(attr)
        op.result.name_hint = _hint(buf.name)
        if self._constants_end is None:
            first = self.block.first_op
            if first is None:
                self.block.add_op(op)
            else:
                self.block.insert_op_before(op, first)
        else:
            self.block.insert_op_after(op, self._constants_end)
        self._constants_end = op
        self.ssa[buf] = op.result
        return op.result

    def target(self, buf: Buffer) -> SSAValue:
        """The buffer a node writes: allocated here on first write."""
        hit = self.ssa.get(buf)
        if hit is not None:
            return hit
        op = loop.AllocOp(memref(buf.shape, buf.dtype))
        op.result.name_hint = _hint(buf.name)
        self.block.add_op(op)
        self.ssa[buf] = op.result
        return op.result

    # -- nodes -----------------------------------------------------------------------------
    def add(self, node: Node) -> None:
        if isinstance(node, ComputeNode):
            out = self.target(node.out)
            kernel = emit_compute(node, self.options, out, _Operands(self))  # type: ignore[arg-type]
            if kernel is not None:
                self.block.add_op(kernel)
                self.kernels.append(kernel)
        elif isinstance(node, ScanNode):
            out = self.target(node.out)
            kernel = emit_scan(node, self.options, out, _Operands(self))  # type: ignore[arg-type]
            if kernel is not None:
                self.block.add_op(kernel)
                self.kernels.append(kernel)
        elif isinstance(node, GemmNode):
            self._gemm(node)
        elif isinstance(node, FallbackNode):
            self._fallback(node)
        else:  # pragma: no cover
            raise LoweringBug(f"unknown schedule node {node!r}")

    def _gemm(self, node: GemmNode) -> None:
        a = self.operand(node.a.buffer)
        b = self.operand(node.b.buffer)
        bias = self.operand(node.bias.buffer) if node.bias is not None else None
        other = self.operand(node.other.buffer) if node.other is not None else None
        c = self.target(node.c.buffer)
        spec: dict[str, Attribute] = {k: _attr(v) for k, v in node.spec.items()}
        for name, operand in (("a", node.a), ("b", node.b), ("c", node.c), ("bias", node.bias), ("other", node.other)):
            if operand is not None and operand.offset:
                spec[f"{name}_offset"] = IntegerAttr(operand.offset, i64)
        if node.origins:
            spec["origins"] = StringAttr(",".join(node.origins))
        self.block.add_op(loop.GemmOp(node.name, a, b, c, bias, other, spec))

    def _fallback(self, node: FallbackNode) -> None:
        new_operands: list[SSAValue] = []
        for old, operand in zip(node.op.operands, node.operands, strict=True):
            if isinstance(operand, Buffer):
                ty = old.type
                assert isinstance(ty, TensorType)
                conv = loop.ToTensorOp(self.operand(operand), ty)  # pyright: ignore[reportUnknownArgumentType]
                self.block.add_op(conv)
                new_operands.append(conv.result)
            elif isinstance(operand, StaticOperand):
                new_operands.append(self._static(operand.value, operand.type))
            elif isinstance(operand, RuntimeOperand):
                new_operands.append(self.runtime[operand.ssa])
            else:  # pragma: no cover
                raise LoweringBug(f"bad fallback operand {operand!r}")
        op = node.op.clone()
        op.operands = new_operands
        op.attributes["loop.fallback_reason"] = StringAttr(node.reason)
        self.block.add_op(op)
        for old_res, new_res, buf in zip(node.op.results, op.results, node.results, strict=True):
            if buf is None:
                self.runtime[old_res] = new_res
                continue
            conv = loop.ToBufferOp(new_res, memref(buf.shape, buf.dtype))
            conv.result.name_hint = _hint(buf.name)
            self.block.add_op(conv)
            self.ssa[buf] = conv.result

    def _static(self, value: Any, ty: Attribute) -> SSAValue:
        if isinstance(ty, IntegerType):
            op = arith.ConstantOp(IntegerAttr(int(value), ty))
        else:
            op = arith.ConstantOp(FloatAttr(float(value), f64))
        self.block.add_op(op)
        return op.result

    def static_result(self, value: Any, ty: Attribute) -> SSAValue:
        return self._static(value, ty)


class _Operands:
    def __init__(self, fb: FunctionBuilder) -> None:
        self.fb = fb

    def __getitem__(self, buf: Buffer) -> SSAValue:
        return self.fb.operand(buf)


def _attr(value: Any) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, dict):
        return DictionaryAttr({str(k): _attr(v) for k, v in value.items()})  # pyright: ignore
    if isinstance(value, list | tuple):
        return ArrayAttr([_attr(v) for v in value])  # pyright: ignore
    raise LoweringBug(f"cannot encode {value!r} in a loop.gemm spec")


def _hint(name: str) -> str:
    clean = "".join(c if c.isalnum() else "_" for c in name).strip("_")
    return clean if clean and not clean[0].isdigit() else "b" + clean


def new_function(name: str, input_types: Sequence[Attribute], output_types: Sequence[Attribute]) -> func.FuncOp:
    return func.FuncOp(name, (list(input_types), list(output_types)), Region(Block(arg_types=list(input_types))))


__all__ = ["FunctionBuilder", "new_function", "tensor_type"]
