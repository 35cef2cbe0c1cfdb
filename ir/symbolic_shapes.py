"""The symbolic sizes of every value of a dynamic-shape ``torch`` level, and the check that
its ops hold over the whole declared range.

A dynamic-shape compile's ``torch`` level types a declared dim as ``?``
(``tensor<?x5x3xf32>``) and lists the symbols, their ranges and the input dims bound to them
on the function (``ziggurat.shape_symbols``).  :func:`infer_symbolic_shapes` runs the
function with the reference semantics (every op through torch) on *fake* tensors whose
declared dims are symbols (torch's ``ShapeEnv``, as Dynamo and torch.export use), so each
value gets its size expressions: ``batch x 15``, ``2*batch x 4``, a run-time scalar
``batch``.  The run is also a verifier of relations:

* an op whose declared type has a static size where the run computes an expression (a size
  baked in for one batch) is an error naming the op, as is an op that needs a condition on
  the symbols (``batch == 7``, ``seq > 5``) which the declared ranges do not imply;
* a size that depends on the data (``nonzero``) is a symbol of its own, ``u0``, as torch
  names the sizes known only at run time; an op torch cannot run on fake tensors ends the
  analysis there (``incomplete`` says where and why), the values after it have no expression.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.locations import op_location
from ziggurat.ir.shape_symbols import SHAPE_SYMBOLS_ATTR, DimSymbol, ShapeSymbols, evaluate
from ziggurat.ir.signature import enclosing_function, forward_function
from ziggurat.ir.types import dtype_of

#: hints the symbols take in the symbolic run (a value in the range, distinct per symbol, not 0
#: or 1, which torch specializes): sizes no model is likely to bake in by chance
_HINTS = (17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


class SymbolicShapeError(ZigguratError):
    """An op of a dynamic-shape level that does not hold over the declared ranges."""


@dataclass
class SymbolicShapes:
    """Size expressions per value (tensor: one per dim; a run-time integer: one)."""

    symbols: ShapeSymbols
    sizes: dict[SSAValue, tuple[str, ...]] = field(default_factory=dict)
    scalars: dict[SSAValue, str] = field(default_factory=dict)
    #: where and why the analysis stopped early (a data-dependent size), or None
    incomplete: str | None = None

    def text(self, value: SSAValue) -> str | None:
        """``batch x 5 x 3`` for a tensor, ``batch`` for a size scalar, None if unknown."""
        if value in self.sizes:
            return " x ".join(self.sizes[value]) if self.sizes[value] else "scalar"
        return self.scalars.get(value)


def entry_function(module: ModuleOp, func_name: str) -> FuncOp:
    try:
        return forward_function(module, func_name)
    except KeyError:
        raise ZigguratError(f"the module has no function @{func_name}", op="symbolic-shapes") from None


def declared_symbols(fn: FuncOp) -> ShapeSymbols | None:
    attr = fn.attributes.get(SHAPE_SYMBOLS_ATTR)
    if not isinstance(attr, StringAttr):
        return None
    try:
        return ShapeSymbols.from_json(attr.data)
    except ValueError as e:
        raise ZigguratError(f"@{fn.sym_name.data}: {SHAPE_SYMBOLS_ATTR}: {e}", op="symbolic-shapes") from None


def symbol_hints(symbols: Sequence[DimSymbol]) -> dict[str, int]:
    """A value for each symbol inside its range, distinct from the others and from 0 and 1."""
    used: set[int] = set()
    hints: dict[str, int] = {}
    for s in symbols:
        low, high = max(s.low, 2), s.high if s.high is not None else 1 << 62
        pick = next((h for h in _HINTS if low <= h <= high and h not in used), None)
        if pick is None:
            pick = next((v for v in range(low, min(high, low + 64) + 1) if v not in used), low)
        used.add(pick)
        hints[s.name] = pick
    return hints


def _range_points(symbols: Sequence[DimSymbol]) -> list[dict[str, int]]:
    """The points the analysis runs at: the hints, and each range's low and high ends (kept
    distinct between symbols: equal sizes would read as a relation)."""
    points = [symbol_hints(symbols)]
    for end in ("low", "high"):
        used: set[int] = set()
        point: dict[str, int] = {}
        for s in symbols:
            low, high = max(s.low, 2), max(s.high if s.high is not None else 1 << 20, 2)
            order = range(low, high + 1) if end == "low" else range(high, low - 1, -1)
            value = next((v for v in order if v not in used and v not in _HINTS), None)
            if value is None:
                return points
            used.add(value)
            point[s.name] = value
        if point not in points:
            points.append(point)
    return points


class _Run:
    """The fake-tensor run: the shape environment, the symbols and what each op gave."""

    def __init__(self, fn: FuncOp, symbols: ShapeSymbols, hints: dict[str, int]) -> None:
        from torch._dynamo.source import ConstantSource
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

        self.fn = fn
        self.result = SymbolicShapes(symbols)
        self.env = ShapeEnv()
        self.mode = FakeTensorMode(shape_env=self.env, allow_non_fake_inputs=True)
        self.values: dict[str, Any] = {}
        self.names: dict[Any, sympy.Symbol] = {}  # torch's symbol -> the declared name
        self.hints = hints
        #: the conditions on the symbols each op needed at these sizes
        self.conditions: dict[Operation, list[str]] = {}
        for s in symbols.symbols:
            hint = hints[s.name]
            sym = self.env.create_symbol(hint, ConstantSource(s.name), dynamic_dim=DimDynamic.DYNAMIC)
            high = s.high if s.high is not None else 1 << 62
            # sizes 0 and 1 are torch's special cases: the run stays at 2 and above
            self.env.constrain_symbol_range(sym, max(s.low, 2), max(high, 2))
            self.values[s.name] = self.env.create_symintnode(sym, hint=hint)
            self.names[sym] = sympy.Symbol(s.name, integer=True, positive=True)
        self.guards = 0
        #: symbols a condition fixed to this run's range end (``_pinned_at_range_end``)
        self.pinned: set[str] = set()

    def _pinned_at_range_end(self, name: str, fixed: int) -> bool:
        """A run at a range's end fixes a symbol to that end when an op needs a condition that,
        with the range, leaves one size (conv's ``batch >= 16`` at batch's maximum 16): not a
        baked size, which the run inside the ranges finds."""
        s = self.result.symbols.symbol(name)
        return fixed == self.hints[name] and fixed in (max(s.low, 2), s.high)

    def named(self, text: str) -> str:
        """``text`` with torch's symbol names (``s26``) replaced by the declared ones."""
        for sym, name in self.names.items():
            text = re.sub(rf"\b{re.escape(str(sym))}\b", str(name), text)
        return text

    def size_text(self, size: Any) -> str:
        if isinstance(size, torch.SymInt):
            expr = self.env.simplify(size.node.expr)
            return str(expr.xreplace(self.names))
        return str(int(size))

    def inputs(self) -> list[Any]:
        symbols = self.result.symbols
        out: list[Any] = []
        for i, ty in enumerate(self.fn.function_type.inputs.data):
            if not isinstance(ty, TensorType):
                raise ZigguratError(f"input {i} of @{self.fn.sym_name.data} is {ty}: the symbolic run takes "
                                    "tensor inputs only", op="symbolic-shapes")
            shape: list[Any] = []
            for d, n in enumerate(ty.get_shape()):  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
                bound = next((b for b in symbols.dims if b.input == i and b.dim == d), None)
                if bound is not None:
                    shape.append(evaluate(bound.expr, self.values))
                elif n < 0:
                    raise ZigguratError(f"input {i} of @{self.fn.sym_name.data} has a ? at dim {d} bound to no "
                                        f"symbol of {SHAPE_SYMBOLS_ATTR}", op="symbolic-shapes")
                else:
                    shape.append(int(n))  # pyright: ignore[reportUnknownArgumentType]
            with self.mode:
                out.append(torch.empty(shape, dtype=dtype_of(ty)))
        return out

    def record(self, op: Operation, results: Sequence[Any]) -> None:
        """After ``op``: its values' expressions, and the conditions it needed."""
        self._check_conditions(op)
        for res, value in zip(op.results, results, strict=False):
            if isinstance(value, torch.Tensor):
                self.result.sizes[res] = tuple(self.size_text(n) for n in value.shape)
            elif isinstance(value, torch.SymInt):
                self.result.scalars[res] = self.size_text(value)

    def _check_conditions(self, op: Operation) -> None:
        for sym, name in self.names.items():
            fixed = self.env.replacements.get(sym)
            if fixed is None or not fixed.is_number:
                continue
            if self._pinned_at_range_end(str(name), int(fixed)):
                self.pinned.add(str(name))
            else:
                raise SymbolicShapeError(
                    f"holds only for {name} = {fixed}: a size of this op is baked in, while "
                    f"{name} ranges over {self.result.symbols.symbol(str(name)).range_text()}",
                    op=op.name, location=op_location(op))
        guards = self.env.guards
        if len(guards) > self.guards:
            self.conditions[op] = [str(g.expr.xreplace(self.names)) for g in guards[self.guards:]]
            self.guards = len(guards)


