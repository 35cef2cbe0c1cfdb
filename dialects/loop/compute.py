"""Computations the upstream ``arith``/``math`` dialects lack (in xDSL): ``loop.unary``,
``loop.reduce``, and lane-wise ``loop.cmp``/``loop.select``/``loop.cast`` on vectors.

* ``%y = loop.unary "gelu_erf"(%x) : vector<16xf32>`` - an element-wise function
  (activation, transcendental, rounding...), scalar or vector; the code generator
  emits polynomial vector code for it (``backends/cpu/vecmath/``), never a libm call.
  Parameters are a dictionary: ``loop.unary "leaky_relu"(%x) params {negative_slope = 0.01 : f64}``.
* ``%s = loop.reduce "add" %v : vector<16xf32> -> f32`` - a horizontal reduction of one
  vector to a scalar (``add``, ``mul``, ``max``, ``min``, ``and``, ``or``).
* ``%y = loop.lookup "gelu_erf"(%x) : vector<16xbf16> -> vector<16xbf16>`` - a float32 function
  of 16-bit lanes, rounded back: a table of eager's answers for the 65,536 bit patterns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from xdsl.dialects.builtin import BFloat16Type, DictionaryAttr, Float16Type, FloatAttr, StringAttr, VectorType, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

#: ``max_nonan``: the largest lane of a vector none of whose lanes is NaN (undefined if one
#: is), lowered to a shuffle tree of plain ``vmaxps``; on integers it is ``max``.
REDUCE_KINDS = ("add", "mul", "max", "min", "and", "or", "max_nonan")


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """``%y = loop.unary "relu"(%x) : vector<16xf32>``"""

    name = "loop.unary"

    kind = prop_def(StringAttr)
    params = opt_prop_def(DictionaryAttr)
    input = operand_def()
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$kind `(` $input `)` (`params` $params^)? attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, value: SSAValue | Operation, params: Mapping[str, float] | None = None,
                 result_type: Attribute | None = None) -> None:
        props: dict[str, Attribute] = {"kind": StringAttr(kind)}
        if params:
            props["params"] = DictionaryAttr({k: FloatAttr(float(v), f64) for k, v in params.items()})
        ty = SSAValue.get(value).type
        super().__init__(operands=[value], result_types=[result_type or ty], properties=props)

    @property
    def parameters(self) -> dict[str, float]:
        if self.params is None:
            return {}
        return {k: float(v.value.data) for k, v in self.params.data.items()}  # pyright: ignore


@irdl_op_definition
class LookupOp(IRDLOperation):
    """``%y = loop.lookup "gelu_erf"(%x) : vector<16xbf16> -> vector<16xbf16>``: each lane is
    ``round16(f(float32(x)))``, ``f`` the float32 ``loop.unary`` of that kind, read from a table of
    eager's answers for every 16-bit pattern (``backends/cpu/codegen/lookup.py``).  The
    ``look-up-half-float-activations`` pass makes it from ``extf -> loop.unary -> truncf``.  The
    lanes are an ISA's: 16 (avx512), 8 (avx2) or one 16-bit scalar (the scalar kernels)."""

    name = "loop.lookup"

    kind = prop_def(StringAttr)
    input = operand_def()
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$kind `(` $input `)` attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, value: SSAValue | Operation) -> None:
        super().__init__(operands=[value], result_types=[SSAValue.get(value).type], properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        ty = self.input.type
        if self.result.type != ty:
            raise VerifyException(f"loop.lookup: the result type {self.result.type} is not the input's {ty}")
        if not is_lookup_type(ty):
            raise VerifyException("loop.lookup takes a bf16 or f16 scalar, or a vector of "
                                  f"{' or '.join(map(str, LOOKUP_LANES))} of them, got {ty}")


#: The vector lanes of a ``loop.lookup``: one ``vpgatherdd`` of 16 (avx512) or 8 (avx2) lanes.
LOOKUP_LANES = (16, 8)


def is_lookup_type(ty: Attribute) -> bool:
    """A bf16 or f16 scalar, or a 1-D vector of :data:`LOOKUP_LANES` of them."""
    if isinstance(ty, BFloat16Type | Float16Type):
        return True
    return (isinstance(ty, VectorType) and isinstance(ty.element_type, BFloat16Type | Float16Type)
            and ty.get_num_dims() == 1 and ty.get_shape()[0] in LOOKUP_LANES)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """``%s = loop.reduce "add" %v : vector<16xf32> -> f32``"""

    name = "loop.reduce"

    kind = prop_def(StringAttr)
    input = operand_def(VectorType)
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, value: SSAValue | Operation) -> None:
        ty = SSAValue.get(value).type
        assert isinstance(ty, VectorType)
        super().__init__(operands=[value], result_types=[ty.element_type],  # pyright: ignore
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"loop.reduce: unknown kind '{self.kind.data}'; known: {', '.join(REDUCE_KINDS)}")
        if self.result.type != self.input.type.element_type:  # pyright: ignore
            raise VerifyException("loop.reduce: the result must be the vector's element type")


