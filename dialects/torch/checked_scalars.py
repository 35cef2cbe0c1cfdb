"""Numbers eager converts with an overflow check, which then raises rather than computes.

``x.masked_fill(m, 1e10)`` on a float16 tensor raises in eager ("value cannot be converted to
type c10::Half without overflow"), as does ``clamp(max=1e39)`` in float32: eager converts those
numbers to the tensor's type (``Scalar::to<scalar_t>``, checked) or to its compute type (float32
for bf16 and float16).  A native kernel would write infinity.  So the CPU backend runs such an
op through torch, which raises at the call as eager does (``InputError`` naming the op and its
line); ``fuse-post-ops`` leaves it unfused and ``widen-half-floats`` unwidened (float32's range
would let a float16 overflow pass).  The TensorRT partitioner keeps it out of its segments too
(``pad`` and ``hardtanh`` built layers with an infinity there).

Which ops check, and into which type, was measured on torch 2.13's CPU kernels: every op of
these tables raises on a number past the type's range in float32, bf16, float16 and int32 (but
``where`` and the ops of ``_COMPUTE_TYPE`` in bf16 and float16, which convert to float32).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ziggurat.dialects.torch.ops_base import TorchOp
from ziggurat.dialects.torch.op_registry import op_key
from ziggurat.ir.types import dtype_of

#: op -> its number arguments eager converts to the result's type, checked
_RESULT_TYPE: Mapping[str, tuple[str, ...]] = {
    **{f"aten::{name}": ("value",) for name in ("masked_fill.Scalar", "masked_fill_.Scalar", "fill.Scalar",
                                                 "fill_.Scalar", "index_fill.int_Scalar", "scatter.value",
                                                 "constant_pad_nd", "pad")},
    **{f"aten::{name}": ("fill_value",) for name in ("full", "full_like", "new_full")},
    **{f"aten::{name}": ("min", "max") for name in ("clamp", "clamp_", "clip", "clip_")},
    "aten::clamp_min": ("min",), "aten::clamp_min_": ("min",), "aten::clamp_max": ("max",), "aten::clamp_max_": ("max",),
    "aten::hardtanh": ("min_val", "max_val"), "aten::hardtanh_": ("min_val", "max_val"),
    "aten::threshold": ("value",), "aten::threshold_": ("value",), "aten::hardshrink": ("lambd",),
    "aten::add.Tensor": ("alpha",), "aten::sub.Tensor": ("alpha",), "aten::add_.Tensor": ("alpha",),
    "aten::sub_.Tensor": ("alpha",),
}
#: op -> its number arguments eager converts to the compute type (float32 for bf16 and float16)
_COMPUTE_TYPE: Mapping[str, tuple[str, ...]] = {
    "aten::where.ScalarOther": ("other",), "aten::where.ScalarSelf": ("self",), "aten::where.Scalar": ("self", "other"),
    "aten::threshold": ("threshold",), "aten::threshold_": ("threshold",), "aten::leaky_relu": ("negative_slope",),
    "aten::leaky_relu_": ("negative_slope",), "aten::elu": ("alpha", "scale", "input_scale"),
    "aten::elu_": ("alpha", "scale", "input_scale"), "aten::celu": ("alpha",), "aten::celu_": ("alpha",),
    "aten::softplus": ("beta", "threshold"), "aten::addcmul": ("value",), "aten::addcdiv": ("value",),
    "aten::lerp.Scalar": ("weight",),
}
#: 16-bit tensors: the exponent is converted to the tensor's type (float32 converts to double)
_HALF_RESULT_TYPE: Mapping[str, tuple[str, ...]] = {"aten::pow.Tensor_Scalar": ("exponent",)}


def _overflows(value: object, dtype: torch.dtype) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or dtype == torch.bool:
        return False
    if dtype.is_floating_point:
        return abs(value) != float("inf") and abs(value) > torch.finfo(dtype).max  # NaN compares False
    if dtype.is_complex:
        return False
    info = torch.iinfo(dtype)
    return not info.min <= value <= info.max  # a NaN too


def overflowing_scalar(op: Operation) -> str | None:
    """Why ``op`` must run through torch: a number eager converts with an overflow check lies
    past its type's range (eager raises).  None when there is no such number."""
    if not isinstance(op, TorchOp) or not op.results or not isinstance(op.results[0].type, TensorType):
        return None
    key = op_key(op)
    try:
        dtype = dtype_of(op.results[0].type)
    except TypeError:
        return None
    half = dtype in (torch.bfloat16, torch.float16)
    compute = torch.float32 if half else dtype
    checks = [(name, dtype) for name in _RESULT_TYPE.get(key, ())]
    if not (half and key.startswith("aten::where.")):  # eager's 16-bit where converts unchecked
        checks += [(name, compute) for name in _COMPUTE_TYPE.get(key, ())]
    if half:
        checks += [(name, dtype) for name in _HALF_RESULT_TYPE.get(key, ())]
    if not checks:
        return None
    arguments = op.arguments()
    for name, target in checks:
        value = arguments.get(name)
        if _overflows(value, target):
            return (f"{name}={value!r} is past {target}'s range: eager raises (value cannot be converted "
                    f"without overflow), so this runs in torch")
    return None
