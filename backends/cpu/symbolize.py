"""One loop level for every size in the ranges, from static lowerings at sampled sizes.

The CPU pipeline lowers a graph of static shapes.  A dynamic-shape compile lowers it at a
few points of the declared ranges (``backends/sampled_range.py`` picks them): the *template*,
one *variant* per symbol (that symbol moved), and check points.  ``symbolize`` compares them
op by op: they must have the same ops, the same dataflow and the same attributes, except
integers that are polynomials of the symbols (``c * batch + d``, fitted from the template
and the variants and confirmed at every check point; where that fails, ``batch * seq`` or
``seq * seq``, fitted on a grid: ``backends/cpu/size_poly.py``).  Those integers become
run-time sizes (``loop.offset`` of ``loop.dim`` values and their products), where the loop
level takes them:

* memref dims of graph inputs, of ``loop.alloc`` buffers and of kernel arguments become
  ``?`` (an input dim equal to a symbol is read by ``loop.dim`` with the symbol's range; a
  buffer is allocated with ``loop.alloc(%size)`` and planned at the top of the ranges);
* upper bounds of ``loop.for``, ``loop.vfor`` and ``loop.parallel`` become values the
  kernel takes (``sizes(...)``);
* coefficients and constants of ``loop.offset`` in a kernel (a stride that is a size: the
  index times the kernel's size), the lane step of ``loop.vindex`` (``times %size``) and the
  dimension an index is checked against (``loop.check_index ... bound(%size)``);
* a float constant that is a size (a mean's divisor) becomes the kernel's size converted
  (``loop.cast "sitofp"``), an index constant the size itself;
* the ``m`` and batch count of an f32 ``loop.gemm`` (``m_runtime``/``batch_runtime``), the ``m``
  of an int8 one (``Int8GemmSpec.m_runtime``: a convolution's batch times its pixels), and
  with a plain B and no bias or binary epilogue its ``n``, ``k``, leading dims and batch
  strides (``runtime``: attention over a dynamic sequence), and the batch count of an
  implicit-GEMM or depthwise convolution, become run-time sizes of the call (the spec keeps the largest,
  which the call is planned for).

Anything else that differs (a GEMM's offsets, or its ``n`` or ``k`` with a packed B or an
epilogue, a torch fallback's tensor type, a different op) declines with the first such difference: the caller then builds one
size at a time.  The template is rewritten in place into the symbolic level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DenseResourceAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.dialects import loop
from ziggurat.dialects.loop.loops import TASK_ELEMENTS_ATTR
from ziggurat.ir.signature import forward_function
from ziggurat.dialects.loop.syntax import int_values
from ziggurat.backends.cpu.kernels.gemm_spec import OTHER_FIELDS, RUNTIME_FIELDS
from ziggurat.backends.cpu.size_poly import SizePoly, fit_polys, grid_basis

#: where an integer sits in the loop level: (op index in walk order, what, position...)
Slot = tuple[int | str, ...]


class SymbolizeDeclined(Exception):
    """The sampled lowerings differ in a way the loop level cannot take as run-time sizes."""


@dataclass(frozen=True)
class SymbolRange:
    """A symbol and its declared range (both ends included)."""

    name: str
    low: int
    high: int


# -- comparing two lowerings -----------------------------------------------------------------------

def _same_resource(a: DenseResourceAttr, b: DenseResourceAttr) -> bool:
    if a.resource_handle == b.resource_handle:
        return True
    import torch

    from ziggurat.ir.literals import literal_tensor

    return torch.equal(literal_tensor(a), literal_tensor(b))


def _attr_diff(slot: Slot, a: Attribute, b: Attribute, out: dict[Slot, tuple[int, int]], where: str) -> None:
    if a == b:
        return
    if isinstance(a, IntegerAttr) and isinstance(b, IntegerAttr) and not (
            isinstance(a.type, IntegerType) and a.type.width.data == 1):
        out[slot] = (int(a.value.data), int(b.value.data))  # pyright: ignore[reportUnknownArgumentType]
        return
    if isinstance(a, FloatAttr) and isinstance(b, FloatAttr) and a.type == b.type \
            and all(_whole(float(x.value.data)) for x in (a, b)):  # pyright: ignore[reportUnknownArgumentType]
        # a size used as a number (a mean's divisor): a run-time size converted
        out[(*slot, "float")] = (int(a.value.data), int(b.value.data))  # pyright: ignore[reportUnknownArgumentType]
        return
    if isinstance(a, DenseArrayBase) and isinstance(b, DenseArrayBase) and len(a) == len(b) and a.elt_type == b.elt_type:
        for i, (x, y) in enumerate(zip(int_values(a), int_values(b), strict=True)):  # pyright: ignore[reportUnknownArgumentType]
            if x != y:
                out[(*slot, i)] = (x, y)
        return
    if (isinstance(a, MemRefType) and isinstance(b, MemRefType) and a.element_type == b.element_type
            and a.layout == b.layout and a.memory_space == b.memory_space and len(a.shape) == len(b.shape)):
        for i, (x, y) in enumerate(zip(a.get_shape(), b.get_shape(), strict=True)):
            if x != y:
                out[(*slot, i)] = (x, y)
        return
    if isinstance(a, DictionaryAttr) and isinstance(b, DictionaryAttr) and a.data.keys() == b.data.keys():
        for key in a.data:
            _attr_diff((*slot, key), a.data[key], b.data[key], out, f"{where}.{key}")
        return
    if isinstance(a, ArrayAttr) and isinstance(b, ArrayAttr) and len(a.data) == len(b.data):
        for i, (x, y) in enumerate(zip(a.data, b.data, strict=True)):  # pyright: ignore[reportUnknownArgumentType]
            _attr_diff((*slot, i), x, y, out, f"{where}[{i}]")  # pyright: ignore[reportUnknownArgumentType]
        return
    if isinstance(a, DenseResourceAttr) and isinstance(b, DenseResourceAttr) and _same_resource(a, b):
        return
    raise SymbolizeDeclined(f"{where} differs between sizes: {_short(a)} vs {_short(b)}")


def _whole(x: float) -> bool:
    """A float that holds an integer exactly (every size up to 2^24 does in f32)."""
    return x == x and abs(x) < 2 ** 24 and x.is_integer()


def _short(attr: Attribute) -> str:
    text = str(attr)
    return text if len(text) <= 80 else text[:77] + "..."


def _op_label(op: Operation) -> str:
    """``loop.kernel @fused_add_0``, or the op's name where it has no symbol."""
    name = op.properties.get("sym_name")
    return f"{op.name} @{name.data}" if isinstance(name, StringAttr) else op.name