FLOAT_PREDICATES = ("oeq", "one", "olt", "ole", "ogt", "oge", "ord", "ueq", "une", "ult", "ule", "ugt", "uge", "uno")
INT_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CAST_KINDS = ("sitofp", "uitofp", "fptosi", "extsi", "extui", "trunci", "extf", "truncf")


def _lanes(ty: Attribute) -> int | None:
    return ty.get_shape()[0] if isinstance(ty, VectorType) else None  # pyright: ignore


@irdl_op_definition
class CmpOp(IRDLOperation):
    """``%m = loop.cmp "olt" %a, %b : vector<16xf32> -> vector<16xi1>``: a lane-wise comparison
    (``arith.cmpf``/``cmpi`` of xDSL only take scalars).  Float predicates are ``arith.cmpf``'s
    (``olt``, ``une``, ``uno``...), integer ones ``arith.cmpi``'s (``slt``, ``eq``, ``ult``...)."""

    name = "loop.cmp"

    T: ClassVar = VarConstraint("T", AnyAttr())
    predicate = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def __init__(self, predicate: str, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        ty = SSAValue.get(lhs).type
        lanes = _lanes(ty)
        from xdsl.dialects.builtin import i1

        result: Attribute = VectorType(i1, [lanes]) if lanes else i1
        super().__init__(operands=[lhs, rhs], result_types=[result], properties={"predicate": StringAttr(predicate)})

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise VerifyException(f"loop.cmp: operands differ: {self.lhs.type} vs {self.rhs.type}")
        if self.predicate.data not in FLOAT_PREDICATES + INT_PREDICATES:
            raise VerifyException(f"loop.cmp: unknown predicate '{self.predicate.data}'")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """``%r = loop.select %m, %a, %b : vector<16xi1>, vector<16xf32>``: lane-wise choice."""

    name = "loop.select"

    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)"

    def __init__(self, cond: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        super().__init__(operands=[cond, lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type or self.result.type != self.lhs.type:
            raise VerifyException("loop.select: both choices and the result must have one type")


@irdl_op_definition
class CastOp(IRDLOperation):
    """``%y = loop.cast "sitofp" %x : vector<16xi64> -> vector<16xf32>``: a lane-wise conversion
    with ``arith``'s cast semantics (xDSL's arith casts only take scalars)."""

    name = "loop.cast"

    kind = prop_def(StringAttr)
    input = operand_def()
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, value: SSAValue | Operation, result_type: Attribute) -> None:
        super().__init__(operands=[value], result_types=[result_type], properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in CAST_KINDS:
            raise VerifyException(f"loop.cast: unknown kind '{self.kind.data}'; known: {', '.join(CAST_KINDS)}")
