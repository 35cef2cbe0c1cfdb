"""The ``torch`` dialect: one op per aten op, plus ``torch.operator`` and ``torch.literal``, and
the ``!torch.quantized<...>`` element type."""

from __future__ import annotations

from functools import cache

from xdsl.ir import Dialect

from ziggurat.dialects.torch.aten_ops import ATEN_OPS
from ziggurat.dialects.torch.control_flow import LoopOp, LoopYieldOp
from ziggurat.dialects.torch.ops_base import (
    AtenOp,
    BoundArguments,
    LiteralOp,
    OperatorOp,
    TorchOp,
)
from ziggurat.dialects.torch.quantized_type import QuantizedType

Torch = Dialect("torch", [*ATEN_OPS, OperatorOp, LiteralOp, LoopOp, LoopYieldOp], [QuantizedType])


@cache
def aten_op_classes() -> dict[str, type[AtenOp]]:
    """Generated op classes by schema key (``aten::add.Tensor``)."""
    return {cls.parsed_schema().key: cls for cls in ATEN_OPS}


def aten_op_class(key: str) -> type[AtenOp] | None:
    """The typed op class of ``aten::name.overload``, if the dialect defines it."""
    return aten_op_classes().get(key)


__all__ = [
    "ATEN_OPS",
    "AtenOp",
    "BoundArguments",
    "LiteralOp",
    "LoopOp",
    "LoopYieldOp",
    "OperatorOp",
    "QuantizedType",
    "Torch",
    "TorchOp",
    "aten_op_class",
    "aten_op_classes",
]
