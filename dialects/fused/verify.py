"""The ``fused`` ops' verifier: attributes and types against eager semantics.

A fused op is its base computation (``aten::conv2d``, ``aten::linear``, ``torch.matmul``
scaled by ``alpha`` plus ``beta * bias``) followed by its post-ops.  The verifier checks

* the attributes the backends trust: conv ``stride``/``dilation`` positive and ``padding``
  non-negative (two values each), ``groups`` positive and dividing the channels, a binary
  post-op's ``alpha`` finite, a prepacked weight's ``weight_layout``/``weight_shape`` pair
  (the packed operand has exactly the shape of the logical weight in that layout, see
  ``layouts.py``);
* shapes static and the result a floating-point tensor (``ui8`` after ``#fused.quantize``,
  whose float32 values it quantizes; a ``ui8`` ``input``/``other`` is read as float32);
* the result type against torch's: the base op and the binary post-op run on meta tensors
  of the operand types (the logical weight's for a packed one), through the helper the
  ``torch`` dialect's verifier uses (``dialects/torch/meta_eval.py``), with ``bias`` and
  ``other`` required to broadcast to the result rather than widen it.

Verdicts are cached by (op name, operand types, properties): verification runs after
every pass.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
from xdsl.dialects.builtin import DenseArrayBase, IntegerType, TensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.fused.layouts import INT8_LAYOUTS, LayoutError, packed_shape
from ziggurat.dialects.torch.meta_eval import Verdict, cached, check_static, evaluate, tensors
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import is_float_element, ui8

if TYPE_CHECKING:
    from ziggurat.dialects.fused import FusedOp


class _Invalid(ValueError):
    """What is wrong with the op (the diagnostic's text)."""


def _ints(attr: DenseArrayBase, what: str) -> list[int]:
    if not isinstance(attr.elt_type, IntegerType):
        raise _Invalid(f"{what} must be an integer array, got {attr}")
    return [int(v) for v in attr.elt_type.unpack(attr.data.data, len(attr))]  # pyright: ignore


def _shape(ty: Attribute) -> tuple[int, ...]:
    assert isinstance(ty, TensorType)
    return tuple(int(d) for d in ty.get_shape())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


def _base(op: FusedOp) -> str:
    return op.name.removeprefix("fused.")


def logical_weight_type(op: FusedOp) -> Attribute:
    """The type of the weight (``b`` of a matmul) before packing."""
    packed = op.operands[1].type
    if op.weight_layout is None and op.weight_shape is None:
        return packed
    if op.weight_layout is None or op.weight_shape is None:
        raise _Invalid("weight_layout and weight_shape describe a packed weight together; one is missing")
    logical = _ints(op.weight_shape, "weight_shape")
    groups = int(op.properties["groups"].value.data) if _base(op) == "conv2d" else 1  # pyright: ignore
    try:
        expected = packed_shape(_base(op), op.weight_layout.data, logical, max(groups, 1))
    except LayoutError as e:
        raise _Invalid(str(e)) from None
    if _shape(packed) != expected:
        raise _Invalid(f"the weight packed as {op.weight_layout.data} from weight_shape {logical} has shape "
                       f"{list(expected)}, the operand is {packed}")
    assert isinstance(packed, TensorType)
    if op.weight_layout.data in INT8_LAYOUTS:  # int8 times a scale per row: a float32 weight
        return TensorType(f32, logical)
    return TensorType(packed.get_element_type(), logical)  # pyright: ignore[reportUnknownArgumentType]


def _as_float32(ty: Attribute) -> Attribute:
    assert isinstance(ty, TensorType)
    return TensorType(f32, ty.get_shape())  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]


def _logical_type(op: FusedOp, name: str, value: SSAValue) -> Attribute:
    """An operand's type as the op computes on it: a ``ui8`` ``input``/``other`` (quantized
    integers, ``ziggurat.input_quantization``/``other_quantization``) is float32."""
    ty = value.type
    if name in ("input", "other") and isinstance(ty, TensorType) and ty.get_element_type() == ui8:
        return _as_float32(ty)  # verify_post_ops checked the quantization attribute
    return ty


