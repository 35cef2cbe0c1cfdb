"""Hexadecimal elements of a float ``dense<...>`` literal are bit patterns, as in MLIR.

xDSL prints a non-finite float element as its bits (``dense<[0x7F800000, 1.0]> :
tensor<2xf32>`` for ``[inf, 1]``), as MLIR does, but its parser reads the hex element back
as the *integer* 2139095040 and converts that to a float: every saved or printed module
with an inf or NaN constant came back with numbers near 2e9 (a silent wrong answer on
``ziggurat.load`` and on ``.mlir`` input).  A scalar ``0x7F800000 : f32`` was already read
as bits.  ``install()`` makes a tensor literal's element do the same: a hex element of a
float type is the bit pattern of that type, a negative one or one wider than the type is
a parse error.  Upstream xDSL should take this fix; until then it is applied here.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import AnyFloat
from xdsl.parser import AttrParser

_Element: Any = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]
_plain_to_type = _Element.to_type


def _is_hex(element: Any) -> bool:
    text = element.span.text.lstrip("-").lstrip()
    return text[:2] in ("0x", "0X") and isinstance(element.value, int) and not isinstance(element.value, bool)


def _to_type(self: Any, parser: AttrParser, type: Any) -> Any:
    if not (isinstance(type, AnyFloat) and _is_hex(self)):
        return _plain_to_type(self, parser, type)
    if self.is_negative:
        parser.raise_error("a hexadecimal float literal is a bit pattern and has no sign", at_position=self.span)
    bits = int(self.value)
    if bits.bit_length() > type.bitwidth:
        parser.raise_error(f"hexadecimal float literal {self.span.text} does not fit {type}", at_position=self.span)
    return next(iter(type.iter_unpack(bits.to_bytes(type.compile_time_size, "little"))))


def install() -> None:
    """Read hex float elements as bits in every parser of this process (idempotent)."""
    _Element.to_type = _to_type
