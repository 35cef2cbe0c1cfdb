"""The ops of ``@forward`` at the loop level: buffers, kernels, GEMM calls, torch fallbacks.

* ``%b = loop.alloc : memref<4x16xf32>`` - an intermediate buffer; after memory planning
  it carries its place in the arena: ``loop.alloc offset 4096 : ...``.  A buffer with
  run-time dims takes their sizes: ``loop.alloc(%n) : memref<?x16xf32>`` (planned at the
  largest size their ranges allow).
* ``%n = loop.dim %x[0] in [1, 64] : memref<?x16xf32>`` - a run-time size: dim 0 of the graph
  input ``%x``, which the call's checks keep in the range.
* ``%w = loop.constant dense_resource<fc.weight> : tensor<10x16xf32> -> memref<10x16xf32>``
  - a weight (passed to native code by pointer, never copied into the IR).
* ``loop.kernel @fused_add_relu_0 ins(%x, %y : ...) outs(%b : ...) {isa = "avx512", ...} {...}``
  - one kernel: a region isolated from above whose block arguments are the buffers it
  reads (``ins``) and writes (``outs``), then the run-time sizes it uses (``sizes(%n)``);
  the body is loops, loads/stores and arithmetic.
* ``loop.gemm @gemm_linear_1 a(%x : ...) b(%w : ...) c(%b : ...) bias(%bias : ...) spec {...}``
  - a call of the GEMM kernel library with its static description (a ``GemmSpec`` plus
  element offsets of the operands in their buffers).
* ``%t = loop.to_tensor %b : memref<...> to tensor<...>`` and ``%b = loop.to_buffer %t : ...``
  - the boundary of a torch op that runs through torch (fallback) between native segments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    BoolAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class AllocOp(IRDLOperation):
    """``%b = loop.alloc : memref<4x16xf32>`` (``offset N`` once planned into the arena)."""

    name = "loop.alloc"

    dynamic_sizes = var_operand_def(IndexType)
    offset = opt_prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)

    assembly_format = "(`(` $dynamic_sizes^ `)`)? (`offset` $offset^)? attr-dict `:` type($result)"

    def __init__(self, memref_type: MemRefType, offset: int | None = None,
                 dynamic_sizes: Sequence[SSAValue | Operation] = ()) -> None:
        props: dict[str, Attribute] = {}
        if offset is not None:
            props["offset"] = IntegerAttr(offset, i64)
        super().__init__(operands=[[SSAValue.get(v) for v in dynamic_sizes]], result_types=[memref_type],
                         properties=props)

    @property
    def arena_offset(self) -> int | None:
        return None if self.offset is None else int(self.offset.value.data)

    def verify_(self) -> None:
        ty = self.result.type
        assert isinstance(ty, MemRefType)
        dynamic = sum(1 for d in ty.get_shape() if d == DYNAMIC_INDEX)
        if dynamic != len(self.dynamic_sizes):
            raise VerifyException(f"loop.alloc: {ty} has {dynamic} run-time dim(s), "
                                  f"{len(self.dynamic_sizes)} size(s) given")

    def shape(self) -> list[int | SSAValue]:
        """Each dim's size: an integer, or the run-time value."""
        ty = self.result.type
        assert isinstance(ty, MemRefType)
        sizes = iter(self.dynamic_sizes)
        return [next(sizes) if d == DYNAMIC_INDEX else d for d in ty.get_shape()]


