"""``decompose-quantize``: PT2E's quantize -> dequantize pairs -> the float32 ops they compute.

A model quantized with PT2E (``prepare_pt2e``/``convert_pt2e``, e.g. with torchao's
``X86InductorQuantizer``) holds ``quantized_decomposed::quantize_per_tensor`` ->
``dequantize_per_tensor`` pairs around its convolutions and linears (``torch.operator`` ops:
their namespace is not aten).  Between the two the value is an integer in ``[quant_min,
quant_max]``, which float32 holds exactly, so the pair is, bit for bit as torch computes it
(``torch/ao/quantization/fx/_decomposed.py``)::

    q = clamp(round(x * (1.0 / scale)) + zero_point, quant_min, quant_max)   # float32
    q = where(q == q, q, 0)        # .to(uint8/int8) turns NaN into 0 on x86, as eager does
    y = (q - zero_point) * scale

element-wise float32 ops that fuse and vectorize, where the pair would run in torch.  Only a
quantize whose every use is a dequantize with the same parameters is rewritten (a quantized
value that leaves the graph or feeds another op keeps its ops).  The weights' dequantizations
(``dequantize_per_channel`` of constant int8 tensors) are folded by ``constant-fold``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

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
from ziggurat.dialects.torch.ops_base import OperatorOp
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of, element_type

NAME = "decompose-quantize"

QUANTIZE = "quantized_decomposed::quantize_per_tensor"
DEQUANTIZE = "quantized_decomposed::dequantize_per_tensor"
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
        not_nan = emit(AtenEqTensorOp, i1, self=q, other=q)
        q = emit(AtenWhereScalarOtherOp, f32, condition=not_nan, self=q, other=0.0)
        y = emit(AtenSubScalarOp, f32, self=q, other=zero_point, alpha=1)
        y = emit(AtenMulScalarOp, f32, self=y, other=scale)
        rewriter.replace(dequantize, ops, [y])
        if not quantize.outputs[0].uses:  # a torch.operator is not Pure: DCE keeps it
            rewriter.erase(quantize)
        record(NAME, "quantize-dequantize pairs decomposed")


@dataclass(frozen=True)
class DecomposeQuantizePass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DecomposeQuantizePair(), apply_recursively=False).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
