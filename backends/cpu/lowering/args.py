"""The arguments of the op being lowered, by schema name (as the TensorRT ``ConverterArgs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ziggurat.backends.cpu.lowering.registry import NotLowerable
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.ir.types import dtype_of, shape_of


class RuntimeScalar:
    """A value only known when the graph runs, held by the runtime as a Python object: a
    non-tensor result of a torch fallback, or a tensor of a dtype only torch computes
    (complex, float8, quantized: an input, or a fallback result), which never enters a buffer."""

    def __init__(self, ssa: SSAValue) -> None:
        self.ssa = ssa


class LoweringArgs:
    """Bound arguments of ``op``: tensors as :class:`TensorValue`, static ones as Python values."""

    def __init__(self, op: Operation, values: Mapping[str, Any], env: Mapping[SSAValue, Any], key: str) -> None:
        self.op = op
        self.key = key
        self._values = values
        self._env = env

    @property
    def name(self) -> str:
        """``add`` for ``aten::add.Tensor``, ``conv2d`` for ``fused.conv2d`` (used to name kernels)."""
        if self.key.startswith("fused."):
            return self.key.removeprefix("fused.")
        return self.key.split("::")[-1].split(".")[0].strip("_") or self.key

    def has(self, name: str) -> bool:
        return name in self._values

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, SSAValue):
            if value not in self._env:
                raise NotLowerable(f"operand {value.name_hint or value} has no lowered value")
            resolved = self._env[value]
            if isinstance(resolved, RuntimeScalar):
                raise NotLowerable("an argument is a scalar only known at run time")
            return resolved
        if isinstance(value, list):
            return [self._resolve(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return value

    def value_of(self, ssa: SSAValue | None) -> Any:
        """The lowered value of an operand given directly (ops that are not torch ops)."""
        return None if ssa is None else self._resolve(ssa)

    def get(self, name: str, default: Any = None) -> Any:
        if name not in self._values:
            return default
        value = self._resolve(self._values[name])
        return default if value is None else value

    def tensor(self, name: str) -> TensorValue:
        value = self.get(name)
        if not isinstance(value, TensorValue):
            raise NotLowerable(f"argument '{name}' is not a tensor ({type(value).__name__})")
        return value

    def opt_tensor(self, name: str) -> TensorValue | None:
        value = self.get(name)
        if value is None:
            return None
        if not isinstance(value, TensorValue):
            raise NotLowerable(f"argument '{name}' is not a tensor")
        return value

    def tensors(self, name: str) -> list[TensorValue]:
        value = self.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, TensorValue) for v in value):  # pyright: ignore
            raise NotLowerable(f"argument '{name}' is not a list of tensors")
        return value  # pyright: ignore[reportUnknownVariableType]

    def static(self, name: str, default: Any = None) -> Any:
        value = self.get(name, default)
        if isinstance(value, TensorValue):
            raise NotLowerable(f"argument '{name}' must be a compile-time value, got a tensor")
        return value

    def ints(self, name: str, default: Any = None) -> list[int]:
        value = self.static(name, default)
        if value is None:
            return []
        if isinstance(value, int):
            return [value]
        return [int(v) for v in value]

    def scalar_or_tensor(self, name: str) -> TensorValue | bool | int | float:
        value = self.get(name)
        if isinstance(value, TensorValue | bool | int | float):
            return value
        raise NotLowerable(f"argument '{name}' is neither a tensor nor a number: {value!r}")

    # -- results -----------------------------------------------------------------------
    def result_shape(self, i: int = 0) -> tuple[int, ...]:
        return shape_of(self.op.results[i].type)

    def result_dtype(self, i: int = 0) -> torch.dtype:
        return dtype_of(self.op.results[i].type)

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.result_shape(0)

    @property
    def out_dtype(self) -> torch.dtype:
        return self.result_dtype(0)

    def result_is_tensor(self, i: int = 0) -> bool:
        return isinstance(self.op.results[i].type, TensorType)
