"""A torch op's arguments bound by schema name, with typed, checked accessors for converters.

Converters never index arguments by position: ``args.tensor("self")``,
``args.get_int("dim")``, ``args.get_ints("padding")``, ``args.is_none("bias")``.
A wrong kind (a tensor where a static int is needed, a missing argument) is a
:class:`ConverterArgumentError` naming the op, its schema and source line, which
the pass reports as the reason the op stays in torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ziggurat.dialects.torch import BoundArguments, TorchOp
from ziggurat.dialects.torch.schema import OpSchema
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import dtype_of

_MISSING: Any = object()

Scalar = int | float | bool


class ConverterArgumentError(ZigguratError):
    """An argument a converter cannot take (wrong kind, not static, missing)."""


def node_info(op: Operation) -> str:
    """``aten::conv2d @ model.py:12 [%x.3 (conv1)]``: what layers and messages are named after."""
    try:
        key = op.aten_key if isinstance(op, TorchOp) else op.name
    except KeyError:
        key = op.name
    where = op_location(op)
    return f"{key} @ {where}" if where else key


@dataclass(frozen=True)
class ConverterArgs:
    """The arguments of ``op`` by schema name (defaults filled in).

    Ops of Ziggurat's own dialects (``fused.*``) have no aten schema: their
    converters read the op's fields (``args.op``), and ``bound`` is None.
    """

    op: Operation
    bound: BoundArguments | None

    @staticmethod
    def of(op: Operation) -> ConverterArgs:
        return ConverterArgs(op, op.arguments() if isinstance(op, TorchOp) else None)

    @property
    def schema(self) -> OpSchema:
        if self.bound is None:
            raise ConverterArgumentError(f"{self.op.name} has no aten schema", op=self.op.name)
        return self.bound.schema

    @property
    def key(self) -> str:
        return self.op.name if self.bound is None else self.schema.key

    @property
    def node_info(self) -> str:
        return node_info(self.op)

    def error(self, message: str) -> ConverterArgumentError:
        schema = None if self.bound is None else self.schema.text
        return ConverterArgumentError(message, op=self.key, schema=schema, location=op_location(self.op))

    @property
    def _values(self) -> dict[str, Any]:
        return {} if self.bound is None else dict(self.bound.values)

    # -- raw access -----------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return self.bound is not None and name in self.bound.values

    def raw(self, name: str) -> Any:
        if self.bound is None or name not in self.bound.values:
            raise self.error(f"has no argument {name!r}")
        return self.bound.values[name]

    def is_none(self, name: str) -> bool:
        return self.raw(name) is None

    def is_tensor(self, name: str) -> bool:
        return isinstance(self.raw(name), SSAValue)

    # -- tensors --------------------------------------------------------------------------
    def tensor(self, name: str) -> SSAValue:
        """A tensor-valued argument (an SSA value of the torch function)."""
        value = self.raw(name)
        if not isinstance(value, SSAValue) or not isinstance(value.type, TensorType):
            raise self.error(f"argument {name!r} must be a tensor value, got {_describe(value)}")
        return value

    def optional_tensor(self, name: str) -> SSAValue | None:
        return None if self.is_none(name) else self.tensor(name)

    def tensor_or_scalar(self, name: str) -> SSAValue | Scalar:
        """A ``Tensor`` argument that the importer may have folded into a static number."""
        value = self.raw(name)
        if isinstance(value, SSAValue):
            return self.tensor(name)
        if isinstance(value, bool | int | float):
            return value
        raise self.error(f"argument {name!r} must be a tensor or a number, got {_describe(value)}")

    def tensors(self, name: str) -> list[SSAValue]:
        value = self.raw(name)
        if not isinstance(value, list) or not all(isinstance(v, SSAValue) for v in value):  # pyright: ignore
            raise self.error(f"argument {name!r} must be a list of tensor values, got {_describe(value)}")
        return list(value)  # pyright: ignore[reportUnknownArgumentType]

    def shape(self, name: str) -> tuple[int, ...]:
        ty = self.tensor(name).type
        assert isinstance(ty, TensorType)
        return tuple(ty.get_shape())

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def dtype(self, name: str) -> torch.dtype:
        return dtype_of(self.tensor(name).type)

    # -- static values ------------------------------------------------------------------------
    def get_int(self, name: str, default: int | None = _MISSING) -> int:
        value = self._static(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"argument {name!r} must be a static int, got {_describe(value)}")
        return value

    def get_optional_int(self, name: str) -> int | None:
        return None if self.is_none(name) else self.get_int(name)

    def get_float(self, name: str, default: float | None = _MISSING) -> float:
        value = self._static(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(f"argument {name!r} must be a static number, got {_describe(value)}")
        return float(value)

    def get_optional_float(self, name: str) -> float | None:
        return None if self.is_none(name) else self.get_float(name)

    def get_bool(self, name: str, default: bool | None = _MISSING) -> bool:
        value = self._static(name, default)
        if not isinstance(value, bool | int):
            raise self.error(f"argument {name!r} must be a static bool, got {_describe(value)}")
        return bool(value)

    def get_scalar(self, name: str, default: Scalar | None = _MISSING) -> Scalar:
        value = self._static(name, default)
        if not isinstance(value, bool | int | float):
            raise self.error(f"argument {name!r} must be a static number, got {_describe(value)}")
        return value

    def get_optional_scalar(self, name: str) -> Scalar | None:
        return None if self.is_none(name) else self.get_scalar(name)

    def get_ints(self, name: str, default: Sequence[int] | None = _MISSING) -> list[int]:
        value = self._static(name, default)
        if isinstance(value, int) and not isinstance(value, bool):
            return [value]
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value  # pyright: ignore
        ):
            raise self.error(f"argument {name!r} must be a static int list, got {_describe(value)}")
        return [int(v) for v in value]  # pyright: ignore

    def get_optional_ints(self, name: str) -> list[int] | None:
        return None if self.is_none(name) else self.get_ints(name)

    def get_floats(self, name: str, default: Sequence[float] | None = _MISSING) -> list[float]:
        value = self._static(name, default)
        if not isinstance(value, list | tuple) or not all(isinstance(v, int | float) for v in value):  # pyright: ignore
            raise self.error(f"argument {name!r} must be a static float list, got {_describe(value)}")
        return [float(v) for v in value]  # pyright: ignore

    def get_str(self, name: str, default: str | None = _MISSING) -> str:
        value = self._static(name, default)
        if not isinstance(value, str):
            raise self.error(f"argument {name!r} must be a static string, got {_describe(value)}")
        return value

    def get_optional_str(self, name: str) -> str | None:
        return None if self.is_none(name) else self.get_str(name)

    def get_dtype(self, name: str) -> torch.dtype | None:
        value = self._static(name, None)
        if value is None or isinstance(value, torch.dtype):
            return value
        raise self.error(f"argument {name!r} must be a static dtype, got {_describe(value)}")

    def _static(self, name: str, default: Any) -> Any:
        value = self.raw(name)
        if isinstance(value, SSAValue):
            raise self.error(f"argument {name!r} must be known at compile time, got the tensor value {value}")
        if value is None:
            if default is _MISSING:
                raise self.error(f"argument {name!r} is None")
            return default
        return value


def _describe(value: Any) -> str:
    if isinstance(value, SSAValue):
        return f"a value of type {value.type}"
    if value is None:
        return "None"
    return f"{type(value).__name__} {value!r}"
