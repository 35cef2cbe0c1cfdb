"""Computations the upstream ``arith``/``math`` dialects lack: ``loop.unary`` and ``loop.reduce``.

* ``%y = loop.unary "gelu_erf"(%x) : vector<16xf32>`` - an element-wise function
  (activation, transcendental, rounding...), scalar or vector; the code generator
  emits polynomial vector code for it (``backends/cpu/vecmath.py``), never a libm call.
  Parameters are a dictionary: ``loop.unary "leaky_relu"(%x) params {negative_slope = 0.01 : f64}``.
* ``%s = loop.reduce "add" %v : vector<16xf32> -> f32`` - a horizontal reduction of one
  vector to a scalar (``add``, ``mul``, ``max``, ``min``, ``and``, ``or``).
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, StringAttr, VectorType, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

REDUCE_KINDS = ("add", "mul", "max", "min", "and", "or")


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
