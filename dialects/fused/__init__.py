"""The ``fused`` dialect: backend-neutral GEMM/conv ops with fused post-ops.

Produced by ``fuse-post-ops`` (and ``fold-batchnorm``/``prepack-weights``), consumed
by both backends.  A fused op is its base computation followed by ``post_ops``, an
ordered list of at most one unary and one binary post-op, e.g. conv -> add(residual) -> relu::

    %y = fused.conv2d %x, %w bias(%b) other(%res) {stride = array<i64: 1, 1>, ...,
           post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]} : (...) -> tensor<...>

Unary post-ops and their parameters (positional in the attribute):
relu, relu6, gelu_erf, gelu_tanh, silu, sigmoid, tanh, hardtanh(min_val, max_val),
hardswish, hardsigmoid, leaky_relu(negative_slope), clamp(min, max) (+-inf = unbounded).
Binary post-ops: add(alpha): y + alpha * other; sub(alpha): y - alpha * other, with
``other`` any tensor that broadcasts to the output.
A requantize post-op, always the last one (``#fused.requantize<scale, zero_point, quant_min,
quant_max>``, float32 results only), is PT2E's ``quantize_per_tensor -> dequantize_per_tensor``
pair on the result, as eager computes it in float32::

    t = round(y * float32(1.0 / scale)) + zero_point             # round half to even
    q = where(t == t, clamp(t, quant_min, quant_max), 0)          # a NaN becomes the integer 0
    y = (q - zero_point) * float32(scale)

so every element is an integer of ``[quant_min, quant_max]`` minus the zero point, times the
scale (``passes/decompose_quantize.py`` reads that back for an int8 consumer).
``#fused.quantize<...>`` (same parameters, last, a ``ui8`` result) stops at ``q``: the result
holds the integers, stored as bytes.  Such a value is read back by a fused op whose ``input``
(``ziggurat.input_quantization = [scale, zero_point]``) or ``other``
(``ziggurat.other_quantization``) is that ``ui8`` tensor: the op computes on
``(q - zero_point) * float32(scale)``, eager's ``dequantize_per_tensor`` (the CPU backend's
``fuse-requantize`` writes both, between its int8 GEMMs).

A weight that ``prepack-weights`` rewrote carries its layout in ``weight_layout`` and its
logical shape in ``weight_shape`` (``"KN32n"``: GEMM panels of 32 output columns, for a
conv per group over K = kh*kw*I; ``"OIhw16i16o"``: blocked conv weights); the weight
operand then has the packed shape.  ``pack.py`` defines the layouts.

Every op's verifier (``verify.py``) checks its attributes and its types against eager
semantics: torch's shape functions on meta tensors of the operand types, conv attribute
ranges, ``bias``/``other`` broadcasting to the result, the packed weight's shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    bf16,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ziggurat.ir.types import ui8

#: Unary post-op kinds and the names of their parameters.
UNARY_KINDS: dict[str, tuple[str, ...]] = {
    "relu": (), "relu6": (), "gelu_erf": (), "gelu_tanh": (), "silu": (), "sigmoid": (),
    "tanh": (), "hardtanh": ("min_val", "max_val"), "hardswish": (), "hardsigmoid": (),
    "leaky_relu": ("negative_slope",), "clamp": ("min", "max"),
}
BINARY_KINDS: tuple[str, ...] = ("add", "sub")


def _print_params(printer: Printer, kind: str, params: Sequence[float]) -> None:
    printer.print_string("<" + kind)
    for p in params:
        printer.print_string(", " + repr(float(p)))  # inf, -inf and nan parse back
    printer.print_string(">")


def _parse_params(parser: AttrParser) -> tuple[str, list[float]]:
    with parser.in_angle_brackets():
        kind = parser.parse_identifier()
        params: list[float] = []
        while parser.parse_optional_punctuation(","):
            negative = parser.parse_optional_punctuation("-") is not None
            if parser.parse_optional_keyword("inf") is not None:
                value = math.inf
            elif parser.parse_optional_keyword("nan") is not None:
                value = math.nan
            else:
                value = float(parser.parse_number())
            params.append(-value if negative else value)
    return kind, params


@irdl_attr_definition
class UnaryPostOpAttr(ParametrizedAttribute):
    """``#fused.unary<hardtanh, 0.0, 6.0>``"""

    name = "fused.unary"

    kind: StringAttr = param_def()
    params: ArrayAttr[FloatAttr] = param_def()

    def __init__(self, kind: str, params: Sequence[float] = ()) -> None:
        super().__init__(StringAttr(kind), ArrayAttr([FloatAttr(float(p), f64) for p in params]))

    @property
    def values(self) -> list[float]:
        return [p.value.data for p in self.params.data]

    def param(self, name: str) -> float:
        return self.values[UNARY_KINDS[self.kind.data].index(name)]

    def verify(self) -> None:
        expected = UNARY_KINDS.get(self.kind.data)
        if expected is None:
            raise VerifyException(
                f"unknown unary post-op '{self.kind.data}'; known: {', '.join(UNARY_KINDS)}"
            )
        if len(self.params.data) != len(expected):
            raise VerifyException(
                f"unary post-op {self.kind.data} takes {len(expected)} parameter(s) "
                f"({', '.join(expected)}), got {len(self.params.data)}"
            )
        if self.kind.data == "hardtanh" and self.values[0] > self.values[1]:
            raise VerifyException(f"hardtanh: min_val {self.values[0]} is greater than max_val {self.values[1]}")

    def print_parameters(self, printer: Printer) -> None:
        _print_params(printer, self.kind.data, self.values)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        kind, params = _parse_params(parser)
        return (StringAttr(kind), ArrayAttr([FloatAttr(p, f64) for p in params]))