def _data_dependent(e: BaseException) -> str | None:
    """The reason when ``e`` (or its cause) is torch saying the sizes depend on the data."""
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, (DataDependentOutputException, DynamicOutputShapeException, GuardOnDataDependentSymNode)):
            return f"{type(seen).__name__}: {str(seen).strip().splitlines()[0] if str(seen).strip() else ''}"
        seen = seen.__cause__ or seen.__context__
    return None


def _run_at(module: ModuleOp, fn: FuncOp, symbols: ShapeSymbols, hints: dict[str, int]) -> _Run:
    """One fake-tensor run of ``fn`` with the symbols' hints at ``hints``."""
    from torch._dispatch.python import enable_python_dispatcher

    from ziggurat.ir.interpreter import run

    state = _Run(fn, symbols, hints)
    current: list[Operation] = []

    class Listener:
        def will_interpret_op(self, op: Operation, args: Any) -> None:
            current[:] = [op]

        def did_interpret_op(self, op: Operation, results: Any) -> None:
            state.record(op, list(results) if results is not None else [])

    inputs = state.inputs()
    for arg, value in zip(fn.body.block.args, inputs, strict=True):
        state.result.sizes[arg] = tuple(state.size_text(n) for n in value.shape)
    try:
        # the Python dispatcher runs composite ops through their Python decompositions and meta
        # kernels, which keep sizes symbolic (the C++ ones read concrete sizes: a pad would
        # specialize its input's symbols), as Dynamo and torch.export run them
        with state.mode, enable_python_dispatcher(), torch.no_grad():
            run(module, inputs, fn.sym_name.data, listeners=[Listener()])  # pyright: ignore[reportArgumentType]
    except SymbolicShapeError:
        raise
    except Exception as e:  # noqa: BLE001 - sorted below: data-dependent sizes end the analysis
        reason = _data_dependent(e)
        if reason is None and isinstance(e, ZigguratError):
            raise SymbolicShapeError(state.named(e.message), op=e.op, schema=e.schema, location=e.location) from None
        where = f"{current[0].name} ({op_location(current[0]) or 'no location'})" if current else "the inputs"
        state.result.incomplete = f"at {where}: {reason or f'{type(e).__name__}: {str(e).strip()[:200]}'}"
    return state


