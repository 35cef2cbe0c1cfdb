"""Symbolic input sizes: the symbols a dynamic-shape compile declares, their ranges, and the
input dims bound to them (``batch in [1, 64]: input_ids dim 0, attention_mask dim 0``).

A dim is bound to an expression over the symbols: a plain symbol (``batch``), or a derived
one (``2*batch``, ``seq + 1``) as torch.export's derived ``Dim``s make.  At each call,
:meth:`ShapeSymbols.bind` solves the symbols from the dims that are a symbol alone, checks
each against its range, and checks every other dim against its expression: a call outside a
range, or one that breaks a declared relation (two inputs' dims declared equal), is an
:class:`InputError` naming the input, the dim, the value and the range.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ziggurat.ir.errors import InputError

#: the function attribute holding :meth:`ShapeSymbols.to_json` (a dynamic-shape ``torch`` level)
SHAPE_SYMBOLS_ATTR = "ziggurat.shape_symbols"
#: on an op of a specialized import whose result's shape follows the symbols (an import for a
#: range build, ``ExportImporter(mark_sized=True)``): constant folding leaves it, so the
#: lowerings at different sizes differ only in sizes, never in a folded constant
SIZED_ATTR = "ziggurat.sized"

#: the expressions this module evaluates: integers, symbol names, + - * // and parentheses
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(//|[-+*()]))")


@dataclass(frozen=True)
class DimSymbol:
    """A symbolic size: ``name`` in ``[low, high]`` (``high`` None: no upper bound)."""

    name: str
    low: int
    high: int | None

    def range_text(self) -> str:
        return f"[{self.low}, {self.high if self.high is not None else 'inf'}]"

    def contains(self, value: int) -> bool:
        return value >= self.low and (self.high is None or value <= self.high)


@dataclass(frozen=True)
class InputDim:
    """Dim ``dim`` of flat input ``input`` (named ``input_name``) is ``expr`` over the symbols."""

    input: int
    input_name: str
    dim: int
    expr: str

    def where(self) -> str:
        return f"input {self.input} ('{self.input_name}') dim {self.dim}"


def evaluate(expr: str, values: Mapping[str, int]) -> int:
    """The value of ``expr`` (integers, names, ``+ - * //``, parentheses) with ``values``."""
    tokens: list[str] = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            if expr[pos:].strip() == "":
                break
            raise ValueError(f"'{expr}' is not a size expression (at '{expr[pos:]}')")
        tokens.append(m.group(1) or m.group(2) or m.group(3))
        pos = m.end()
    at = 0

    def peek() -> str | None:
        return tokens[at] if at < len(tokens) else None

    def take() -> str:
        nonlocal at
        if at >= len(tokens):
            raise ValueError(f"'{expr}' ends early")
        at += 1
        return tokens[at - 1]

    def atom() -> int:
        t = take()
        if t == "(":
            v = total()
            if take() != ")":
                raise ValueError(f"'{expr}': unbalanced parentheses")
            return v
        if t == "-":
            return -atom()
        if t.isdigit():
            return int(t)
        if t in values:
            return values[t]
        raise ValueError(f"'{expr}': unknown symbol '{t}'")

    def product() -> int:
        v = atom()
        while peek() in ("*", "//"):
            v = v * atom() if take() == "*" else v // atom()
        return v

    def total() -> int:
        v = product()
        while peek() in ("+", "-"):
            v = v + product() if take() == "+" else v - product()
        return v

    result = total()
    if at != len(tokens):
        raise ValueError(f"'{expr}': unexpected '{tokens[at]}'")
    return result


@dataclass(frozen=True)
class ShapeSymbols:
    """The symbols of a dynamic-shape compile and the input dims bound to them."""

    symbols: tuple[DimSymbol, ...]
    dims: tuple[InputDim, ...]

    def symbol(self, name: str) -> DimSymbol:
        return next(s for s in self.symbols if s.name == name)

    def bind(self, shapes: Sequence[Sequence[int] | None]) -> dict[str, int]:
        """The symbols' values for a call whose flat inputs have ``shapes`` (None: not a tensor)."""
        values: dict[str, int] = {}
        names = {s.name for s in self.symbols}
        derived: list[InputDim] = []
        for d in self.dims:
            shape = shapes[d.input] if d.input < len(shapes) else None
            if shape is None or d.dim >= len(shape):
                raise InputError(f"{d.where()} is declared dynamic ({d.expr}), but the input has "
                                 f"{'no such dim' if shape is not None else 'no shape'}", op="call")
            size = int(shape[d.dim])
            if d.expr not in names:
                derived.append(d)
                continue
            symbol = self.symbol(d.expr)
            if not symbol.contains(size):
                raise InputError(f"{d.where()} is {size}, outside the range of '{symbol.name}' "
                                 f"{symbol.range_text()} it was compiled for", op="call")
            if d.expr in values and values[d.expr] != size:
                first = next(e for e in self.dims if e.expr == d.expr)
                raise InputError(f"{d.where()} is {size}, but {first.where()} is {values[d.expr]}: both are "
                                 f"'{d.expr}', declared equal", op="call")
            values[d.expr] = size
        for d in derived:
            size = int(shapes[d.input][d.dim])  # pyright: ignore[reportOptionalSubscript]
            want = evaluate(d.expr, values)
            if size != want:
                bound = ", ".join(f"{k}={v}" for k, v in values.items())
                raise InputError(f"{d.where()} is {size}, but it is declared '{d.expr}', which is {want} "
                                 f"for this call ({bound})", op="call")
        return values

    def describe(self) -> list[str]:
        """One line per symbol: ``batch in [1, 64]: x dim 0, mask dim 0``."""
        lines: list[str] = []
        for s in self.symbols:
            uses = [f"{d.input_name} dim {d.dim}" + (f" = {d.expr}" if d.expr != s.name else "")
                    for d in self.dims if re.search(rf"\b{re.escape(s.name)}\b", d.expr)]
            lines.append(f"{s.name} in {s.range_text()}: {', '.join(uses)}")
        return lines

    def to_json(self) -> str:
        return json.dumps({"symbols": [[s.name, s.low, s.high] for s in self.symbols],
                           "dims": [[d.input, d.input_name, d.dim, d.expr] for d in self.dims]})

    @staticmethod
    def from_json(text: str | Mapping[str, Any]) -> ShapeSymbols:
        """Parse :meth:`to_json`'s text; a malformed one is a ``ValueError``."""
        data = json.loads(text) if isinstance(text, str) else text
        try:
            symbols = tuple(DimSymbol(str(n), int(lo), None if hi is None else int(hi))
                            for n, lo, hi in data["symbols"])
            dims = tuple(InputDim(int(i), str(name), int(dim), str(expr)) for i, name, dim, expr in data["dims"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"malformed shape symbols: {e}") from None
        known = {s.name: 1 for s in symbols}
        for d in dims:
            evaluate(d.expr, known)  # every name in an expression is a symbol
        return ShapeSymbols(symbols, dims)


#: on a function with shape symbols: their sizes in the compile's example (a TensorRT profile's opt)
EXAMPLE_SIZES_ATTR = "ziggurat.example_sizes"


def example_sizes(func: Any) -> dict[str, int] | None:
    """The symbols' sizes in the compile's example (``EXAMPLE_SIZES_ATTR`` of ``func``), if recorded."""
    from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr

    attr = func.attributes.get(EXAMPLE_SIZES_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return None
    return {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}


def example_sizes_attr(values: Mapping[str, int]) -> Any:
    """The ``EXAMPLE_SIZES_ATTR`` value for ``values``."""
    from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr

    return DictionaryAttr({k: IntegerAttr(v, 64) for k, v in values.items()})