def diff(template: ModuleOp, other: ModuleOp) -> dict[Slot, tuple[int, int]]:
    """The integers that differ between two lowerings of one graph (template value, other
    value), by slot; any other difference raises :class:`SymbolizeDeclined`."""
    t_ops = list(forward_function(template).walk())
    o_ops = list(forward_function(other).walk())
    out: dict[Slot, tuple[int, int]] = {}
    values: dict[SSAValue, SSAValue] = {}
    for k, (a, b) in enumerate(zip(t_ops, o_ops)):
        where = f"op #{k} ({_op_label(a)})"
        if a.name != b.name or len(a.operands) != len(b.operands) or len(a.results) != len(b.results) \
                or len(a.regions) != len(b.regions):
            raise SymbolizeDeclined(f"{where}: the lowerings differ in structure ({_op_label(a)} vs {_op_label(b)})")
        for x, y in zip(a.operands, b.operands, strict=True):
            if values.get(x) is not y:
                raise SymbolizeDeclined(f"{where}: the lowerings differ in dataflow")
        for i, (x, y) in enumerate(zip(a.results, b.results, strict=True)):
            _attr_diff((k, "result", i), x.type, y.type, out, f"{where} result {i}")
            values[x] = y
        for r, (ra, rb) in enumerate(zip(a.regions, b.regions, strict=True)):
            if len(ra.blocks) != len(rb.blocks):
                raise SymbolizeDeclined(f"{where}: the lowerings differ in structure (blocks)")
            for bi, (ba, bb) in enumerate(zip(ra.blocks, rb.blocks, strict=True)):
                if len(ba.args) != len(bb.args):
                    raise SymbolizeDeclined(f"{where}: the lowerings differ in structure (block arguments)")
                for ai, (x, y) in enumerate(zip(ba.args, bb.args, strict=True)):
                    _attr_diff((k, "arg", r, bi, ai), x.type, y.type, out, f"{where} argument {ai}")
                    values[x] = y
        if a.properties.keys() != b.properties.keys() or a.attributes.keys() != b.attributes.keys():
            raise SymbolizeDeclined(f"{where}: the lowerings differ in attributes")
        for key, pa in a.properties.items():
            if isinstance(a, func.FuncOp) and key == "function_type":
                continue  # follows from the arguments and the returned values
            _attr_diff((k, "prop", key), pa, b.properties[key], out, f"{where} {key}")
        for key, pa in a.attributes.items():
            if key == TASK_ELEMENTS_ATTR:
                continue  # a schedule hint (the thread choice), not semantics: the template's stands
            _attr_diff((k, "attr", key), pa, b.attributes[key], out, f"{where} {key}")
    if len(t_ops) != len(o_ops):
        raise SymbolizeDeclined(f"the lowerings have {len(t_ops)} and {len(o_ops)} ops")
    return out