@irdl_attr_definition
class BinaryPostOpAttr(ParametrizedAttribute):
    """``#fused.binary<add, 1.0>``: y + alpha * other (``sub``: y - alpha * other)."""

    name = "fused.binary"

    kind: StringAttr = param_def()
    alpha: FloatAttr = param_def()

    def __init__(self, kind: str, alpha: float = 1.0) -> None:
        super().__init__(StringAttr(kind), FloatAttr(float(alpha), f64))

    def verify(self) -> None:
        if self.kind.data not in BINARY_KINDS:
            raise VerifyException(f"unknown binary post-op '{self.kind.data}'; known: add, sub")

    def print_parameters(self, printer: Printer) -> None:
        _print_params(printer, self.kind.data, [self.alpha.value.data])

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        kind, params = _parse_params(parser)
        return (StringAttr(kind), FloatAttr(params[0] if params else 1.0, f64))


#: On a fused op: ``[scale, zero_point]`` of its ``input``: dequantizes a ``ui8`` input; on a
#: float32 one, the proof (``prepack-weights``) that every element is such a dequantized integer.
INPUT_QUANTIZATION_ATTR = "ziggurat.input_quantization"
#: On a fused op whose ``other`` is ``ui8``: ``[scale, zero_point]`` that dequantize it.
OTHER_QUANTIZATION_ATTR = "ziggurat.other_quantization"


class QuantizerParams(ParametrizedAttribute):
    """``<scale, zero_point, quant_min, quant_max>`` of a per-tensor quantizer."""

    scale: FloatAttr = param_def()
    zero_point: IntegerAttr = param_def()
    quant_min: IntegerAttr = param_def()
    quant_max: IntegerAttr = param_def()

    def __init__(self, scale: float, zero_point: int, quant_min: int, quant_max: int) -> None:
        super().__init__(FloatAttr(float(scale), f64), IntegerAttr(int(zero_point), i64),
                         IntegerAttr(int(quant_min), i64), IntegerAttr(int(quant_max), i64))

    @property
    def values(self) -> tuple[float, int, int, int]:
        """``(scale, zero_point, quant_min, quant_max)``."""
        return (float(self.scale.value.data), int(self.zero_point.value.data),
                int(self.quant_min.value.data), int(self.quant_max.value.data))

    def verify(self) -> None:
        scale, zero_point, low, high = self.values
        if not (math.isfinite(scale) and scale > 0):
            raise VerifyException(f"requantize: the scale must be a positive finite float, got {scale}")
        if not -(2**31) <= low <= high < 2**31:
            raise VerifyException(f"requantize: [{low}, {high}] is not a range of int32 values")
        if not low <= zero_point <= high:
            raise VerifyException(f"requantize: the zero point {zero_point} is outside [{low}, {high}]")

    def print_parameters(self, printer: Printer) -> None:
        scale, zero_point, low, high = self.values
        printer.print_string(f"<{scale!r}, {zero_point}, {low}, {high}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            scale = float(parser.parse_number())
            ints: list[int] = []
            for _ in range(3):
                parser.parse_punctuation(",")
                negative = parser.parse_optional_punctuation("-") is not None
                value = parser.parse_integer(allow_negative=False)
                ints.append(-value if negative else value)
        return (FloatAttr(scale, f64), IntegerAttr(ints[0], i64), IntegerAttr(ints[1], i64), IntegerAttr(ints[2], i64))


@irdl_attr_definition
class RequantizePostOpAttr(QuantizerParams):
    """``#fused.requantize<0.05, 3, 0, 255>``: quantize -> dequantize per tensor (see the module)."""

    name = "fused.requantize"

    def __init__(self, scale: float, zero_point: int, quant_min: int, quant_max: int) -> None:
        super().__init__(scale, zero_point, quant_min, quant_max)


@irdl_attr_definition
class QuantizePostOpAttr(QuantizerParams):
    """``#fused.quantize<0.05, 3, 0, 255>``: quantize per tensor, the result the integers (``ui8``)."""

    name = "fused.quantize"

    def __init__(self, scale: float, zero_point: int, quant_min: int, quant_max: int) -> None:
        super().__init__(scale, zero_point, quant_min, quant_max)


def quantization_of(op: Operation, attr_name: str) -> tuple[float, int] | None:
    """``[scale, zero_point]`` in ``op``'s attribute ``attr_name``, or None."""
    attr = op.attributes.get(attr_name)
    if (not isinstance(attr, ArrayAttr) or len(attr.data) != 2 or not isinstance(attr.data[0], FloatAttr)
            or not isinstance(attr.data[1], IntegerAttr)):
        return None
    return float(attr.data[0].value.data), int(attr.data[1].value.data)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]