def _same_at(inner: tuple[str, ...] | None, end: tuple[str, ...] | None, point: dict[str, int],
             pinned: set[str]) -> bool:
    """Whether a run at a range's end that pinned symbols (``pinned``) to the end gave the
    sizes of the inner run's expressions there: its sizes show numbers for those symbols."""
    if not pinned or inner is None or end is None or len(inner) != len(end):
        return False
    for x, y in zip(inner, end, strict=True):
        if x == y:
            continue
        try:
            if not y.lstrip("-").isdigit() or evaluate(x, point) != int(y):
                return False
        except ValueError:
            return False
    return True


def _point_text(point: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items())


def infer_symbolic_shapes(module: ModuleOp, func_name: str = "forward") -> SymbolicShapes:
    """The size expressions of every value of ``func_name`` (see the module docstring); a
    ``SymbolicShapeError`` names an op that does not hold over the declared ranges.

    The function runs at a point inside the ranges and at their ends.  A run needs conditions
    on the symbols wherever torch branches on a size (a slice's start past the end, a kernel
    choosing a memory format by batch size); the expressions hold over the ranges when every
    run gives the same ones, and an op whose expressions differ between the runs depends on
    such a condition: it is an error, with the conditions."""
    fn = entry_function(module, func_name)
    symbols = declared_symbols(fn)
    if symbols is None:
        raise ZigguratError(f"@{func_name} declares no symbols ({SHAPE_SYMBOLS_ATTR}): its sizes are static",
                            op="symbolic-shapes")
    points = _range_points(symbols.symbols)
    first = _run_at(module, fn, symbols, points[0])
    for point in points[1:]:
        other = _run_at(module, fn, symbols, point)
        for op in fn.body.walk():
            for res in op.results:
                a, b = first.result.text(res), other.result.text(res)
                if a is not None and b is not None and a != b and not _same_at(
                        first.result.sizes.get(res), other.result.sizes.get(res), point, other.pinned):
                    needs = first.conditions.get(op) or other.conditions.get(op) or []
                    because = f" (it needs {' and '.join(needs)})" if needs else ""
                    raise SymbolicShapeError(
                        f"does not hold over the declared ranges: its sizes are {a} at {_point_text(points[0])} "
                        f"but {b} at {_point_text(point)}{because}; "
                        f"the ranges: {'; '.join(symbols.describe())}", op=op.name, location=op_location(op))
    return first.result


class SizesOnDemand:
    """Size expressions of values for a rewrite in progress: the analysis of a value's
    function, run again when a value made since is asked for (a pass that fuses ops makes
    new values); None for a value of a function without symbols, or one the analysis cannot
    follow."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self._cache: dict[str, SymbolicShapes | None] = {}

    def sizes(self, value: SSAValue) -> tuple[str, ...] | None:
        owner = value.owner
        at = owner if isinstance(owner, Operation) else owner.parent_op()  # an op, or a block's op
        op = enclosing_function(at) if at is not None else None
        if op is None or declared_symbols(op) is None:
            return None
        name = op.sym_name.data
        known = self._cache.get(name)
        if known is None or value not in known.sizes:
            try:
                known = infer_symbolic_shapes(self.module, name)
            except ZigguratError:
                known = None
            self._cache[name] = known
        return known.sizes.get(value) if known is not None else None

    def broadcasts_to(self, other: SSAValue, target: SSAValue) -> bool:
        """Whether ``other`` broadcasts to ``target``'s sizes over the whole ranges (each dim
        the same expression, or 1)."""
        a, b = self.sizes(other), self.sizes(target)
        if a is None or b is None or len(a) > len(b):
            return False
        return all(x == y or x == "1" for x, y in zip(reversed(a), reversed(b), strict=False))