# -- fitting ---------------------------------------------------------------------------------------

class _Samples:
    """The lowerings' integers by point: each point's differences from the template, made
    once per point (a lowering is dropped as soon as it is compared)."""

    def __init__(self, template: ModuleOp, at: Sequence[int], lower: Callable[[Sequence[int]], ModuleOp],
                 names: Sequence[str]) -> None:
        self.template, self.at, self.lower, self.names = template, list(at), lower, names
        self.found: dict[tuple[int, ...], dict[Slot, tuple[int, int]]] = {tuple(at): {}}
        self.base: dict[Slot, int] = {}  # each slot's value in the template

    def diff(self, point: Sequence[int]) -> dict[Slot, tuple[int, int]]:
        key = tuple(point)
        hit = self.found.get(key)
        if hit is None:
            hit = self.found[key] = _diff_at(self.template, self.lower(point), self.names, point)
            self.base.update({slot: t for slot, (t, _o) in hit.items()})
        return hit

    def value(self, slot: Slot, point: Sequence[int]) -> int:
        hit = self.found[tuple(point)].get(slot)
        return hit[1] if hit is not None else self.base[slot]


def _grid_sizes(at: Sequence[int], variants: Mapping[int, Sequence[int]], symbols: Sequence[SymbolRange],
                degree: int) -> list[list[int]]:
    """Per symbol, the sizes of the fitting grid: the template's, then steps down as the
    variant's (as far as the range goes), ``degree + 1`` in all; one size for a symbol
    without a variant."""
    out: list[list[int]] = []
    for s, (t, sym) in enumerate(zip(at, symbols, strict=True)):
        point = variants.get(s)
        if point is None:
            out.append([t])
            continue
        step = t - point[s]
        sizes = [t - i * step for i in range(degree + 1)]
        out.append([v for v in sizes if v >= sym.low] or [t])
    return out


def fit(template: ModuleOp, at: Sequence[int], lower: Callable[[Sequence[int]], ModuleOp],
        symbols: Sequence[SymbolRange], variants: Mapping[int, Sequence[int]],
        checks: Sequence[Sequence[int]]) -> dict[Slot, SizePoly]:
    """Each differing integer as a polynomial of the symbols, confirmed at every check point.

    First affine (``c * batch + d``): fitted from the template (lowered at ``at``) and, per
    symbol, its lowering at ``variants[s]`` (``at`` with that symbol moved; ``lower(point)``
    makes it).  Where that does not hold at the checks (a size ``batch * seq``, a stride
    ``seq * seq``) and there are at most two symbols, the lowerings on a grid of three sizes
    per symbol fit it with each symbol up to degree 2 (``backends/cpu/size_poly.py``).  Each
    lowering is compared as soon as it is made, and the check points before any fitting, so a
    graph whose structure changes (at small sizes) declines before the grid is lowered."""
    names = [s.name for s in symbols]
    samples = _Samples(template, at, lower, names)
    for point in [*variants.values(), *checks]:
        samples.diff(point)
    affine = _fit_grid(samples, _grid_sizes(at, variants, symbols, 1), linear=True)
    try:
        return _confirm(samples, affine, checks, names)
    except SymbolizeDeclined:
        if len(symbols) > 2 or not variants:
            raise
    return _confirm(samples, _fit_grid(samples, _grid_sizes(at, variants, symbols, 2), linear=False), checks, names)