def logical_result_type(op: FusedOp) -> Attribute:
    """The result's type before a ``#fused.quantize`` stores it as integers (float32 then)."""
    result = op.results[0].type
    return _as_float32(result) if op.quantizes_result() else result


def _check_conv_attributes(op: FusedOp, weight: tuple[int, ...]) -> None:
    ranges = (("stride", 1, "positive"), ("padding", 0, "non-negative"), ("dilation", 1, "positive"))
    for name, low, meaning in ranges:
        values = _ints(op.properties[name], name)  # pyright: ignore[reportArgumentType]
        if len(values) != 2 or any(v < low for v in values):
            raise _Invalid(f"{name} must be two {meaning} integers, got {values}")
    groups = int(op.properties["groups"].value.data)  # pyright: ignore[reportAttributeAccessIssue]
    channels = _shape(op.operands[0].type)[1]
    if len(weight) != 4:
        raise _Invalid(f"the weight must be [O, I/groups, kh, kw], got shape {list(weight)}")
    if groups < 1 or channels % groups or weight[0] % groups or weight[1] * groups != channels:
        raise _Invalid(f"groups = {groups} does not fit {channels} input channels and a weight of shape "
                       f"{list(weight)} (groups must be positive, divide both channel counts, and "
                       f"weight dim 1 * groups must be the input channels)")


def _check_attributes(op: FusedOp, weight: Attribute) -> None:
    result = logical_result_type(op)
    assert isinstance(result, TensorType)
    if not is_float_element(result.get_element_type()):
        raise _Invalid(f"fused ops compute in floating point; the result is {result}")
    # eager's conv/linear/addmm kernels take one dtype (the meta kernels do not all check); a
    # float32 bias of bf16 products summed in float32 is added to those sums
    from ziggurat.dialects.fused import MatmulOp

    skipped = {"other", "bias"} if isinstance(op, MatmulOp) and op.bf16_products_in_float32() else {"other"}
    computing = [(n, weight if i == 1 else _logical_type(op, n, v)) for i, (n, v) in enumerate(_present(op)) if n not in skipped]
    elements = {n: ty.get_element_type() for n, ty in computing if isinstance(ty, TensorType)}
    if len(set(elements.values())) > 1:
        raise _Invalid(", ".join(elements) + " must share one element type, got "
                       + ", ".join(str(e) for e in elements.values()))
    binary = op.binary()
    if binary is not None and not math.isfinite(binary.alpha.value.data):
        raise _Invalid(f"the binary post-op's alpha must be finite, got {binary.alpha.value.data}")
    if _base(op) == "conv2d":
        if len(_shape(op.operands[0].type)) != 4:
            raise _Invalid(f"input must be NCHW (rank 4), got {op.operands[0].type}")
        _check_conv_attributes(op, _shape(weight))
        bias: SSAValue | None = getattr(op, "bias")
        if bias is not None and _shape(bias.type) != _shape(weight)[:1]:
            raise _Invalid(f"bias must have one element per output channel, [{_shape(weight)[0]}], got {bias.type}")


