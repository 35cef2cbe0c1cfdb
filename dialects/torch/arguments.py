"""An op's arguments bound by schema name, with typed, checked accessors: the one argument
binder of every backend (the CPU lowerings' ``LoweringArgs``, the TensorRT converters'
``ConverterArgs``).

Code that implements an op never indexes its arguments by position:
``args.tensor("self")``, ``args.optional_tensor("bias")``, ``args.get_int("dim")``,
``args.get_ints("padding")``, ``args.is_none("bias")``.  A wrong kind (a tensor where a
static int is needed, a missing argument) raises the backend's error naming the op, its
schema and its source line; its message is the reason the op is not taken.

A backend plugs in two things:

* :meth:`OpArguments.resolve_operand`: what an operand (an SSA value of the torch
  function) is to the backend (the TensorRT converters keep the SSA value; the CPU
  lowering reads the value it lowered it to).  An operand of a tensor type is a tensor
  unless it resolves to a Python number;
* :attr:`OpArguments.error_class`: the exception a wrong argument raises.

An argument the op's schema does not have reads as absent: :meth:`has` says so,
:meth:`get`, :meth:`static` and :meth:`is_none` treat it as ``None``, the ``optional_*`` and
``get_optional_*`` accessors give ``None`` and the others their ``default`` if one is
given, else an error saying the op has no such argument.  Ops of Ziggurat's own dialects
(``fused.*``) have no schema: their implementations read the op's fields (``args.op``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ziggurat.dialects.torch.op_registry import op_key, schema_text
from ziggurat.dialects.torch.ops_base import BoundArguments, TorchOp
from ziggurat.dialects.torch.schema import OpSchema
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import dtype_of, shape_of

Scalar = int | float | bool
#: the backend's value of a tensor operand
T = TypeVar("T")

_MISSING: Any = object()


class ArgumentError(ZigguratError):
    """An argument the code implementing an op cannot take (wrong kind, not static, missing)."""


class ArgumentErrorClass(Protocol):
    """How a backend's argument error is built (a :class:`ZigguratError` subclass fits)."""

    def __call__(self, message: str, *, op: str | None = None, schema: str | None = None,
                 location: str | None = None) -> Exception: ...