def _fit_grid(samples: _Samples, sizes: Sequence[Sequence[int]], linear: bool) -> dict[Slot, SizePoly]:
    """Every slot seen so far fitted on the grid of ``sizes`` (``linear``: the template and
    one point per moved symbol, for the affine terms only)."""
    at = samples.at
    if linear:
        points = [list(at)] + [[v[1] if j == i else t for j, t in enumerate(at)]
                                for i, v in enumerate(sizes) if len(v) > 1]
        basis = [(0,) * len(at)] + [tuple(int(j == i) for j in range(len(at))) for i, v in enumerate(sizes) if len(v) > 1]
    else:
        points, basis = grid_basis(sizes)
    for point in points:
        samples.diff(point)
    slots = sorted({slot for found in samples.found.values() for slot in found}, key=str)
    polys = fit_polys(points, basis, [[samples.value(slot, p) for p in points] for slot in slots])
    table: dict[Slot, SizePoly] = {}
    for slot, poly in zip(slots, polys, strict=True):
        if poly is None:
            where = ", ".join(f"{samples.value(slot, p)} at {_point_text(samples.names, p)}" for p in points)
            raise SymbolizeDeclined(f"{_slot_text(samples.template, slot)} is {where}: not a polynomial of the "
                                    "sizes with whole coefficients")
        table[slot] = poly
    return table


def _confirm(samples: _Samples, table: Mapping[Slot, SizePoly], checks: Sequence[Sequence[int]],
             names: Sequence[str]) -> dict[Slot, SizePoly]:
    """``table`` if it gives every slot's value at every point lowered and at ``checks``."""
    at = samples.at
    for point in [*checks, *[list(p) for p in samples.found]]:
        found = samples.diff(point)
        for slot in found.keys() | table.keys():
            if slot not in table:
                raise SymbolizeDeclined(f"{_slot_text(samples.template, slot)} is {found[slot][0]} at "
                                        f"{_point_text(names, at)} and {found[slot][1]} at "
                                        f"{_point_text(names, point)}, but the same at the sizes it was fitted at")
            want = table[slot].at(point)
            got = samples.value(slot, point)
            if got != want:
                raise SymbolizeDeclined(f"{_slot_text(samples.template, slot)} is {got} at {_point_text(names, point)}, "
                                        f"not {table[slot].text(names)} = {want}")
    return dict(table)


def _diff_at(template: ModuleOp, other: ModuleOp, names: Sequence[str], point: Sequence[int]) -> dict[Slot, tuple[int, int]]:
    try:
        return diff(template, other)
    except SymbolizeDeclined as e:
        raise SymbolizeDeclined(f"at {_point_text(names, point)}: {e}") from None


def _point_text(names: Sequence[str], point: Sequence[int]) -> str:
    return ", ".join(f"{n}={v}" for n, v in zip(names, point, strict=True))


def _slot_text(module: ModuleOp, slot: Slot) -> str:
    ops = list(forward_function(module).walk())
    k = slot[0]
    op = ops[k] if isinstance(k, int) and k < len(ops) else None
    return f"op #{k} ({_op_label(op) if op is not None else '?'}) {' '.join(str(p) for p in slot[1:])}"


# -- rewriting the template ------------------------------------------------------------------------

def _dynamic_memref(ty: Attribute, dims: Sequence[int]) -> MemRefType:
    assert isinstance(ty, MemRefType)
    shape = [DYNAMIC_INDEX if i in dims else d for i, d in enumerate(ty.get_shape())]
    return MemRefType(ty.element_type, shape, ty.layout, ty.memory_space)  # pyright: ignore[reportUnknownArgumentType]


