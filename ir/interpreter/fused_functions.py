"""Reference semantics of the ``fused`` dialect: the base op with torch, then the post-ops.

Packed weights (``weight_layout``) are unpacked with the layout contract of
``dialects/fused/pack.py``, so a ``prepack-weights`` rewrite is checked numerically.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from ziggurat.dialects.fused import (
    BinaryPostOpAttr,
    Conv2dOp,
    FusedOp,
    LinearOp,
    INPUT_QUANTIZATION_ATTR,
    OTHER_QUANTIZATION_ATTR,
    MatmulOp,
    QuantizePostOpAttr,
    RequantizePostOpAttr,
    UnaryPostOpAttr,
    quantization_of,
)
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.interpreter.half_convolution import convolve
from ziggurat.ir.interpreter.torch_functions import check_result
from ziggurat.ir.locations import op_location


def apply_unary(post: UnaryPostOpAttr, y: torch.Tensor) -> torch.Tensor:
    kind, p = post.kind.data, post.values
    match kind:
        case "relu":
            return torch.relu(y)
        case "relu6":
            return F.relu6(y)
        case "gelu_erf":
            return F.gelu(y)
        case "gelu_tanh":
            return F.gelu(y, approximate="tanh")
        case "silu":
            return F.silu(y)
        case "sigmoid":
            return torch.sigmoid(y)
        case "tanh":
            return torch.tanh(y)
        case "hardtanh":
            return F.hardtanh(y, p[0], p[1])
        case "hardswish":
            return F.hardswish(y)
        case "hardsigmoid":
            return F.hardsigmoid(y)
        case "leaky_relu":
            return F.leaky_relu(y, p[0])
        case "clamp":
            return torch.clamp(y, None if p[0] == -float("inf") else p[0],
                               None if p[1] == float("inf") else p[1])
        case _:
            raise ZigguratError(f"unknown unary post-op {kind}", op="fused")


def apply_requantize(post: RequantizePostOpAttr | QuantizePostOpAttr, y: torch.Tensor) -> torch.Tensor:
    """PT2E's quantize -> dequantize pair in float32, op for op as ``decompose-quantize`` writes it
    (``#fused.quantize``: the quantize only, its integers as uint8)."""
    scale, zero_point, low, high = post.values
    t = torch.round(y * (1.0 / scale)) + zero_point
    q = torch.where(t == t, torch.clamp(t, low, high), 0.0)
    if isinstance(post, QuantizePostOpAttr):
        return q.to(torch.uint8)
    return (q - zero_point) * scale


def dequantized(op: FusedOp, name: str, value: torch.Tensor | None) -> torch.Tensor | None:
    """A ``ui8`` ``input``/``other`` as the op reads it: ``(q - zero_point) * scale`` in float32."""
    if value is None or value.dtype != torch.uint8 or name not in ("input", "other"):
        return value
    q = quantization_of(op, INPUT_QUANTIZATION_ATTR if name == "input" else OTHER_QUANTIZATION_ATTR)
    if q is None:
        raise ZigguratError(f"a uint8 {name} without its quantization attribute", op=op.name, location=op_location(op))
    return (value.to(torch.float32) - q[1]) * q[0]


def apply_post_ops(op: FusedOp, y: torch.Tensor, other: torch.Tensor | None) -> torch.Tensor:
    for post in op.post_ops.data:
        if isinstance(post, UnaryPostOpAttr):
            y = apply_unary(post, y)
        elif isinstance(post, BinaryPostOpAttr):
            assert other is not None
            alpha = post.alpha.value.data
            y = torch.add(y, other, alpha=alpha) if post.kind.data == "add" else torch.sub(y, other, alpha=alpha)
        else:
            assert isinstance(post, RequantizePostOpAttr | QuantizePostOpAttr)
            y = apply_requantize(post, y)
    return y


def logical_weight(op: FusedOp, weight: torch.Tensor) -> torch.Tensor:
    """The weight in its original layout (unpacking a prepacked one)."""
    if op.weight_layout is None:
        return weight
    from ziggurat.dialects.fused import pack, pack_int8

    layout = op.weight_layout.data
    if op.weight_shape is None:
        raise ZigguratError(f"packed weight layout '{op.weight_layout.data}' without weight_shape",
                            op=op.name, location=op_location(op))
    shape = [int(v) for v in op.weight_shape.get_values()]  # pyright: ignore[reportAttributeAccessIssue]
    if layout == pack_int8.LAYOUT and isinstance(op, LinearOp):
        return pack_int8.unpack_quantized_linear(weight, int(shape[0]), int(shape[1]))
    if layout == pack_int8.LAYOUT and isinstance(op, Conv2dOp):
        o, i, kh, kw = (int(v) for v in shape)
        return pack_int8.unpack_quantized_conv(weight, (o, i, kh, kw))
    if layout.startswith("KN") and isinstance(op, LinearOp):
        return pack.unpack_linear_weight(weight, int(shape[0]))
    if layout.startswith("KN") and isinstance(op, MatmulOp):
        return pack.unpack_gemm_b(weight, int(shape[1]))
    if layout.startswith("KN") and isinstance(op, Conv2dOp):
        o, i, kh, kw = shape
        return pack.unpack_conv_weight_gemm(weight, (o, i, kh, kw), int(op.groups.value.data))
    if layout.startswith("OIhw") and isinstance(op, Conv2dOp):
        w = pack.unpack_conv_weight(weight, int(shape[0]), int(shape[1]))
        return w
    raise ZigguratError(f"unknown weight layout '{layout}'", op=op.name, location=op_location(op))


def _values(op: FusedOp, args: tuple[Any, ...]) -> dict[str, Any]:
    env = dict(zip(op.operands, args, strict=True))
    defs = type(op).get_irdl_definition().operands
    return {name: dequantized(op, name, env[getattr(op, name)] if getattr(op, name) is not None else None)
            for name, _ in defs}


@register_impls
class FusedFunctions(InterpreterFunctions):
    @impl(Conv2dOp)
    def run_conv2d(self, interpreter: Interpreter, op: Conv2dOp, args: tuple[Any, ...]):
        v = _values(op, args)
        y = convolve(F.conv2d, (v["input"], logical_weight(op, v["weight"]), v["bias"]), dict(
            stride=list(op.stride.get_values()), padding=list(op.padding.get_values()),  # pyright: ignore
            dilation=list(op.dilation.get_values()), groups=int(op.groups.value.data),  # pyright: ignore
        ))
        return (self._finish(op, y, v["other"]),)

    @impl(LinearOp)
    def run_linear(self, interpreter: Interpreter, op: LinearOp, args: tuple[Any, ...]):
        v = _values(op, args)
        y = F.linear(v["input"], logical_weight(op, v["weight"]), v["bias"])
        return (self._finish(op, y, v["other"]),)

    @impl(MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: MatmulOp, args: tuple[Any, ...]):
        v = _values(op, args)
        a, b = v["a"], logical_weight(op, v["b"])
        if op.bf16_products_in_float32():  # exact products, float32 sums, no rounding to bf16
            a, b = a.float(), b.float()
        y = torch.matmul(a, b)
        alpha, beta = op.alpha.value.data, op.beta.value.data
        if alpha != 1.0:
            y = y * alpha
        if v["bias"] is not None:
            y = y + (v["bias"] if beta == 1.0 else beta * v["bias"])
        return (self._finish(op, y, v["other"]),)

    def _finish(self, op: FusedOp, y: torch.Tensor, other: torch.Tensor | None) -> torch.Tensor:
        y = apply_post_ops(op, y, other)
        check_result(op, op.results[0].type, y)
        return y
