"""``decompose-quantize``: PT2E's quantize -> dequantize pairs -> the float32 ops they compute.

A model quantized with PT2E (``prepare_pt2e``/``convert_pt2e``, e.g. with torchao's
``X86InductorQuantizer``) holds ``quantized_decomposed::quantize_per_tensor`` ->
``dequantize_per_tensor`` pairs around its convolutions and linears (``torch.operator`` ops:
their namespace is not aten).  Between the two the value is an integer in ``[quant_min,
quant_max]``, which float32 holds exactly, so the pair is, bit for bit as torch computes it
(``torch/ao/quantization/fx/_decomposed.py``)::

    q = clamp(round(x * (1.0 / scale)) + zero_point, quant_min, quant_max)   # float32
    q = where(x == x, q, 0)        # .to(uint8/int8) turns NaN into 0 on x86, as eager does
    y = (q - zero_point) * scale

element-wise float32 ops that fuse and vectorize, where the pair would run in torch.  Only a
quantize whose every use is a dequantize with the same parameters is rewritten (a quantized
value that leaves the graph or feeds another op keeps its ops).  :func:`dequantized_parameters`
reads those ops back: a value they compute is an integer of ``[quant_min, quant_max]`` minus
the zero point, times the scale, which an int8 kernel may requantize exactly.

``constant-fold`` folds a weight's dequantization (``dequantize_per_channel`` of constants)
into the float32 literal eager computes; for an int8 weight (a linear's ``[N, K]``, a
convolution's ``[O, I, kh, kw]``) along axis 0 with zero zero points the literal carries its
rows' scales (``ziggurat.row_scales``, :func:`row_scales_attr`), so that the CPU backend can
take the int8 weight back (``prepack-weights``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.dialects.fused import FusedOp, RequantizePostOpAttr
from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.aten_ops import (
    AtenAddScalarOp,
    AtenClamp_Op,
    AtenEqTensorOp,
    AtenMulScalarOp,
    AtenRound_Op,
    AtenSubScalarOp,
    AtenWhereScalarOtherOp,
)
from ziggurat.dialects.torch.ops_base import LiteralOp, OperatorOp
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of, element_type

NAME = "decompose-quantize"
#: On a folded per-row dequantized weight: its rows' float32 scales.
ROW_SCALES_ATTR = "ziggurat.row_scales"

QUANTIZE = "quantized_decomposed::quantize_per_tensor"
DEQUANTIZE = "quantized_decomposed::dequantize_per_tensor"
DEQUANTIZE_PER_CHANNEL = "quantized_decomposed::dequantize_per_channel"
#: The integer dtypes the pair may round through (the bounds float32 holds exactly).
QUANTIZED_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32)
_PARAMETERS = ("scale", "zero_point", "quant_min", "quant_max", "dtype")


def _operator(op: Operation, name: str) -> OperatorOp | None:
    return op if isinstance(op, OperatorOp) and op.op_name.data == name and op.schema_text is not None else None


def _parameters(op: OperatorOp) -> dict[str, Any] | None:
    """The static quantization parameters of a per-tensor (de)quantize, or None where one is
    a tensor (the ``.tensor`` overloads) or its output is not float32."""
    bound = op.arguments()
    values = {name: bound.values.get(name) for name in _PARAMETERS}
    if not isinstance(values["scale"], float) or not isinstance(values["zero_point"], int):
        return None
    if values["dtype"] not in QUANTIZED_DTYPES or bound.values.get("out_dtype") not in (None, torch.float32):
        return None
    return values


def _float_like(value: SSAValue, dtype: torch.dtype = torch.float32) -> Attribute:
    ty = value.type
    assert isinstance(ty, TensorType)
    return TensorType(element_type(dtype), ty.get_shape(), ty.encoding)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


@dataclass
class DecomposeQuantizePair(RewritePattern):
    """``dequantize_per_tensor(quantize_per_tensor(x))`` with equal parameters -> float32 ops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: OperatorOp, rewriter: PatternRewriter) -> None:
        dequantize = _operator(op, DEQUANTIZE)
        if dequantize is None or len(dequantize.inputs) != 1:
            return
        quantize = _operator(dequantize.inputs[0].owner, QUANTIZE)  # pyright: ignore[reportArgumentType]
        if quantize is None or len(quantize.inputs) != 1:
            return
        x = quantize.inputs[0]
        if not isinstance(x.type, TensorType) or dtype_of(x.type) != torch.float32:
            return
        params = _parameters(quantize)
        if params is None or _parameters(dequantize) != params:
            return
        for use in quantize.outputs[0].uses:
            other = _operator(use.operation, DEQUANTIZE)
            if other is None or _parameters(other) != params:
                return
        f32, i1 = _float_like(x), _float_like(x, torch.bool)
        ops: list[Operation] = []

        def emit(cls: type[AtenOp], result: Attribute, **args: Any) -> SSAValue:
            new = cls.from_arguments(args, [result])
            new.location = dequantize.location
            ops.append(new)
            return new.results[0]

        scale, zero_point = params["scale"], params["zero_point"]
        q = emit(AtenMulScalarOp, f32, self=x, other=1.0 / scale)
        q = emit(AtenRound_Op, f32, self=q)
        q = emit(AtenAddScalarOp, f32, self=q, other=zero_point, alpha=1)
        q = emit(AtenClamp_Op, f32, self=q, min=params["quant_min"], max=params["quant_max"])
        # q is NaN exactly where x is (x * (1/scale) is NaN only for a NaN x while 1/scale is
        # finite and not 0 in float32): testing x keeps q read once, so the pair fuses into one kernel
        tested = x if _keeps_nan_to_x(1.0 / scale) else q
        not_nan = emit(AtenEqTensorOp, i1, self=tested, other=tested)
        q = emit(AtenWhereScalarOtherOp, f32, condition=not_nan, self=q, other=0.0)
        y = emit(AtenSubScalarOp, f32, self=q, other=zero_point, alpha=1)
        y = emit(AtenMulScalarOp, f32, self=y, other=scale)
        rewriter.replace(dequantize, ops, [y])
        if not quantize.outputs[0].uses:  # a torch.operator is not Pure: DCE keeps it
            rewriter.erase(quantize)
        record(NAME, "quantize-dequantize pairs decomposed")