class _Builder:
    """Rewrites the template into the symbolic level (see the module doc)."""

    def __init__(self, module: ModuleOp, table: Mapping[Slot, SizePoly], symbols: Sequence[SymbolRange]) -> None:
        self.fn = forward_function(module)
        self.ops = list(self.fn.walk())
        self.table = table
        self.symbols = symbols
        self.by_op: dict[int, list[tuple[Slot, SizePoly]]] = {}
        for slot, aff in table.items():
            k = slot[0]
            assert isinstance(k, int)
            self.by_op.setdefault(k, []).append((slot, aff))
        self.sizes: dict[SizePoly, SSAValue] = {}
        self.head: list[Operation] = []
        #: each symbol's loop.dim (an input dim equal to it)
        self._sources: dict[int, SSAValue] = {}

    def run(self) -> None:
        for k, slots in self.by_op.items():
            op = self.ops[k]
            allowed = {func.FuncOp: "arg", loop.AllocOp: "result", loop.KernelOp: "arg",
                       loop.ForOp: "prop", loop.VForOp: "prop", loop.ParallelOp: "prop", loop.GemmOp: "prop"}
            kind = allowed.get(type(op))  # pyright: ignore[reportArgumentType]
            for slot, _aff in slots:
                if isinstance(op, loop.GemmOp):
                    kernel = op.spec.data.get("kernel")
                    field_ = _gemm_field(slot)
                    if "int8_kernel" in op.spec.data:  # its rows (a batch, a sequence: Int8GemmSpec.m_runtime)
                        ok = slot[1:3] == ("prop", "spec") and field_ == "m"
                    else:
                        ok = slot[1:3] == ("prop", "spec") and field_ is not None and "bf16_kernel" not in op.spec.data and (
                            field_ in ("m", "batch", *RUNTIME_FIELDS) if kernel is None
                            else slot[3] == "batch" and getattr(kernel, "data", None) in ("igemm", "depthwise"))
                elif isinstance(op, arith.ConstantOp):
                    ok = _in_kernel(op) and (slot[1:] == ("prop", "value", "float") or (
                        slot[1:] == ("prop", "value") and isinstance(op.result.type, IndexType | IntegerType)))
                elif isinstance(op, loop.OffsetOp):
                    ok = slot[1:3] in (("prop", "coeffs"), ("prop", "constant")) and _in_kernel(op)
                elif isinstance(op, loop.VIndexOp):
                    ok = slot[1:] == ("prop", "step") and op.scale is None and _in_kernel(op)
                elif isinstance(op, loop.CheckIndexOp):
                    ok = slot[1:] == ("prop", "size") and op.bound is None and _in_kernel(op)
                else:
                    ok = kind is not None and slot[1] == kind and (kind != "prop" or slot[2] in ("upper", "upper_bounds"))
                if not ok:
                    raise SymbolizeDeclined(f"{_op_label(op)} {' '.join(str(p) for p in slot[1:])} depends on the "
                                            "sizes where the loop level takes no run-time value")
        self._inputs()
        self._allocs()
        self._kernels()
        self._gemms()
        block = self.fn.body.block
        first = block.first_op
        for op in self.head:
            if first is None:
                block.add_op(op)
            else:
                block.insert_op_before(op, first)
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.fn.function_type = FunctionType.from_lists(
            [a.type for a in block.args], [v.type for v in ret.arguments])

    def _dims(self, k: int, prefix: Slot) -> dict[int, SizePoly]:
        """The symbolized dims of the type at ``prefix`` of op ``k``: dim -> size."""
        return {int(slot[-1]): aff for slot, aff in self.by_op.get(k, []) if slot[1:-1] == prefix}

    def _inputs(self) -> None:
        block = self.fn.body.block
        others: list[tuple[SSAValue, int, SizePoly]] = []
        for i, arg in enumerate(list(block.args)):
            dims = self._dims(0, ("arg", 0, 0, i))
            if not dims:
                continue
            new = Rewriter.replace_value_with_new_type(arg, _dynamic_memref(arg.type, list(dims)))
            for d, aff in dims.items():
                unit = aff.unit_symbol
                if unit is not None and unit not in self._sources:
                    sym = self.symbols[unit]
                    dim = loop.DimOp(new, d, sym.low, sym.high)
                    dim.result.name_hint = sym.name
                    self.head.append(dim)
                    self._sources[unit] = dim.result
                else:
                    others.append((new, d, aff))
        self.sizes.update({SizePoly.symbol(s, len(self.symbols)): v for s, v in self._sources.items()})
        # every other ? input dim is checked at each call to be its size (another input's dim
        # declared equal, or derived: 2*batch), as the dynamic module checks before calling
        for source, d, aff in others:
            low, high = self._bounds(aff)
            dim = loop.DimOp(source, d, low, high, expected=self.size(aff))
            self.head.append(dim)

    def size(self, aff: SizePoly) -> SSAValue:
        """The function-level value of a size: ``loop.offset`` of its monomials, each a symbol's
        ``loop.dim`` or a product of them (``arith.muli``)."""
        hit = self.sizes.get(aff)
        if hit is not None:
            return hit
        terms: list[tuple[SSAValue | Operation, int]] = []
        for exps, coeff in aff.monomials:
            terms.append((self._monomial(exps), coeff))
        if len(terms) == 1 and terms[0][1] == 1 and aff.const == 0:
            value = terms[0][0]
            assert isinstance(value, SSAValue)
            self.sizes[aff] = value
            return value
        op = loop.OffsetOp(terms, aff.const)
        op.result.name_hint = "size"
        self.head.append(op)
        self.sizes[aff] = op.result
        return op.result

    def _monomial(self, exps: Sequence[int]) -> SSAValue:
        """``prod(symbol_i ** e_i)`` at the function level."""
        key = SizePoly.of({tuple(exps): 1}, len(self.symbols))
        hit = self.sizes.get(key)
        if hit is not None:
            return hit
        factors: list[SSAValue] = []
        for s, e in enumerate(exps):
            if not e:
                continue
            source = self._sources.get(s)
            if source is None:
                raise SymbolizeDeclined(f"no graph input has a dim equal to '{self.symbols[s].name}' to read it from")
            factors += [source] * e
        value = factors[0]
        for f in factors[1:]:
            product = arith.MuliOp(value, f)
            product.result.name_hint = "size"
            self.head.append(product)
            value = product.result
        self.sizes[key] = value
        return value

    def _bounds(self, aff: SizePoly) -> tuple[int, int]:
        return aff.bounds([s.low for s in self.symbols], [s.high for s in self.symbols])

    def _allocs(self) -> None:
        for k, op in enumerate(self.ops):
            if not isinstance(op, loop.AllocOp) or k not in self.by_op:
                continue
            dims = self._dims(k, ("result", 0))
            ty = _dynamic_memref(op.result.type, list(dims))
            new = loop.AllocOp(ty, op.arena_offset, [self.size(dims[d]) for d in sorted(dims)])
            new.attributes.update(op.attributes)
            Rewriter.replace_op(op, new)

    def _kernels(self) -> None:
        within: dict[int, list[int]] = {}  # kernel op id -> the slot ops inside it, in walk order
        for j in sorted(self.by_op):
            kernel = _enclosing_kernel(self.ops[j])
            if kernel is not None:
                within.setdefault(id(kernel), []).append(j)
        for k, op in enumerate(self.ops):
            if not isinstance(op, loop.KernelOp):
                continue
            inside = [(j, self.ops[j]) for j in within.get(id(op), [])]
            own = k in self.by_op
            if not own and not inside:
                continue
            if op.sizes:
                raise SymbolizeDeclined(f"{_op_label(op)} already takes run-time sizes")
            block = op.body.block
            if own:
                for i, arg in enumerate(list(block.args)):
                    dims = self._dims(k, ("arg", 0, 0, i))
                    if dims:
                        Rewriter.replace_value_with_new_type(arg, _dynamic_memref(arg.type, list(dims)))
            needed: list[SizePoly] = []
            for j, _inner in inside:
                for _slot, aff in self.by_op[j]:
                    if aff not in needed:
                        needed.append(aff)
            args = {aff: block.insert_arg(IndexType(), len(block.args)) for aff in needed}
            for aff, arg in args.items():
                arg.name_hint = self._name(aff)
            for j, inner in inside:
                self._rebound(j, inner, args)
            body = op.detach_region(op.body)
            new = loop.KernelOp(op.kernel_name, list(op.ins), list(op.outs), isa=op.isa.data,
                                vector_width=op.width, vectorized=op.is_vectorized,
                                origins=op.origins.data if op.origins is not None else "", body=body,
                                sizes=[self.size(aff) for aff in needed])
            new.attributes.update(op.attributes)
            Rewriter.replace_op(op, new)

    def _largest(self, aff: SizePoly) -> int:
        return self._bounds(aff)[1]

    def _gemms(self) -> None:
        """A GEMM whose ``m`` or batch count follows the sizes takes it at run time, and so do
        ``n``, ``k``, its leading dims and batch strides (attention over a dynamic sequence),
        where the spec allows (``GemmSpec.runtime``: a plain B, no bias or binary epilogue)."""
        for k, op in enumerate(self.ops):
            if not isinstance(op, loop.GemmOp) or k not in self.by_op:
                continue
            fields = {str(_gemm_field(slot)): aff for slot, aff in self.by_op[k]}
            spec = dict(op.spec.data)
            others = [f for f in RUNTIME_FIELDS if f in fields]
            plain = _flag(spec, "b_packed", True) is False and op.bias is None and op.other is None \
                and "kernel" not in spec
            if any(f not in OTHER_FIELDS for f in others) and not plain:
                raise SymbolizeDeclined(f"{_op_label(op)}: {' and '.join(others)} follow the sizes; a GEMM takes them "
                                        "at run time only with a B that is not prepacked and no bias or binary epilogue")
            batch = spec.get("batch")
            batched = "batch" in fields or (isinstance(batch, IntegerAttr) and int(batch.value.data) > 1)
            if "m" in fields and batched and not {"batch_stride_a", "batch_stride_c"} <= spec.keys():
                raise SymbolizeDeclined(f"{_op_label(op)}: m follows the sizes and the batch strides are not given")
            sizes: list[SSAValue] = []
            for name in ("m", "batch"):
                if name in fields:
                    spec[name] = IntegerAttr(self._largest(fields[name]), i64)
                    spec[f"{name}_runtime"] = IntegerAttr(1, IntegerType(1))
                    sizes.append(self.size(fields[name]))
            strides = spec.get("other_strides")
            for name in others:
                top = IntegerAttr(self._largest(fields[name]), i64)
                if name in ("other_row_stride", "other_col_stride") and isinstance(strides, ArrayAttr):
                    items = list(strides.data)  # pyright: ignore[reportUnknownArgumentType]
                    items[0 if name == "other_row_stride" else 1] = top
                    strides = ArrayAttr(items)  # pyright: ignore[reportUnknownArgumentType]
                    spec["other_strides"] = strides
                else:
                    spec[name] = top
                sizes.append(self.size(fields[name]))
            if others:
                spec["runtime"] = ArrayAttr([StringAttr(f) for f in others])
            new = loop.GemmOp(op.gemm_name, op.a, op.b, op.c, op.bias, op.other, spec, sizes)
            new.attributes.update(op.attributes)
            Rewriter.replace_op(op, new)

    def _name(self, aff: SizePoly) -> str:
        """``batch`` for a symbol itself, ``size`` for an expression of symbols."""
        unit = aff.unit_symbol
        if unit is not None:
            return self.symbols[unit].name
        return "size"

    def _rebound(self, k: int, op: Operation, args: Mapping[SizePoly, SSAValue]) -> None:
        """A loop with run-time upper bounds (the kernel's size arguments)."""
        slots = dict(self.by_op[k])
        if isinstance(op, loop.OffsetOp):
            terms: list[tuple[SSAValue | Operation, int]] = []
            for i, (value, coeff) in enumerate(zip(op.indices, op.coefficients, strict=True)):
                aff = slots.get((k, "prop", "coeffs", i))
                if aff is None:
                    terms.append((value, coeff))
                else:  # a stride that is a size: the index times it
                    product = arith.MuliOp(value, args[aff])
                    Rewriter.insert_op(product, InsertPoint.before(op))
                    terms.append((product.result, 1))
            const = slots.get((k, "prop", "constant"))
            if const is not None:
                terms.append((args[const], 1))
            new = loop.OffsetOp(terms, 0 if const is not None else op.const)
            new.result.name_hint = op.result.name_hint
            Rewriter.replace_op(op, new)
            return
        if isinstance(op, arith.ConstantOp):
            aff = slots.get((k, "prop", "value"))
            if aff is not None and isinstance(op.result.type, IndexType):  # a size (a bound): the size itself
                Rewriter.replace_op(op, [], [args[aff]])
                return
            if aff is not None:  # the same as an integer
                cast = arith.IndexCastOp(args[aff], op.result.type)
                Rewriter.replace_op(op, cast)
                return
            aff = slots[(k, "prop", "value", "float")]
            new = loop.CastOp("sitofp", args[aff], op.result.type)
            new.result.name_hint = op.result.name_hint
            Rewriter.replace_op(op, new)
            return
        if isinstance(op, loop.VIndexOp):  # lanes a size apart (a transposing read)
            new_index = loop.VIndexOp(op.base, 1, op.result.type.get_shape()[0], scale=args[slots[(k, "prop", "step")]])
            new_index.result.name_hint = op.result.name_hint
            Rewriter.replace_op(op, new_index)
            return
        if isinstance(op, loop.CheckIndexOp):  # an index checked against a dimension that is a size
            check = loop.CheckIndexOp(op.value, 0, int(op.site.value.data), op.lanes,
                                      bound=args[slots[(k, "prop", "size")]])
            check.result.name_hint = op.result.name_hint
            Rewriter.replace_op(op, check)
            return
        if isinstance(op, loop.ForOp | loop.VForOp):
            aff = slots.get((k, "prop", "upper"))
            if aff is None or len(slots) != 1:
                raise SymbolizeDeclined(f"{op.name}: only its upper bound may depend on the sizes")
            body = op.detach_region(op.body)
            new = type(op)(op.lb, args[aff], op.stride, list(op.inits), body)
        elif isinstance(op, loop.ParallelOp):
            bounds: list[int | SSAValue] = []
            for i, b in enumerate(op.static_bounds):
                aff = slots.get((k, "prop", "upper_bounds", i))
                bounds.append(b if aff is None else args[aff])
            body = op.detach_region(op.body)
            new = loop.ParallelOp(bounds, body)
        else:
            raise SymbolizeDeclined(f"{op.name} depends on the sizes")
        new.attributes.update(op.attributes)
        Rewriter.replace_op(op, new)


