"""``!torch.quantized<quint8>``: the element type of a quantized torch tensor.

A quantized tensor (``torch.quint8``, ``qint8``, ``qint32``, ``quint4x2``, ``quint2x4``)
stores integers plus a scale and zero point (one per tensor or one per channel).  Its
ranked tensor type is ``tensor<4x4x!torch.quantized<quint8>>``: the element type names the
dtype only; the scale, zero point and quantization scheme are values carried by the tensor at
run time.  No level computes these tensors natively: every op that reads or writes one runs
through torch (see ``ziggurat.ir.types.torch_only_reason``).

This module imports nothing from Ziggurat: ``ziggurat.ir.types`` maps dtypes to this type
(lazily, since the ``torch`` dialect package imports ``ir.types``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

#: The quantized dtypes of torch, by the name the type prints (``torch.<name>``).
QUANTIZED_KINDS: tuple[str, ...] = ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")


@irdl_attr_definition
class QuantizedType(ParametrizedAttribute, TypeAttribute):
    """``!torch.quantized<kind>``, kind one of :data:`QUANTIZED_KINDS`."""

    name = "torch.quantized"

    kind: StringAttr

    def __init__(self, kind: str | StringAttr) -> None:
        super().__init__(StringAttr(kind) if isinstance(kind, str) else kind)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            kind = parser.parse_identifier(context_msg=" (a quantized dtype: " + ", ".join(QUANTIZED_KINDS) + ")")
            if kind not in QUANTIZED_KINDS:
                parser.raise_error(f"unknown quantized dtype '{kind}'; expected one of "
                                   + ", ".join(QUANTIZED_KINDS), start, parser.pos)
        return (StringAttr(kind),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.kind.data)

    def verify(self) -> None:
        if self.kind.data not in QUANTIZED_KINDS:
            raise VerifyException(f"!torch.quantized: unknown quantized dtype '{self.kind.data}'; "
                                  f"expected one of {', '.join(QUANTIZED_KINDS)}")


__all__ = ["QUANTIZED_KINDS", "QuantizedType"]