class OpArguments(Generic[T]):
    """The arguments of ``op`` by schema name, defaults filled in; see the module docstring."""

    #: the exception a wrong argument raises
    error_class: ClassVar[ArgumentErrorClass] = ArgumentError

    def __init__(self, op: Operation) -> None:
        self.op = op
        #: ``aten::add.Tensor`` (the op name for an op of Ziggurat's own dialects)
        self.key = op_key(op)
        self.bound: BoundArguments | None = op.arguments() if isinstance(op, TorchOp) else None
        self._values: Mapping[str, Any] = {} if self.bound is None else self.bound.values

    # -- what a backend plugs in ------------------------------------------------------------
    def resolve_operand(self, value: SSAValue) -> T | Scalar:
        """The backend's value of the operand ``value``: a tensor, or a Python number the
        operand is known to be; raises :attr:`error_class` for an operand it has no value for."""
        return value  # pyright: ignore[reportReturnType]  (T is SSAValue where this is not overridden)

    def error(self, message: str) -> Exception:
        """The backend's error about this op's arguments, naming the op, schema and source line."""
        return self.error_class(message, op=self.key, schema=schema_text(self.op), location=op_location(self.op))

    # -- the op ------------------------------------------------------------------------------------
    @property
    def schema(self) -> OpSchema:
        if self.bound is None:
            raise self.error(f"{self.op.name} has no aten schema")
        return self.bound.schema

    def value_of(self, ssa: SSAValue | None) -> Any:
        """The backend's value of an operand given directly (ops that are not torch ops, which
        read their operands as the op's fields), unchecked."""
        return None if ssa is None else self.resolve_operand(ssa)

    # -- any argument -------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        """Whether the op's schema has an argument ``name``."""
        return name in self._values

    def is_none(self, name: str) -> bool:
        """The argument is None (or the op has no argument ``name``)."""
        return self._values.get(name) is None

    def get(self, name: str, default: Any = None) -> Any:
        """The argument, operands resolved (lists element by element); ``default`` when it is
        None or the op has no argument ``name``."""
        if name not in self._values:
            return default
        value = self._resolve(self._values[name])
        return default if value is None else value

    def static(self, name: str, default: Any = None) -> Any:
        """A compile-time argument of any kind (``default`` when it is None or absent); an
        operand that is not a known number is an error."""
        value = self.get(name, default)
        raw = self._values.get(name)
        if isinstance(raw, SSAValue) and not isinstance(value, bool | int | float):
            raise self.error(f"argument {name!r} must be known at compile time, got {_describe(raw)}")
        return value

    # -- tensors --------------------------------------------------------------------------------
    def tensor(self, name: str) -> T:
        """A tensor argument (the backend's value of the operand)."""
        raw = self._required(name)
        value = self._tensor_operand(raw)
        if value is None:
            raise self.error(f"argument {name!r} must be a tensor value, got {_describe(raw)}")
        return value

    def optional_tensor(self, name: str) -> T | None:
        """A ``Tensor?`` argument: None when it is None (or absent)."""
        return None if self.is_none(name) else self.tensor(name)

    def tensors(self, name: str) -> list[T]:
        """A ``Tensor[]`` argument."""
        raw = self._required(name)
        values = [self._tensor_operand(v) for v in raw] if isinstance(raw, list) else None  # pyright: ignore
        if values is None or any(v is None for v in values):
            raise self.error(f"argument {name!r} must be a list of tensor values, got {_describe(raw)}")
        return [v for v in values if v is not None]

    def tensor_or_scalar(self, name: str) -> T | Scalar:
        """A ``Tensor`` argument the importer may have folded into a number (or an operand
        known to be one)."""
        raw = self._required(name)
        if isinstance(raw, SSAValue):
            value = self.resolve_operand(raw)
            if isinstance(value, bool | int | float) or isinstance(raw.type, TensorType):
                return value
        elif isinstance(raw, bool | int | float):
            return raw
        raise self.error(f"argument {name!r} must be a tensor or a number, got {_describe(raw)}")

    def shape(self, name: str) -> tuple[int, ...]:
        """The static shape of tensor argument ``name`` (its type in the torch function)."""
        self.tensor(name)
        return shape_of(self._values[name].type)

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def dtype(self, name: str) -> torch.dtype:
        """The element dtype of tensor argument ``name``."""
        self.tensor(name)
        return dtype_of(self._values[name].type)

    # -- static values -----------------------------------------------------------------------------
    def get_int(self, name: str, default: int = _MISSING) -> int:
        value = self._static(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"argument {name!r} must be a static int, got {_describe(value)}")
        return value

    def get_optional_int(self, name: str) -> int | None:
        return None if self.is_none(name) else self.get_int(name)

    def get_float(self, name: str, default: float = _MISSING) -> float:
        value = self._static(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(f"argument {name!r} must be a static number, got {_describe(value)}")
        return float(value)

    def get_optional_float(self, name: str) -> float | None:
        return None if self.is_none(name) else self.get_float(name)

    def get_bool(self, name: str, default: bool = _MISSING) -> bool:
        value = self._static(name, default)
        if not isinstance(value, bool | int):
            raise self.error(f"argument {name!r} must be a static bool, got {_describe(value)}")
        return bool(value)

    def get_scalar(self, name: str, default: Scalar = _MISSING) -> Scalar:
        value = self._static(name, default)
        if not isinstance(value, bool | int | float):
            raise self.error(f"argument {name!r} must be a static number, got {_describe(value)}")
        return value

    def get_optional_scalar(self, name: str) -> Scalar | None:
        return None if self.is_none(name) else self.get_scalar(name)

    def get_ints(self, name: str, default: Sequence[int] = _MISSING) -> list[int]:
        """A static ``int[]`` argument (a single int is a list of one)."""
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

    def get_floats(self, name: str, default: Sequence[float] = _MISSING) -> list[float]:
        value = self._static(name, default)
        if not isinstance(value, list | tuple) or not all(isinstance(v, int | float) for v in value):  # pyright: ignore
            raise self.error(f"argument {name!r} must be a static float list, got {_describe(value)}")
        return [float(v) for v in value]  # pyright: ignore

    def get_str(self, name: str, default: str = _MISSING) -> str:
        value = self._static(name, default)
        if not isinstance(value, str):
            raise self.error(f"argument {name!r} must be a static string, got {_describe(value)}")
        return value

    def get_optional_str(self, name: str) -> str | None:
        return None if self.is_none(name) else self.get_str(name)

    def get_dtype(self, name: str) -> torch.dtype | None:
        """A ``ScalarType?`` argument: None when it is None (or absent)."""
        value = self._static(name, None)
        if value is None or isinstance(value, torch.dtype):
            return value
        raise self.error(f"argument {name!r} must be a static dtype, got {_describe(value)}")

    # -- results ---------------------------------------------------------------------------------------
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

    # -- helpers ----------------------------------------------------------------------------------------
    def _required(self, name: str) -> Any:
        if name not in self._values:
            raise self.error(f"has no argument {name!r}")
        return self._values[name]

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, SSAValue):
            return self.resolve_operand(value)
        if isinstance(value, list):
            return [self._resolve(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return value

    def _tensor_operand(self, raw: Any) -> T | None:
        """The backend's tensor of ``raw``, or None when ``raw`` is no tensor operand."""
        if not isinstance(raw, SSAValue) or not isinstance(raw.type, TensorType):
            return None
        value = self.resolve_operand(raw)
        return None if isinstance(value, bool | int | float) else value

    def _static(self, name: str, default: Any) -> Any:
        """The static value of ``name``; ``default`` when it is None or absent (an error when
        no default is given)."""
        if name not in self._values:
            if default is _MISSING:
                raise self.error(f"has no argument {name!r}")
            return default
        raw = self._values[name]
        value = self._resolve(raw)
        if isinstance(raw, SSAValue) and not isinstance(value, bool | int | float):
            raise self.error(f"argument {name!r} must be known at compile time, got {_describe(raw)}")
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
