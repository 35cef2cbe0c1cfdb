"""The arguments of the op being lowered: the shared binder (``dialects/torch/arguments.py``,
as the TensorRT ``ConverterArgs``) with each operand resolved to the value the CPU
lowering gave it, and :class:`NotLowerable` (the op then runs through torch, the message
its reason) for an argument a lowering cannot take."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from xdsl.ir import Operation, SSAValue

from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.dialects.torch.arguments import ArgumentErrorClass, OpArguments, Scalar


class RuntimeScalar:
    """A value only known when the graph runs, held by the runtime as a Python object: a
    non-tensor result of a torch fallback, or a tensor of a dtype only torch computes
    (complex, float8, quantized: an input, or a fallback result), which never enters a buffer."""

    def __init__(self, ssa: SSAValue) -> None:
        self.ssa = ssa


class LoweringArgs(OpArguments[TensorValue]):
    """Bound arguments of ``op``: tensors as :class:`TensorValue`, static ones as Python values
    (an operand the lowering holds as a number, an ``arith.constant``, reads as that number)."""

    error_class: ClassVar[ArgumentErrorClass] = NotLowerable

    def __init__(self, op: Operation, env: Mapping[SSAValue, Any]) -> None:
        super().__init__(op)
        self._env = env

    def resolve_operand(self, value: SSAValue) -> TensorValue | Scalar:
        if value not in self._env:
            raise self.error(f"operand {value.name_hint or value} has no lowered value")
        resolved = self._env[value]
        if isinstance(resolved, RuntimeScalar):
            raise self.error("an argument is a scalar only known at run time")
        return resolved

    @property
    def name(self) -> str:
        """``add`` for ``aten::add.Tensor``, ``conv2d`` for ``fused.conv2d`` (used to name kernels)."""
        if self.key.startswith("fused."):
            return self.key.removeprefix("fused.")
        return self.key.split("::")[-1].split(".")[0].strip("_") or self.key