def is_depthwise_conv(op: Operation) -> bool:
    """An unpacked ``fused.conv2d`` with one input channel per group and a group per input channel
    (a weight ``[C * multiplier, 1, kh, kw]``)."""
    if op.name != "fused.conv2d" or op.properties.get("weight_layout") is not None:
        return False
    x, w, groups = op.operands[0].type, op.operands[1].type, op.properties.get("groups")
    if not isinstance(x, TensorType) or not isinstance(w, TensorType) or not isinstance(groups, IntegerAttr):
        return False
    x_shape, w_shape = list(x.get_shape()), list(w.get_shape())
    return (len(x_shape) == 4 and len(w_shape) == 4 and w_shape[1] == 1
            and groups.value.data == x_shape[1] > 1)  # pyright: ignore[reportUnknownMemberType]


PostOp = UnaryPostOpAttr | BinaryPostOpAttr | RequantizePostOpAttr | QuantizePostOpAttr


class FusedOp(IRDLOperation):
    """Common part of the fused ops: an output, post-ops, an optional ``other`` operand."""

    post_ops = prop_def(ArrayAttr[UnaryPostOpAttr | BinaryPostOpAttr | RequantizePostOpAttr | QuantizePostOpAttr],
                        default_value=ArrayAttr([]))
    #: Set by prepack-weights: the packed layout of the weight operand and its logical shape.
    weight_layout = opt_prop_def(StringAttr)
    weight_shape = opt_prop_def(DenseArrayBase)

    BASE: ClassVar[str]

    def unary(self) -> UnaryPostOpAttr | None:
        return next((p for p in self.post_ops.data if isinstance(p, UnaryPostOpAttr)), None)

    def binary(self) -> BinaryPostOpAttr | None:
        return next((p for p in self.post_ops.data if isinstance(p, BinaryPostOpAttr)), None)

    def verify_(self) -> None:
        from ziggurat.dialects.fused.verify import verify_fused

        # pyright sees this file both as dialects.fused and as ziggurat.dialects.fused
        verify_fused(self)  # pyright: ignore[reportArgumentType]

    def requantize(self) -> RequantizePostOpAttr | QuantizePostOpAttr | None:
        """The last post-op when it is ``#fused.requantize`` or ``#fused.quantize``."""
        return next((p for p in self.post_ops.data if isinstance(p, RequantizePostOpAttr | QuantizePostOpAttr)), None)

    def quantizes_result(self) -> bool:
        """Whether the result holds quantized integers (``#fused.quantize``)."""
        return isinstance(self.requantize(), QuantizePostOpAttr)

    def verify_post_ops(self, other: object) -> None:
        unary = [p for p in self.post_ops.data if isinstance(p, UnaryPostOpAttr)]
        binary = [p for p in self.post_ops.data if isinstance(p, BinaryPostOpAttr)]
        if len(unary) > 1 or len(binary) > 1:
            raise VerifyException(f"{self.name}: at most one unary and one binary post-op")
        requantize = [i for i, p in enumerate(self.post_ops.data) if isinstance(p, RequantizePostOpAttr | QuantizePostOpAttr)]
        if len(requantize) > 1 or (requantize and requantize[0] != len(self.post_ops.data) - 1):
            raise VerifyException(f"{self.name}: a requantize or quantize post-op comes last, once")
        result = self.results[0].type
        element = result.get_element_type() if isinstance(result, TensorType) else None
        last = self.post_ops.data[requantize[0]] if requantize else None
        if isinstance(last, RequantizePostOpAttr) and element != f32:
            raise VerifyException(f"{self.name}: a requantize post-op needs a float32 result, got {result}")
        if isinstance(last, QuantizePostOpAttr):
            _, _, low, high = last.values
            if element != ui8 or not 0 <= low <= high <= 255:
                raise VerifyException(f"{self.name}: a quantize post-op needs a ui8 result and a range of uint8 "
                                      f"values, got {result} and [{low}, {high}]")
        for name, attr_name in (("input", INPUT_QUANTIZATION_ATTR), ("other", OTHER_QUANTIZATION_ATTR)):
            value = getattr(self, name, None)
            ty = getattr(value, "type", None)
            q = quantization_of(self, attr_name)
            if isinstance(ty, TensorType) and (ty.get_element_type() == ui8 or (q is not None and name == "other")):
                if ty.get_element_type() != ui8 or q is None or not (math.isfinite(q[0]) and q[0] > 0 and 0 <= q[1] <= 255):
                    raise VerifyException(f"{self.name}: an integer {name} must be ui8 with {attr_name} = "
                                          "[scale, zero_point] (a positive scale, a uint8 zero point)")
        if binary and other is None:
            raise VerifyException(
                f"{self.name}: a binary post-op needs exactly one 'other' operand"
            )
        if other is not None and not binary:
            raise VerifyException(f"{self.name}: the 'other' operand needs a binary post-op to combine it")