def row_scales_attr(op: OperatorOp, operands: tuple[torch.Tensor, ...]) -> Attribute | None:
    """For ``constant-fold``: the ``ziggurat.row_scales`` its literal of ``op`` carries, when
    ``op`` dequantizes a constant int8 weight (a linear's ``[N, K]``, a convolution's
    ``[O, I, kh, kw]``) along axis 0 with zero zero points."""
    if _operator(op, DEQUANTIZE_PER_CHANNEL) is None or len(operands) != 3:
        return None
    weight, scales, zero_points = operands
    bound = op.arguments().values
    if (weight.dtype != torch.int8 or weight.dim() < 2 or bound.get("axis") != 0
            or bound.get("out_dtype") not in (None, torch.float32) or scales.dtype != torch.float32
            or tuple(scales.shape) != (weight.shape[0],) or bool(zero_points.ne(0).any())):
        return None
    return DenseIntOrFPElementsAttr.from_list(TensorType(f32, [int(weight.shape[0])]), [float(v) for v in scales.tolist()])


def _keeps_nan_to_x(factor: object) -> bool:
    """``x * factor`` (in float32) is NaN only where ``x`` is: ``factor`` is finite and not 0."""
    if isinstance(factor, bool) or not isinstance(factor, int | float):
        return False
    f = float(torch.tensor(float(factor), dtype=torch.float32))
    return math.isfinite(f) and f != 0.0


def _owner(value: SSAValue, cls: type[AtenOp]) -> Any:
    return value.owner if isinstance(value.owner, cls) else None


