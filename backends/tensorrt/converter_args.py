"""A torch op's arguments for a converter: the shared binder (``dialects/torch/arguments.py``)
with the operands kept as SSA values of the torch function.

Converters never index arguments by position: ``args.tensor("self")``,
``args.get_int("dim")``, ``args.get_ints("padding")``, ``args.is_none("bias")``.
A wrong kind (a tensor where a static int is needed, a missing argument) is a
:class:`ConverterArgumentError` naming the op, its schema and source line, which
the pass reports as the reason the op stays in torch.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.dialects.torch import TorchOp
from ziggurat.dialects.torch.arguments import ArgumentErrorClass, OpArguments, Scalar
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.locations import op_location


class ConverterArgumentError(ZigguratError):
    """An argument a converter cannot take (wrong kind, not static, missing)."""


class DynamicSizeError(ConverterArgumentError):
    """A converter asked for the sizes of a value with a dynamic (run-time) dim as numbers."""

    def __init__(self, ty: Attribute) -> None:
        super().__init__(f"the converter reads the sizes of {ty} as numbers, and a dynamic dim is known only at "
                         "run time")


def node_info(op: Operation) -> str:
    """``aten::conv2d @ model.py:12 [%x.3 (conv1)]``: what layers and messages are named after."""
    try:
        key = op.aten_key if isinstance(op, TorchOp) else op.name
    except KeyError:
        key = op.name
    where = op_location(op)
    return f"{key} @ {where}" if where else key


class ConverterArgs(OpArguments[SSAValue]):
    """The arguments of the op being converted by schema name (defaults filled in); a
    tensor argument is the torch function's SSA value (``ctx.tensor`` maps it to trt)."""

    error_class: ClassVar[ArgumentErrorClass] = ConverterArgumentError

    @property
    def node_info(self) -> str:
        return node_info(self.op)

    def shape(self, name: str) -> tuple[int, ...]:
        """The static shape of tensor argument ``name``; a dynamic dim is a :class:`DynamicSizeError`
        (the converters that handle run-time sizes read ``ctx.shape(v, dynamic=True)``)."""
        return _static(self._type(name))

    def rank(self, name: str) -> int:
        return len(self._type(name).get_shape())

    def result_shape(self, i: int = 0) -> tuple[int, ...]:
        ty = self.op.results[i].type
        assert isinstance(ty, TensorType)
        return _static(ty)

    def _type(self, name: str) -> TensorType[Attribute]:
        self.tensor(name)
        ty = self._values[name].type
        assert isinstance(ty, TensorType)
        return ty


def _static(ty: TensorType[Attribute]) -> tuple[int, ...]:
    shape = tuple(int(d) for d in ty.get_shape())
    if any(d < 0 for d in shape):
        raise DynamicSizeError(ty)
    return shape


__all__ = ["ConverterArgs", "ConverterArgumentError", "Scalar", "node_info"]
