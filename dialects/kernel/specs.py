"""The typed parameters of ``kernel.gemm`` and ``kernel.conv``.

    #kernel.gemm<batch = 1, m = 64, n = 128, k = 256, b = "KN32n">
    #kernel.conv<n = 1, c = 3, h = 32, w = 32, o = 16, kh = 3, kw = 3, stride = [1, 1],
                 padding = [1, 1], dilation = [1, 1], groups = 1, oh = 32, ow = 32, weight = "OIhw">

Both are checked on their own (positive sizes, a known weight layout, the output size that
the stride/padding/dilation give) and, by the op that carries them, against its operand and
result types.  The syntax is ``key = value`` pairs in a fixed order: every field is printed.
"""

from __future__ import annotations

import re

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

#: Layouts of a GEMM's B operand: row-major [K, N], its transpose [N, K], or packed panels
#: (``KN{nr}n``, ``dialects/fused/layouts.py``).
GEMM_B_LAYOUTS = re.compile(r"KN|NK|KN[1-9][0-9]*n|KN32n4k")
#: Layouts of a convolution weight: plain, or packed by ``prepack-weights``.
CONV_WEIGHT_LAYOUTS = re.compile(r"OIhw|KN[1-9][0-9]*n|OIhw[1-9][0-9]*i[1-9][0-9]*o|KN32n4k")

Field = int | tuple[int, ...] | str


def _encode(value: Field) -> Attribute:
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, tuple):
        return ArrayAttr([IntAttr(v) for v in value])
    return IntAttr(value)


def _decode(attr: Attribute) -> Field:
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return tuple(a.data for a in attr.data if isinstance(a, IntAttr))
    assert isinstance(attr, IntAttr)
    return attr.data