def _integer(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value != int(value):
        return None
    return int(value)


@dataclass(frozen=True)
class DecomposedPair:
    """The ops of a decomposed pair that compute a value (:func:`decomposed_pair`)."""

    #: the value quantized
    x: SSAValue
    #: ``x * multiplier``, round, ``+ zp``, clamp, the NaN test, where, ``- zp``, ``* scale``
    ops: tuple[Operation, ...]
    multiplier: float
    scale: float
    zero_point: int
    quant_min: int
    quant_max: int


def decomposed_pair(value: SSAValue) -> DecomposedPair | None:
    """The ops of a decomposed pair when they compute ``value`` (the proof that every element is
    ``(q - zero_point) * scale`` for an integer ``q`` in ``[quant_min, quant_max]``, NaN
    included: it became 0)::

        (where(t == t, clamp(round(x * s') + zp, lo, hi), 0) - zp) * scale

    with ``t`` the clamped value, or ``x`` where ``s'`` is finite and not 0 in float32
    (``x * s'`` is then NaN only where ``x`` is), integer ``zp``, ``lo``, ``hi``; None for any
    other value."""
    mul = _owner(value, AtenMulScalarOp)
    sub = _owner(mul.self_, AtenSubScalarOp) if mul is not None else None
    where = _owner(sub.self_, AtenWhereScalarOtherOp) if sub is not None else None
    clamp = _owner(where.self_, AtenClamp_Op) if where is not None else None
    add = _owner(clamp.self_, AtenAddScalarOp) if clamp is not None else None
    rnd = _owner(add.self_, AtenRound_Op) if add is not None else None
    scaled = _owner(rnd.self_, AtenMulScalarOp) if rnd is not None else None
    test = _owner(where.condition, AtenEqTensorOp) if where is not None else None
    if (mul is None or sub is None or where is None or clamp is None or add is None or rnd is None or scaled is None
            or test is None):
        return None
    x = scaled.self_
    tested = test.self_
    if tested is not test.other or not (tested is clamp.result or (tested is x and _keeps_nan_to_x(scaled.other_value))):
        return None  # the NaN test must cover every NaN the clamped value can hold
    scale, multiplier = mul.other_value, scaled.other_value
    zero_point, low, high = _integer(sub.other_value), _integer(clamp.min_value), _integer(clamp.max_value)
    if (zero_point is None or low is None or high is None or _integer(add.other_value) != zero_point
            or add.alpha_value != 1 or sub.alpha_value != 1 or where.other_value != 0 or low > high
            or not isinstance(scale, float) or not math.isfinite(scale) or scale <= 0
            or isinstance(multiplier, bool) or not isinstance(multiplier, int | float)):
        return None
    return DecomposedPair(x, (scaled, rnd, add, clamp, test, where, sub, mul), float(multiplier), scale,
                          zero_point, low, high)


def dequantized_parameters(value: SSAValue) -> tuple[float, int, int, int] | None:
    """``(scale, zero_point, quant_min, quant_max)`` when every element of ``value`` is
    ``(q - zero_point) * scale`` for an integer ``q`` in ``[quant_min, quant_max]``: a value a
    decomposed pair computes (:func:`decomposed_pair`), or a fused op whose last post-op is
    ``#fused.requantize`` (the same ops); None for any other value."""
    owner = value.owner
    if isinstance(owner, FusedOp):
        requantize = owner.requantize()
        return requantize.values if isinstance(requantize, RequantizePostOpAttr) else None
    pair = decomposed_pair(value)
    return None if pair is None else (pair.scale, pair.zero_point, pair.quant_min, pair.quant_max)


def int8_rows(weight: torch.Tensor, scales: torch.Tensor) -> torch.Tensor | None:
    """The int8 ``W`` whose rows (dim 0) times ``scales`` are ``weight`` bit for bit in float32,
    or None: a folded dequantized weight (:func:`row_scales`) taken back to its integers."""
    if (weight.dtype != torch.float32 or weight.dim() < 1 or tuple(scales.shape) != (weight.shape[0],)
            or not bool((scales > 0).all())):
        return None
    rows = scales.reshape([-1] + [1] * (weight.dim() - 1))
    w = torch.round(weight.double() / rows.double())
    if not bool(((w >= -128) & (w <= 127)).all()):
        return None
    w8 = w.to(torch.int8)
    back = (w8.to(torch.float32) * rows).contiguous()
    return w8 if torch.equal(back.view(torch.int32), weight.contiguous().view(torch.int32)) else None


def row_scales(value: SSAValue) -> torch.Tensor | None:
    """The float32 row scales of a folded int8 weight (:func:`row_scales_attr`)."""
    owner = value.owner
    attr = owner.attributes.get(ROW_SCALES_ATTR) if isinstance(owner, LiteralOp) else None
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        return None
    return torch.tensor([float(v) for v in attr.get_values()], dtype=torch.float32)  # pyright: ignore


@dataclass(frozen=True)
class DecomposeQuantizePass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DecomposeQuantizePair(), apply_recursively=False).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