_OPTIONS = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())


#: conv2d's and linear's syntax: input, weight, the optional bias and binary operand, types
_INPUT_WEIGHT_FORMAT = (
    "$input `,` $weight (`bias` `(` $bias^ `:` type($bias) `)`)? "
    "(`other` `(` $other^ `:` type($other) `)`)? attr-dict "
    "`:` `(` type($input) `,` type($weight) `)` `->` type($result)"
)


@irdl_op_definition
class Conv2dOp(FusedOp):
    """conv2d (NCHW, groups, stride/padding/dilation) + post-ops."""

    name = "fused.conv2d"
    BASE: ClassVar[str] = "aten::conv2d"

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    other = opt_operand_def(TensorType)
    stride = prop_def(DenseArrayBase)
    padding = prop_def(DenseArrayBase)
    dilation = prop_def(DenseArrayBase)
    groups = prop_def(IntegerAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = _OPTIONS
    assembly_format = _INPUT_WEIGHT_FORMAT


@irdl_op_definition
class LinearOp(FusedOp):
    """y = x @ W^T + bias, + post-ops; W is [N, K] (or packed, see ``weight_layout``)."""

    name = "fused.linear"
    BASE: ClassVar[str] = "aten::linear"

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    other = opt_operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = _OPTIONS
    assembly_format = _INPUT_WEIGHT_FORMAT


@irdl_op_definition
class MatmulOp(FusedOp):
    """y = alpha * (a @ b) + beta * bias (torch.matmul broadcasting; mm/bmm/addmm/baddbmm), + post-ops."""

    name = "fused.matmul"
    BASE: ClassVar[str] = "aten::matmul"

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    other = opt_operand_def(TensorType)
    alpha = prop_def(FloatAttr)
    beta = prop_def(FloatAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = _OPTIONS
    assembly_format = (
        "$a `,` $b (`bias` `(` $bias^ `:` type($bias) `)`)? "
        "(`other` `(` $other^ `:` type($other) `)`)? attr-dict "
        "`:` `(` type($a) `,` type($b) `)` `->` type($result)"
    )

    def bf16_products_in_float32(self) -> bool:
        """bf16 ``a`` and ``b`` with a float32 result: the products (exact in float32) summed
        in float32 and not rounded to bf16 (``widen-half-floats``' ``Bf16Products``); a bias or
        residual is bf16 or float32.  The bf16 kernels store such a result in float32, and
        the interpreter computes ``a.float() @ b.float()``."""
        def element(v: SSAValue | None) -> Attribute | None:
            return v.type.get_element_type() if v is not None and isinstance(v.type, TensorType) else None

        return (element(self.a) == bf16 and element(self.b) == bf16 and element(self.result) == f32
                and all(v is None or element(v) in (bf16, f32) for v in (self.bias, self.other)))



FUSED_OPS = (Conv2dOp, LinearOp, MatmulOp)

Fused = Dialect("fused", list(FUSED_OPS), [UnaryPostOpAttr, BinaryPostOpAttr, RequantizePostOpAttr, QuantizePostOpAttr])