@irdl_op_definition
class DimOp(IRDLOperation):
    """``%n = loop.dim %x[0] in [1, 64] : memref<?x16xf32>``: the run-time size of a dim of a
    graph input, with the range the call's checks hold it to (the arena is planned for its top);
    ``loop.dim %y[0] in [2, 128] equals %size``: a dim each call must have at that size (an
    input dim declared equal to another's, or derived from it)."""

    name = "loop.dim"

    source = operand_def(MemRefType)
    expected = opt_operand_def(IndexType)
    index = prop_def(IntegerAttr[I64])
    low = prop_def(IntegerAttr[I64])
    high = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)

    traits = traits_def(Pure())
    assembly_format = ("$source `[` $index `]` `in` ` ` `[` $low `,` $high `]` (`equals` $expected^)? "
                       "attr-dict `:` type($source)")

    def __init__(self, source: SSAValue, index: int, low: int, high: int, expected: SSAValue | None = None) -> None:
        super().__init__(operands=[source, [expected] if expected is not None else []], result_types=[IndexType()],
                         properties={"index": IntegerAttr(index, i64), "low": IntegerAttr(low, i64),
                                     "high": IntegerAttr(high, i64)})

    @property
    def dim(self) -> int:
        return int(self.index.value.data)

    @property
    def bounds(self) -> tuple[int, int]:
        return int(self.low.value.data), int(self.high.value.data)

    def verify_(self) -> None:
        ty = self.source.type
        assert isinstance(ty, MemRefType)
        shape = ty.get_shape()
        if not 0 <= self.dim < len(shape) or shape[self.dim] != DYNAMIC_INDEX:
            raise VerifyException(f"loop.dim: dim {self.dim} of {ty} is not a run-time dim")
        low, high = self.bounds
        if not 0 <= low <= high:
            raise VerifyException(f"loop.dim: bad range [{low}, {high}]")


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """``%w = loop.constant dense_resource<fc.weight> : tensor<10x16xf32> -> memref<10x16xf32>``"""

    name = "loop.constant"

    value = prop_def(DenseResourceAttr | DenseIntOrFPElementsAttr)
    result = result_def(MemRefType)

    def __init__(self, value: DenseResourceAttr | DenseIntOrFPElementsAttr) -> None:
        ty = value.get_type()
        assert isinstance(ty, TensorType)
        super().__init__(properties={"value": value},
                         result_types=[MemRefType(ty.get_element_type(), ty.get_shape())])

    def verify_(self) -> None:
        ty = self.value.get_type()
        res = self.result.type
        assert isinstance(ty, TensorType) and isinstance(res, MemRefType)
        if tuple(ty.get_shape()) != tuple(res.get_shape()) or ty.get_element_type() != res.element_type:
            raise VerifyException(f"loop.constant: value {ty} does not match the buffer {res}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        value = parser.parse_attribute()
        if not isinstance(value, DenseResourceAttr | DenseIntOrFPElementsAttr):
            parser.raise_error("loop.constant expects a dense or dense_resource attribute")
        parser.parse_punctuation("->")
        parser.parse_type()
        op = cls(value)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def tensor(self):  # -> torch.Tensor
        from ziggurat.ir.literals import literal_tensor

        return literal_tensor(self.value)


_KERNEL_PROPS = ("isa", "vector_width", "vectorized", "origins")


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One native kernel; see the module doc.  Properties: ``isa``, ``vector_width`` (lanes of
    its vector loops, 1 when scalar), ``vectorized`` and ``origins`` (the torch ops it computes)."""

    name = "loop.kernel"

    sym_name = prop_def(StringAttr)
    isa = prop_def(StringAttr)
    vector_width = prop_def(IntegerAttr[I64])
    vectorized = prop_def(BoolAttr)
    origins = opt_prop_def(StringAttr)
    ins = var_operand_def(MemRefType)
    outs = var_operand_def(MemRefType)
    sizes = var_operand_def(IndexType)
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, ins: Sequence[SSAValue], outs: Sequence[SSAValue], *, isa: str,
                 vector_width: int, vectorized: bool, origins: str = "", body: Region | None = None,
                 sizes: Sequence[SSAValue] = ()) -> None:
        if body is None:
            body = Region(Block(arg_types=[v.type for v in (*ins, *outs, *sizes)]))
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name), "isa": StringAttr(isa),
            "vector_width": IntegerAttr(vector_width, i64), "vectorized": BoolAttr.from_bool(vectorized),
        }
        if origins:
            props["origins"] = StringAttr(origins)
        super().__init__(operands=[list(ins), list(outs), list(sizes)], regions=[body], properties=props)

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

    @property
    def is_vectorized(self) -> bool:
        return bool(self.vectorized.value.data)

    @property
    def width(self) -> int:
        return int(self.vector_width.value.data)

    @property
    def in_args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[: len(self.ins)])

    @property
    def out_args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[len(self.ins): len(self.ins) + len(self.outs)])

    @property
    def size_args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[len(self.ins) + len(self.outs):])

    def verify_(self) -> None:
        args = self.body.block.args
        operands = [*self.ins, *self.outs, *self.sizes]
        if [a.type for a in args] != [v.type for v in operands]:
            raise VerifyException(f"loop.kernel @{self.kernel_name}: block arguments must match ins + outs + sizes")
        if not self.outs:
            raise VerifyException(f"loop.kernel @{self.kernel_name}: a kernel writes at least one buffer")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.kernel_name}")
        for keyword, values in (("ins", self.ins), ("outs", self.outs)):
            printer.print_string(f" {keyword}(")
            printer.print_list(values, printer.print_ssa_value)
            if values:
                printer.print_string(" : ")
                printer.print_list([v.type for v in values], printer.print_attribute)
            printer.print_string(")")
        if self.sizes:
            printer.print_string(" sizes(")
            printer.print_list(self.sizes, printer.print_ssa_value)
            printer.print_string(")")
        props: dict[str, Attribute] = {"isa": self.isa, "vector_width": self.vector_width,
                                       "vectorized": self.vectorized}
        if self.origins is not None:
            props["origins"] = self.origins
        printer.print_string(" ")
        printer.print_attr_dict({**props, **self.attributes})
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name().data
        groups: list[Sequence[SSAValue]] = []
        for keyword in ("ins", "outs"):
            parser.parse_keyword(keyword)
            parser.parse_punctuation("(")
            operands = []
            if parser.parse_optional_punctuation(")") is None:
                operands = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_unresolved_operand)
                parser.parse_punctuation(":")
                types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
                parser.parse_punctuation(")")
                groups.append(parser.resolve_operands(operands, types, parser.pos))
            else:
                groups.append([])
        sizes: list[SSAValue] = []
        if parser.parse_optional_keyword("sizes") is not None:
            sizes = [parser.resolve_operand(v, IndexType()) for v in parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_unresolved_operand)]
        attrs = dict(parser.parse_optional_attr_dict())
        body = parser.parse_region()
        props = {k: attrs.pop(k) for k in _KERNEL_PROPS if k in attrs}
        op = cls.create(
            operands=[*groups[0], *groups[1], *sizes],
            properties={"sym_name": StringAttr(name), **props,
                        "operandSegmentSizes": _segments(len(groups[0]), len(groups[1]), len(sizes))},
            regions=[body],
        )
        op.attributes |= attrs
        return op


def _segments(*sizes: int) -> Attribute:
    from xdsl.dialects.builtin import DenseArrayBase, i32

    return DenseArrayBase.from_list(i32, list(sizes))


@irdl_op_definition
class GemmOp(IRDLOperation):
    """``loop.gemm @gemm_linear_0 a(%x : ...) b(%w : ...) c(%out : ...) spec {m = 4 : i64, ...}``

    ``spec`` holds the ``GemmSpec`` fields (``backends/cpu/kernels/gemm_spec.py``) that
    differ from their defaults, plus ``a_offset``/``b_offset``/``c_offset``/``other_offset``:
    where each operand starts in its buffer (elements).  A spec with ``m_runtime`` or
    ``batch_runtime`` takes that size at run time from ``sizes(%n)`` (its ``m``/``batch``
    in the spec: the largest, which the call is planned for)."""

    name = "loop.gemm"

    sym_name = prop_def(SymbolNameConstraint())
    spec = prop_def(DictionaryAttr)
    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    bias = opt_operand_def(MemRefType)
    other = opt_operand_def(MemRefType)
    sizes = var_operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$sym_name `a` `(` $a `:` type($a) `)` `b` `(` $b `:` type($b) `)` `c` `(` $c `:` type($c) `)` "
        "(`bias` `(` $bias^ `:` type($bias) `)`)? (`other` `(` $other^ `:` type($other) `)`)? "
        "(`sizes` `(` $sizes^ `)`)? `spec` $spec attr-dict"
    )

    def __init__(self, name: str, a: SSAValue, b: SSAValue, c: SSAValue, bias: SSAValue | None,
                 other: SSAValue | None, spec: Mapping[str, Attribute], sizes: Sequence[SSAValue] = ()) -> None:
        super().__init__(
            operands=[a, b, c, [bias] if bias else [], [other] if other else [], list(sizes)],
            properties={"sym_name": StringAttr(name), "spec": DictionaryAttr(dict(spec))},
        )

    @property
    def gemm_name(self) -> str:
        return self.sym_name.data


@irdl_op_definition
class ToTensorOp(IRDLOperation):
    """``%t = loop.to_tensor %b : memref<2x3xf32> to tensor<2x3xf32>``: a buffer read by a torch op."""

    name = "loop.to_tensor"

    buffer = operand_def(MemRefType)
    result = result_def(TensorType)

    assembly_format = "$buffer attr-dict `:` type($buffer) `to` type($result)"

    def __init__(self, buffer: SSAValue, tensor_type: TensorType[Attribute]) -> None:
        super().__init__(operands=[buffer], result_types=[tensor_type])


@irdl_op_definition
class ToBufferOp(IRDLOperation):
    """``%b = loop.to_buffer %t : tensor<2x3xf32> to memref<2x3xf32>``: a torch op's result, copied
    into a planned buffer."""

    name = "loop.to_buffer"

    tensor = operand_def(TensorType)
    offset = opt_prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)

    assembly_format = "$tensor (`offset` $offset^)? attr-dict `:` type($tensor) `to` type($result)"

    def __init__(self, tensor: SSAValue, memref_type: MemRefType) -> None:
        super().__init__(operands=[tensor], result_types=[memref_type])

    @property
    def arena_offset(self) -> int | None:
        return None if self.offset is None else int(self.offset.value.data)