def _gemm_field(slot: Slot) -> str | None:
    """The ``GemmSpec`` field a slot of a ``loop.gemm`` spec is: ``m``, ``other_col_stride``..."""
    if len(slot) == 4:
        return str(slot[3])
    if len(slot) == 5 and slot[3] == "other_strides" and slot[4] in (0, 1):
        return "other_row_stride" if slot[4] == 0 else "other_col_stride"
    return None


def _flag(spec: Mapping[str, Attribute], name: str, default: bool) -> bool:
    value = spec.get(name)
    return bool(value.value.data) if isinstance(value, IntegerAttr) else default  # pyright: ignore[reportUnknownArgumentType]


def _enclosing_kernel(op: Operation) -> loop.KernelOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, loop.KernelOp):
        parent = parent.parent_op()
    return parent


def _in_kernel(op: Operation) -> bool:
    return _enclosing_kernel(op) is not None


def symbolize(template: ModuleOp, at: Sequence[int], lower: Callable[[Sequence[int]], ModuleOp],
              symbols: Sequence[SymbolRange], variants: Mapping[int, Sequence[int]],
              checks: Sequence[Sequence[int]]) -> dict[Slot, SizePoly]:
    """Rewrite ``template`` (the lowering at the sizes ``at``) into one loop level for every
    size in the ranges, from the lowerings ``lower`` makes at the variants and at ``checks``;
    returns the fitted sizes.  Raises :class:`SymbolizeDeclined`."""
    table = fit(template, at, lower, symbols, variants, checks)
    _Builder(template, table, symbols).run()
    template.verify()
    return table


__all__ = ["SymbolRange", "SymbolizeDeclined", "diff", "fit", "symbolize"]
