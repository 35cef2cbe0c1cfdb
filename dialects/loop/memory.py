"""Index arithmetic, loads and stores of the ``loop`` dialect.

Buffers are ``memref``s with static shapes, always dense and row-major; every access
names one flat element offset (an ``index``), computed by ``loop.offset`` from the
loop induction variables (``1000 * %i0 + %i1 + 3``).  Views of a tensor (transpose,
slice, reshape, broadcast...) are therefore just different offset expressions in the
kernel that reads them.

* ``loop.load`` / ``loop.store``: one scalar.
* ``loop.vload`` / ``loop.vstore``: a vector of consecutive elements starting at the
  offset; ``lanes(%n)`` restricts the access to the first ``%n`` lanes and
  ``mask(%m)`` (``vector<Nxi1>``) to the lanes set in ``%m``; masked-off lanes are
  neither read nor written (they load as 0 / false).
* ``loop.vgather``: a vector of elements at a vector of offsets (strided or indirect reads).
* ``loop.scratch``: a buffer of the kernel's own (a row of values kept from one loop for a
  later one, ``reuse-reduction-values``): uninitialized, private to the thread running it.
* ``loop.vindex %off step 2``: the vector ``[%off, %off + 2, ...]`` as ``i64`` lanes.
* ``loop.assert %ok site 4``: a run-time condition (integer division by zero) recorded like a
  bad index.
* ``loop.check_index %v, 1000 site 3``: a data-dependent index (embedding ids, gather
  indices) checked against its dimension: negative indices wrap once (as in torch); an
  index still outside ``[0, size)`` records ``site`` in the run's status word (the
  runtime turns it into an error naming the op) and reads element 0 instead, so
  generated code never touches memory outside a buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.loop.syntax import int_values


def element_of(memref: Attribute) -> Attribute:
    assert isinstance(memref, MemRefType)
    return memref.element_type  # pyright: ignore[reportUnknownMemberType]


def _check_element(op: IRDLOperation, buffer: SSAValue, value_type: Attribute) -> None:
    elem = element_of(buffer.type)
    got = value_type.element_type if isinstance(value_type, VectorType) else value_type  # pyright: ignore
    if got != elem:
        raise VerifyException(f"{op.name}: buffer elements are {elem}, the value is {value_type}")


@irdl_op_definition
class OffsetOp(IRDLOperation):
    """``%o = loop.offset 1000 * %i0 + %i1 + 3``: an affine flat element offset."""

    name = "loop.offset"

    indices = var_operand_def(IndexType)
    coeffs = prop_def(DenseArrayBase)
    constant = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)

    traits = traits_def(Pure())

    def __init__(self, terms: Sequence[tuple[SSAValue | Operation, int]], constant: int = 0) -> None:
        super().__init__(
            operands=[[v for v, _ in terms]], result_types=[IndexType()],
            properties={"coeffs": DenseArrayBase.from_list(i64, [c for _, c in terms]),
                        "constant": IntegerAttr(constant, i64)},
        )

    @property
    def coefficients(self) -> list[int]:
        return int_values(self.coeffs)

    @property
    def const(self) -> int:
        return int(self.constant.value.data)

    def verify_(self) -> None:
        if len(self.coefficients) != len(self.indices):
            raise VerifyException("loop.offset: one coefficient per index operand")

    def print(self, printer: Printer) -> None:
        parts = 0
        for v, c in zip(self.indices, self.coefficients, strict=True):
            printer.print_string(" + " if parts else " ")
            if c != 1:
                printer.print_string(f"{c} * ")
            printer.print_ssa_value(v)
            parts += 1
        if self.const or not parts:
            printer.print_string(f" + {self.const}" if parts else f" {self.const}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> OffsetOp:
        terms: list[tuple[SSAValue, int]] = []
        constant = 0
        while True:
            coeff = parser.parse_optional_integer(allow_boolean=False)
            if coeff is not None and parser.parse_optional_punctuation("*") is None:
                constant += coeff
            else:
                operand = parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())
                terms.append((operand, 1 if coeff is None else coeff))
            if parser.parse_optional_punctuation("+") is None:
                break
        op = cls(terms, constant)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class LoadOp(IRDLOperation):
    """``%v = loop.load %buf[%off] : memref<4x16xf32> -> f32``"""

    name = "loop.load"

    buffer = operand_def(MemRefType)
    offset = operand_def(IndexType)
    result = result_def()

    assembly_format = "$buffer `[` $offset `]` attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer: SSAValue | Operation, offset: SSAValue | Operation) -> None:
        super().__init__(operands=[buffer, offset], result_types=[element_of(SSAValue.get(buffer).type)])

    def verify_(self) -> None:
        _check_element(self, self.buffer, self.result.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """``loop.store %v, %buf[%off] : f32, memref<4x16xf32>``"""

    name = "loop.store"

    value = operand_def()
    buffer = operand_def(MemRefType)
    offset = operand_def(IndexType)

    assembly_format = "$value `,` $buffer `[` $offset `]` attr-dict `:` type($value) `,` type($buffer)"

    def __init__(self, value: SSAValue | Operation, buffer: SSAValue | Operation, offset: SSAValue | Operation) -> None:
        super().__init__(operands=[value, buffer, offset])

    def verify_(self) -> None:
        _check_element(self, self.buffer, self.value.type)


_MASKS = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class VLoadOp(IRDLOperation):
    """``%v = loop.vload %buf[%off] lanes(%n) mask(%m) : memref<1000xf32> -> vector<16xf32>``"""

    name = "loop.vload"

    buffer = operand_def(MemRefType)
    offset = operand_def(IndexType)
    lanes = opt_operand_def(IndexType)
    mask = opt_operand_def(VectorType)
    result = result_def(VectorType)

    irdl_options = _MASKS
    assembly_format = (
        "$buffer `[` $offset `]` (`lanes` `(` $lanes^ `)`)? (`mask` `(` $mask^ `:` type($mask) `)`)? "
        "attr-dict `:` type($buffer) `->` type($result)"
    )

    def __init__(self, buffer: SSAValue | Operation, offset: SSAValue | Operation, width: int,
                 lanes: SSAValue | Operation | None = None, mask: SSAValue | Operation | None = None) -> None:
        elem = element_of(SSAValue.get(buffer).type)
        super().__init__(operands=[buffer, offset, [lanes] if lanes else [], [mask] if mask else []],
                         result_types=[VectorType(elem, [width])])

    def verify_(self) -> None:
        _check_element(self, self.buffer, self.result.type)


@irdl_op_definition
class VGatherOp(IRDLOperation):
    """``%v = loop.vgather %buf[%offs] lanes(%n) : memref<...>, vector<16xi64> -> vector<16xf32>``"""

    name = "loop.vgather"

    buffer = operand_def(MemRefType)
    offsets = operand_def(VectorType)
    lanes = opt_operand_def(IndexType)
    mask = opt_operand_def(VectorType)
    result = result_def(VectorType)

    irdl_options = _MASKS
    assembly_format = (
        "$buffer `[` $offsets `]` (`lanes` `(` $lanes^ `)`)? (`mask` `(` $mask^ `:` type($mask) `)`)? "
        "attr-dict `:` type($buffer) `,` type($offsets) `->` type($result)"
    )

    def __init__(self, buffer: SSAValue | Operation, offsets: SSAValue | Operation,
                 lanes: SSAValue | Operation | None = None, mask: SSAValue | Operation | None = None) -> None:
        elem = element_of(SSAValue.get(buffer).type)
        width = SSAValue.get(offsets).type.get_shape()[0]  # pyright: ignore
        super().__init__(operands=[buffer, offsets, [lanes] if lanes else [], [mask] if mask else []],
                         result_types=[VectorType(elem, [width])])

    def verify_(self) -> None:
        _check_element(self, self.buffer, self.result.type)


@irdl_op_definition
class VStoreOp(IRDLOperation):
    """``loop.vstore %v, %buf[%off] lanes(%n) : vector<16xf32>, memref<1000xf32>``"""

    name = "loop.vstore"

    value = operand_def(VectorType)
    buffer = operand_def(MemRefType)
    offset = operand_def(IndexType)
    lanes = opt_operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$value `,` $buffer `[` $offset `]` (`lanes` `(` $lanes^ `)`)? attr-dict "
        "`:` type($value) `,` type($buffer)"
    )

    def __init__(self, value: SSAValue | Operation, buffer: SSAValue | Operation, offset: SSAValue | Operation,
                 lanes: SSAValue | Operation | None = None) -> None:
        super().__init__(operands=[value, buffer, offset, [lanes] if lanes else []])

    def verify_(self) -> None:
        _check_element(self, self.buffer, self.value.type)


#: The largest ``loop.scratch`` (bytes): it lives on the stack of the thread that runs the kernel.
MAX_SCRATCH_BYTES = 32 * 1024


@irdl_op_definition
class ScratchOp(IRDLOperation):
    """``%s = loop.scratch : memref<128xf32>``: a buffer private to one run of the enclosing
    kernel body on one thread (the stack of the function that runs it), uninitialized; its
    shape is static and at most :data:`MAX_SCRATCH_BYTES`."""

    name = "loop.scratch"

    result = result_def(MemRefType)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, memref_type: MemRefType) -> None:
        super().__init__(result_types=[memref_type])

    def verify_(self) -> None:
        ty = self.result.type
        assert isinstance(ty, MemRefType)
        shape: list[int] = [int(d) for d in ty.get_shape()]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        if not shape or any(d < 1 for d in shape):
            raise VerifyException(f"loop.scratch: {ty} must have a static, non-empty shape")
        count = 1
        for d in shape:
            count *= d
        bits = int(getattr(ty.element_type, "bitwidth", 32))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        if count * max(1, bits // 8) > MAX_SCRATCH_BYTES:
            raise VerifyException(f"loop.scratch: {ty} is over {MAX_SCRATCH_BYTES} bytes")
        parent = self.parent_op()
        while parent is not None and parent.name != "loop.kernel":
            parent = parent.parent_op()
        if parent is None:
            raise VerifyException("loop.scratch: only inside a loop.kernel")


@irdl_op_definition
class VIndexOp(IRDLOperation):
    """``%v = loop.vindex %off step 2 : vector<16xi64>``: lane ``l`` holds ``%off + 2 * l``;
    ``loop.vindex %off step 1 times %n``: ``%off + %n * l`` (a run-time size: the stride of a
    transposing read in a range build)."""

    name = "loop.vindex"

    base = operand_def(IndexType)
    scale = opt_operand_def(IndexType)
    step = prop_def(IntegerAttr[I64])
    result = result_def(VectorType)

    traits = traits_def(Pure())
    assembly_format = "$base `step` $step (`times` $scale^)? attr-dict `:` type($result)"

    def __init__(self, base: SSAValue | Operation, step: int, width: int, scale: SSAValue | None = None) -> None:
        super().__init__(operands=[base, [scale] if scale is not None else []], result_types=[VectorType(i64, [width])],
                         properties={"step": IntegerAttr(step, i64)})


@irdl_op_definition
class CheckIndexOp(IRDLOperation):
    """``%i = loop.check_index %v, 1000 site 3 : i64 -> index`` (see the module doc); on
    vectors, ``lanes(%n)`` limits the check to the valid lanes of a tail iteration;
    ``bound(%n)``: the dimension's size is that run-time size (``size`` is then unused, 0)."""

    name = "loop.check_index"

    value = operand_def()
    lanes = opt_operand_def(IndexType)
    bound = opt_operand_def(IndexType)
    size = prop_def(IntegerAttr[I64])
    site = prop_def(IntegerAttr[I64])
    result = result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$value `,` $size (`bound` `(` $bound^ `)`)? (`lanes` `(` $lanes^ `)`)? `site` $site attr-dict `:` "
        "type($value) `->` type($result)"
    )

    def __init__(self, value: SSAValue | Operation, size: int, site: int,
                 lanes: SSAValue | Operation | None = None, bound: SSAValue | None = None) -> None:
        ty = SSAValue.get(value).type
        result: Attribute = ty if isinstance(ty, VectorType) else IndexType()
        super().__init__(operands=[value, [lanes] if lanes else [], [bound] if bound is not None else []],
                         result_types=[result],
                         properties={"size": IntegerAttr(size, i64), "site": IntegerAttr(site, i64)})

    def verify_(self) -> None:
        ty = self.value.type
        elem = ty.element_type if isinstance(ty, VectorType) else ty  # pyright: ignore
        if not isinstance(elem, IntegerType):
            raise VerifyException(f"loop.check_index: expected integer indices, got {ty}")


@irdl_op_definition
class AssertOp(IRDLOperation):
    """``loop.assert %ok site 4 : vector<16xi1>``: where ``%ok`` is false (in the valid ``lanes``)
    the run's status word records ``site``; the runtime raises the site's message after the
    call (integer division by zero)."""

    name = "loop.assert"

    cond = operand_def()
    lanes = opt_operand_def(IndexType)
    site = prop_def(IntegerAttr[I64])

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = "$cond (`lanes` `(` $lanes^ `)`)? `site` $site attr-dict `:` type($cond)"

    def __init__(self, cond: SSAValue | Operation, site: int, lanes: SSAValue | Operation | None = None) -> None:
        super().__init__(operands=[cond, [lanes] if lanes else []], properties={"site": IntegerAttr(site, i64)})