class _KeyValueSpec(ParametrizedAttribute):
    """Fields printed and parsed as ``<key = value, ...>`` in ``FIELDS`` order."""

    FIELDS: ClassVar[tuple[str, ...]]

    def field(self, name: str) -> Field:
        return _decode(self.parameters[self.FIELDS.index(name)])

    def int_field(self, name: str) -> int:
        value = self.field(name)
        assert isinstance(value, int)
        return value

    def tuple_field(self, name: str) -> tuple[int, ...]:
        value = self.field(name)
        assert isinstance(value, tuple)
        return value

    def print_parameters(self, printer: Printer) -> None:
        parts: list[str] = []
        for name in self.FIELDS:
            value = self.field(name)
            if isinstance(value, str):
                text = '"' + value + '"'
            elif isinstance(value, tuple):
                text = "[" + ", ".join(str(v) for v in value) + "]"
            else:
                text = str(value)
            parts.append(f"{name} = {text}")
        printer.print_string("<" + ", ".join(parts) + ">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: list[Attribute] = []
        with parser.in_angle_brackets():
            for i, name in enumerate(cls.FIELDS):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(name)
                parser.parse_punctuation("=")
                text = parser.parse_optional_str_literal()
                if text is not None:
                    values.append(StringAttr(text))
                elif parser.parse_optional_punctuation("[") is not None:
                    items: list[int] = []
                    if parser.parse_optional_punctuation("]") is None:
                        items.append(parser.parse_integer())
                        while parser.parse_optional_punctuation(",") is not None:
                            items.append(parser.parse_integer())
                        parser.parse_punctuation("]")
                    values.append(ArrayAttr([IntAttr(v) for v in items]))
                else:
                    values.append(IntAttr(parser.parse_integer()))
        return values

    def _check_kinds(self, ints: Sequence[str], tuples: Sequence[str], strings: Sequence[str]) -> None:
        for name in self.FIELDS:
            value = self.field(name)
            if name in ints and not (isinstance(value, int) and value >= 0):
                raise VerifyException(f"{self.name}: {name} must be a non-negative integer, got {value!r}")
            if name in tuples and not isinstance(value, tuple):
                raise VerifyException(f"{self.name}: {name} must be a list of integers, got {value!r}")
            if name in strings and not isinstance(value, str):
                raise VerifyException(f"{self.name}: {name} must be a string, got {value!r}")


@irdl_attr_definition
class GemmSpecAttr(_KeyValueSpec):
    """``C[batch, m, n] = A[batch, m, k] @ B[batch?, k, n]``, B in layout ``b``."""

    name = "kernel.gemm"
    FIELDS: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k", "b")

    batch: IntAttr = param_def()
    m: IntAttr = param_def()
    n: IntAttr = param_def()
    k: IntAttr = param_def()
    b: StringAttr = param_def()

    def __init__(self, batch: int, m: int, n: int, k: int, b: str = "KN") -> None:
        super().__init__(IntAttr(batch), IntAttr(m), IntAttr(n), IntAttr(k), StringAttr(b))

    def verify(self) -> None:
        self._check_kinds(("batch", "m", "n", "k"), (), ("b",))
        if not GEMM_B_LAYOUTS.fullmatch(self.b.data):
            raise VerifyException(f"kernel.gemm: unknown B layout {self.b.data!r}; known: KN, NK, KN{{nr}}n, KN32n4k")

    @property
    def flops(self) -> int:
        return 2 * self.batch.data * self.m.data * self.n.data * self.k.data


@irdl_attr_definition
class ConvSpecAttr(_KeyValueSpec):
    """A 2-d convolution of an ``[n, c, h, w]`` input by ``[o, c / groups, kh, kw]`` weights
    to ``[n, o, oh, ow]``."""

    name = "kernel.conv"
    FIELDS: ClassVar[tuple[str, ...]] = ("n", "c", "h", "w", "o", "kh", "kw", "stride", "padding",
                                         "dilation", "groups", "oh", "ow", "weight")

    n: IntAttr = param_def()
    c: IntAttr = param_def()
    h: IntAttr = param_def()
    w: IntAttr = param_def()
    o: IntAttr = param_def()
    kh: IntAttr = param_def()
    kw: IntAttr = param_def()
    stride: ArrayAttr[IntAttr] = param_def()
    padding: ArrayAttr[IntAttr] = param_def()
    dilation: ArrayAttr[IntAttr] = param_def()
    groups: IntAttr = param_def()
    oh: IntAttr = param_def()
    ow: IntAttr = param_def()
    weight: StringAttr = param_def()

    def __init__(self, *, n: int, c: int, h: int, w: int, o: int, kh: int, kw: int,
                 stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
                 oh: int, ow: int, weight: str = "OIhw") -> None:
        values: list[Field] = [n, c, h, w, o, kh, kw, tuple(stride), tuple(padding), tuple(dilation),
                               groups, oh, ow, weight]
        super().__init__(*[_encode(v) for v in values])

    def verify(self) -> None:
        self._check_kinds(("n", "c", "h", "w", "o", "kh", "kw", "groups", "oh", "ow"),
                          ("stride", "padding", "dilation"), ("weight",))
        stride, padding, dilation = (self.tuple_field(f) for f in ("stride", "padding", "dilation"))
        for name, values, least in (("stride", stride, 1), ("padding", padding, 0), ("dilation", dilation, 1)):
            if len(values) != 2 or any(v < least for v in values):
                raise VerifyException(f"kernel.conv: {name} must be two integers >= {least}, got {list(values)}")
        groups = self.groups.data
        if groups < 1 or self.kh.data < 1 or self.kw.data < 1:
            raise VerifyException(f"kernel.conv: groups and the kernel size must be positive, got groups = {groups}, "
                                  f"kh = {self.kh.data}, kw = {self.kw.data}")
        if self.c.data % groups or self.o.data % groups:
            raise VerifyException(f"kernel.conv: groups = {groups} does not divide c = {self.c.data} "
                                  f"and o = {self.o.data}")
        for axis, size, k, out in ((0, self.h.data, self.kh.data, self.oh.data), (1, self.w.data, self.kw.data,
                                                                                 self.ow.data)):
            expected = (size + 2 * padding[axis] - dilation[axis] * (k - 1) - 1) // stride[axis] + 1
            if expected != out:
                raise VerifyException(
                    f"kernel.conv: output {'hw'[axis]} = {out}, but stride {stride[axis]}, padding {padding[axis]}, "
                    f"dilation {dilation[axis]} and a {k}-tap kernel over {size} give {expected}")
        if not CONV_WEIGHT_LAYOUTS.fullmatch(self.weight.data):
            raise VerifyException(f"kernel.conv: unknown weight layout {self.weight.data!r}; "
                                  "known: OIhw, KN{nr}n, OIhw{ib}i{ob}o, KN32n4k")

    @property
    def flops(self) -> int:
        return 2 * self.n.data * self.o.data * self.oh.data * self.ow.data * (self.c.data // self.groups.data) \
            * self.kh.data * self.kw.data