def _compute(op: FusedOp, t: dict[str, torch.Tensor | None]) -> list[torch.Tensor]:
    """The op's eager computation on tensors ``t`` (by operand name): the base op without
    ``bias``, with it, then with the binary post-op (the unary one keeps a float type)."""
    bias = t["bias"]
    match _base(op):
        case "conv2d":
            p = op.properties
            core = with_bias = torch.ops.aten.conv2d(
                t["input"], t["weight"], bias, _ints(p["stride"], "stride"),  # pyright: ignore[reportArgumentType]
                _ints(p["padding"], "padding"), _ints(p["dilation"], "dilation"),  # pyright: ignore[reportArgumentType]
                int(p["groups"].value.data))  # pyright: ignore[reportAttributeAccessIssue]
        case "linear":
            core = torch.ops.aten.linear(t["input"], t["weight"])
            with_bias = core if bias is None else torch.ops.aten.linear(t["input"], t["weight"], bias)
        case _:
            core = torch.matmul(t["a"], t["b"])  # pyright: ignore[reportArgumentType]
            alpha, beta = (float(op.properties[k].value.data) for k in ("alpha", "beta"))  # pyright: ignore
            core = core * alpha if alpha != 1.0 else core
            with_bias = core if bias is None else core + (bias if beta == 1.0 else beta * bias)
    binary, other = op.binary(), t["other"]
    final = with_bias
    if binary is not None and other is not None:
        combine = torch.add if binary.kind.data == "add" else torch.sub
        final = combine(with_bias, other, alpha=binary.alpha.value.data)
    return [core, with_bias, final]


def _present(op: FusedOp) -> list[tuple[str, SSAValue]]:
    """The op's operands by name (absent optional ones left out)."""
    named = ((name, getattr(op, name)) for name, _ in type(op).get_irdl_definition().operands)
    return [(name, value) for name, value in named if value is not None]


def _infer(op: FusedOp) -> Verdict:
    try:
        weight = logical_weight_type(op)
        _check_attributes(op, weight)
    except _Invalid as e:
        return None, str(e)
    names = [name for name, _ in type(op).get_irdl_definition().operands]
    present = _present(op)
    operand_types: list[Any] = [weight if i == 1 else _logical_type(op, n, v) for i, (n, v) in enumerate(present)]

    def run(device: str) -> list[Any]:
        t: dict[str, torch.Tensor | None] = dict.fromkeys(names)
        t.update(zip([name for name, _ in present], tensors(operand_types, device), strict=True))
        with torch.no_grad():
            return _compute(op, t)

    types, error = evaluate(run, operand_types)
    if error is not None:
        return None, f"torch refuses these operands and attributes: {error}"
    if types is None:
        return None, None
    core, with_bias, final = types
    if core is None or with_bias is None or final is None:
        return None, None  # a dtype without an xDSL counterpart
    for what, before, after in (("bias", core, with_bias), ("other", with_bias, final)):
        if after != before and _shape(after) != _shape(before):
            value: SSAValue = getattr(op, what)
            return None, (f"{what} of type {value.type} does not broadcast to the result shape "
                          f"{list(_shape(before))}: it widens it to {list(_shape(after))}")
    return (final,), None


def _key(op: FusedOp) -> Any:
    return (op.name, tuple(v.type for v in op.operands), tuple(sorted(op.properties.items())))


def _float32_product_of_bf16(op: FusedOp, computed: Any) -> bool:
    """A ``fused.matmul`` of bf16 operands may declare a float32 result of the shape torch
    computes (``MatmulOp.bf16_products_in_float32``)."""
    from ziggurat.dialects.fused import MatmulOp

    declared = op.results[0].type
    return (isinstance(op, MatmulOp) and op.bf16_products_in_float32() and isinstance(computed, TensorType)
            and isinstance(declared, TensorType) and declared.get_shape() == computed.get_shape())


def verify_fused(op: FusedOp) -> None:
    """Raise a VerifyException at ``op`` naming what is wrong with it."""
    op.verify_post_ops(getattr(op, "other", None))
    if check_static(op):
        return  # sizes known at run time only
    types, error = cached(_key(op), lambda: _infer(op))
    location = op_location(op)
    name = f"{op.name} at {location}" if location else op.name
    if error is not None:
        raise VerifyException(f"{name}: {error}")
    if types is not None and types[0] is not None and logical_result_type(op) != types[0] \
            and not _float32_product_of_bf16(op, types[0]):
        raise VerifyException(f"{name}: result is declared {op.results[0].type}, but the op computes "
                              f"{types[0]} for these operands and attributes")


__all__ = ["logical_result_type", "logical_weight_type", "verify_fused"]
