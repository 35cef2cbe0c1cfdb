"""``--dim-ranges``: bind the ``?`` input dims of a ``torch``-level function to named symbols
with ranges (``ziggurat.shape_symbols``), as a dynamic-shape compile does, so that a
hand-written or saved ``.mlir`` with ``tensor<?x128xf32>`` inputs is a dynamic-shape level
(``ziggurat-opt x.mlir --dim-ranges 'batch=1:64'``: declared as the file is read, before the
verifiers, which refuse ``?`` inputs without symbols).

The spec is a comma-separated list of

* ``NAME=MIN:MAX`` (``MAX`` may be left out: no upper bound) declaring a symbol, and
* ``INPUT.DIM=NAME`` binding dim ``DIM`` of ``INPUT`` (its name, as in ``ziggurat.input_names``
  or the argument's ``%name``, or its position) to a symbol; ``NAME`` may be an expression of
  symbols (``2*seq``), a derived dim.

Without bindings, one declared symbol binds every ``?`` input dim (a batch); several bind the
``?`` dims in order of appearance, one each.  Every ``?`` input dim must end up bound, and a
bound dim must be ``?``; anything else is an error naming the input and the dim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.shape_symbols import SHAPE_SYMBOLS_ATTR, DimSymbol, InputDim, ShapeSymbols, evaluate
from ziggurat.ir.signature import INPUT_NAMES_ATTR, input_names

_SYMBOL = re.compile(r"^([A-Za-z_][A-Za-z_0-9]*)=(\d+):(\d*)$")
_BINDING = re.compile(r"^([A-Za-z_0-9]+)\.(\d+)=(.+)$")


def _error(message: str) -> ZigguratError:
    return ZigguratError(message, op="--dim-ranges")


def parse_ranges(spec: str) -> tuple[list[DimSymbol], list[tuple[str, int, str]]]:
    """The symbols and the (input, dim, expression) bindings of ``spec``."""
    symbols: list[DimSymbol] = []
    bindings: list[tuple[str, int, str]] = []
    for item in (p.strip() for p in spec.split(",")):
        if not item:
            continue
        if m := _SYMBOL.match(item):
            low, high = int(m.group(2)), int(m.group(3)) if m.group(3) else None
            if high is not None and high < low:
                raise _error(f"'{item}': the range is empty")
            if any(s.name == m.group(1) for s in symbols):
                raise _error(f"'{item}': {m.group(1)} is declared twice")
            symbols.append(DimSymbol(m.group(1), low, high))
        elif m := _BINDING.match(item):
            bindings.append((m.group(1), int(m.group(2)), m.group(3).strip()))
        else:
            raise _error(f"'{item}' is neither NAME=MIN:MAX nor INPUT.DIM=NAME")
    if not symbols:
        raise _error(f"'{spec}' declares no symbol (NAME=MIN:MAX)")
    return symbols, bindings


def _names(fn: FuncOp) -> list[str]:
    """The inputs' names: ``ziggurat.input_names``, else the arguments' ``%names``."""
    if INPUT_NAMES_ATTR in fn.attributes:
        return input_names(fn)
    return [a.name_hint or f"arg{i}" for i, a in enumerate(fn.body.block.args)]


def declare(fn: FuncOp, spec: str) -> ShapeSymbols:
    """``spec``'s symbols bound to the ``?`` input dims of ``fn``."""
    return bind_dims(list(fn.function_type.inputs.data), _names(fn), spec,
                     [a.name_hint for a in fn.body.block.args])


def bind_dims(types: Sequence[Attribute], names: Sequence[str], spec: str,
              aliases: Sequence[str | None] = ()) -> ShapeSymbols:
    """``spec``'s symbols bound to the ``?`` dims of inputs of ``types`` named ``names`` (an
    input is referred to by its name, its ``aliases`` entry such as the argument's ``%name``,
    or its position)."""
    symbols, bindings = parse_ranges(spec)

    def index(ref: str) -> int:
        for table in (names, aliases):
            if ref in table:
                return list(table).index(ref)
        if ref.isdigit() and int(ref) < len(names):
            return int(ref)
        raise _error(f"there is no input '{ref}' (inputs: {', '.join(names)})")

    dynamic = [(i, d) for i, t in enumerate(types) if isinstance(t, TensorType)
               for d, n in enumerate(t.get_shape()) if n == DYNAMIC_INDEX]  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType, reportUnknownVariableType]
    bound: dict[tuple[int, int], str] = {}
    for ref, dim, expr in bindings:
        i = index(ref)
        if (i, dim) not in dynamic:
            raise _error(f"input {i} ('{names[i]}') dim {dim} is not a ? size of {types[i]}")
        try:
            evaluate(expr, {s.name: 2 for s in symbols})
        except ValueError as e:
            raise _error(f"{ref}.{dim}={expr}: {e}") from None
        bound[(i, dim)] = expr
    if not bindings:
        if len(symbols) == 1:
            bound = {key: symbols[0].name for key in dynamic}
        elif len(symbols) == len(dynamic):
            bound = {key: s.name for key, s in zip(dynamic, symbols, strict=True)}
        else:
            raise _error(f"{len(symbols)} symbols for {len(dynamic)} ? input dims: bind them with INPUT.DIM=NAME")
    missing = [key for key in dynamic if key not in bound]
    if missing:
        i, d = missing[0]
        raise _error(f"input {i} ('{names[i]}') dim {d} is ? but bound to no symbol")
    unused = [s.name for s in symbols if not any(re.search(rf"\b{s.name}\b", e) for e in bound.values())]
    if unused:
        raise _error(f"symbol '{unused[0]}' is bound to no input dim")
    dims = tuple(InputDim(i, names[i], d, bound[(i, d)]) for i, d in dynamic)
    plain = {d.expr for d in dims}
    for s in symbols:  # a derived dim needs its symbols solved from a dim that is the symbol alone
        if s.name not in plain:
            raise _error(f"symbol '{s.name}' appears only in expressions: bind one input dim to it alone")
    return ShapeSymbols(tuple(symbols), dims)


def declare_shape_symbols(module: ModuleOp, spec: str, function: str = "forward") -> ShapeSymbols:
    """Declare ``spec``'s symbols on ``function`` (the only function if there is one)."""
    fns = [f for f in module.ops if isinstance(f, FuncOp)]
    fn = next((f for f in fns if f.sym_name.data == function), fns[0] if len(fns) == 1 else None)
    if fn is None:
        raise _error(f"the module has no function @{function}")
    if SHAPE_SYMBOLS_ATTR in fn.attributes:
        raise _error(f"@{fn.sym_name.data} already declares its symbols ({SHAPE_SYMBOLS_ATTR})")
    symbols = declare(fn, spec)
    fn.attributes[SHAPE_SYMBOLS_ATTR] = StringAttr(symbols.to_json())
    return symbols
