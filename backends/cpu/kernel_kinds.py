"""Which ``kernel`` op a torch/fused op becomes, and the properties of that kernel
(``convert-fused-to-kernel``).

The kind follows from what the CPU lowering of the op does, by the family that registers it
(``backends/cpu/lowering/<family>.py``): element-wise families become ``kernel.pointwise``,
``reductions`` ``kernel.reduction``, ``scans`` ``kernel.scan``, ``indexing``
``kernel.gather``, GEMM-shaped ops ``kernel.gemm``, 2-d convolutions ``kernel.conv``, the
other native families ``kernel.composite``; an op with no native lowering, or with a value
of a dtype the backend does not compute, ``kernel.fallback``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineExpr, AffineMap

from ziggurat.backends.cpu.lowering.driver import static_fallback_reason
from ziggurat.backends.cpu.lowering.registry import lowerings
from ziggurat.dialects.fused import Conv2dOp, LinearOp, MatmulOp
from ziggurat.dialects.kernel import (
    CompositeOp,
    ConvOp,
    ConvSpecAttr,
    FallbackOp,
    GatherOp,
    GemmOp,
    GemmSpecAttr,
    KernelOp,
    PointwiseOp,
    ReductionOp,
    ScanOp,
)
from ziggurat.dialects.torch.op_registry import op_key
from ziggurat.dialects.torch.ops_base import AtenOp

#: lowering family -> kernel kind (a family not named here is a composite of its own name)
FAMILY_KINDS: dict[str, type[KernelOp]] = {
    "arithmetic": PointwiseOp, "elementwise": PointwiseOp, "logic": PointwiseOp, "scalars": PointwiseOp,
    "views": PointwiseOp, "shape_ops": PointwiseOp, "padding": PointwiseOp, "creation": PointwiseOp,
    "reductions": ReductionOp, "scans": ScanOp, "indexing": GatherOp,
}
#: families whose ops combine the elements of a window per output (a norm, softmax)
WINDOWED_FAMILIES = ("normalization", "losses", "pooling", "attention", "sorting")
#: aten GEMMs whose operands are matrices or batches of them
GEMM_KEYS = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::matmul", "aten::linear")


@dataclass
class KernelKind:
    """The kernel op class an op becomes, and that op's kind-specific properties."""

    op_class: type[KernelOp]
    properties: dict[str, Attribute] = field(default_factory=dict[str, Attribute])


def _shape(ty: Attribute) -> tuple[int, ...] | None:
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else None


def _tensor_shapes(values: object) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for v in values:  # type: ignore[attr-defined]
        shape = _shape(v.type)
        if shape is not None:
            out.append(shape)
    return out


def broadcast_maps(op: Operation) -> list[AffineMapAttr] | None:
    """One map per distinct tensor operand and the result of an element-wise op whose operands
    all broadcast to its one result (None when they do not)."""
    if len(op.results) != 1:
        return None
    out = _shape(op.results[0].type)
    if out is None:
        return None
    operands = list(dict.fromkeys(op.operands))  # each value once, as the kernel takes it
    maps: list[AffineMapAttr] = []
    for shape in [*_tensor_shapes(operands), out]:
        if len(shape) > len(out):
            return None
        exprs: list[AffineExpr] = []
        for i, size in enumerate(shape):
            d = len(out) - len(shape) + i
            if size == out[d]:
                exprs.append(AffineExpr.dimension(d))
            elif size == 1:
                exprs.append(AffineExpr.constant(0))
            else:
                return None
        maps.append(AffineMapAttr(AffineMap(len(out), 0, tuple(exprs))))
    return maps


def _window(op: Operation) -> int:
    """How many input elements each output element of ``op`` combines (at least 1)."""
    ins, outs = _tensor_shapes(op.operands), _tensor_shapes(op.results)
    if not ins or not outs:
        return 1
    numel_in, numel_out = math.prod(ins[0]), math.prod(outs[0])
    if numel_out and numel_in > numel_out:
        return max(1, numel_in // numel_out)
    if isinstance(op, AtenOp):
        args = op.arguments()
        dim = args.get("dim")
        if isinstance(dim, int) and ins[0]:
            return ins[0][dim % len(ins[0])]
        normalized = args.get("normalized_shape")
        if isinstance(normalized, list | tuple) and normalized:
            return math.prod(int(n) for n in normalized)  # pyright: ignore[reportUnknownArgumentType]
    return 1


def _int_array(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownVariableType]


def _gemm_spec(op: Operation) -> GemmSpecAttr | None:
    ins, outs = _tensor_shapes(op.operands), _tensor_shapes(op.results)
    if len(ins) < 2 or len(outs) != 1 or len(outs[0]) < 2 or any(len(s) < 2 for s in ins[:2]):
        return None
    out = outs[0]
    if isinstance(op, LinearOp):
        logical = _int_array(op.weight_shape) if op.weight_shape is not None else ins[1]
        m, n, k = math.prod(ins[0][:-1]), logical[0], logical[1]
        return GemmSpecAttr(1, m, n, k, op.weight_layout.data if op.weight_layout is not None else "NK")
    a = ins[1] if op_key(op) in ("aten::addmm", "aten::baddbmm") else ins[0]
    b_layout = "NK" if op_key(op) == "aten::linear" else "KN"
    if isinstance(op, MatmulOp) and op.weight_layout is not None:
        b_layout = op.weight_layout.data
    return GemmSpecAttr(math.prod(out[:-2]) or 1, out[-2], out[-1], a[-1], b_layout)


def _conv_spec(op: Conv2dOp) -> ConvSpecAttr | None:
    x, out = _shape(op.input.type), _shape(op.result.type)
    weight = _int_array(op.weight_shape) if op.weight_shape is not None else _shape(op.weight.type)
    if x is None or out is None or weight is None or len(x) != 4 or len(weight) != 4:
        return None
    values = {k: _int_array(getattr(op, k)) for k in ("stride", "padding", "dilation")}
    if any(len(v) != 2 for v in values.values()):
        return None
    return ConvSpecAttr(n=x[0], c=x[1], h=x[2], w=x[3], o=weight[0], kh=weight[2], kw=weight[3],
                        stride=values["stride"], padding=values["padding"], dilation=values["dilation"],
                        groups=op.groups.value.data, oh=out[2], ow=out[3],
                        weight=op.weight_layout.data if op.weight_layout is not None else "OIhw")


def kernel_kind(op: Operation) -> KernelKind:
    """The kernel ``op`` becomes."""
    reason = static_fallback_reason(op)
    if reason is not None:
        return KernelKind(FallbackOp, {"reason": StringAttr(reason)})
    key = op_key(op)
    if isinstance(op, Conv2dOp) and (spec := _conv_spec(op)) is not None:
        return KernelKind(ConvOp, {"spec": spec})
    if isinstance(op, LinearOp | MatmulOp) or key in GEMM_KEYS:
        if (spec := _gemm_spec(op)) is not None:
            return KernelKind(GemmOp, {"spec": spec})
    entry = lowerings().entries(key)[0]
    family = entry.fn.__module__.rsplit(".", 1)[-1]
    kind = FAMILY_KINDS.get(family, CompositeOp)
    if kind is PointwiseOp:
        maps = broadcast_maps(op) if family in ("arithmetic", "elementwise", "logic") else None
        props: dict[str, Attribute] = {"indexing_maps": ArrayAttr(maps)} if maps else {}
        if family == "views":
            props["view"] = UnitAttr()
        return KernelKind(PointwiseOp, props)
    if kind is ReductionOp:
        return KernelKind(ReductionOp, {"window": IntegerAttr(_window(op), i64)})
    if kind is ScanOp:
        dim = op.arguments().get("dim") if isinstance(op, AtenOp) else 0
        rank = len(_tensor_shapes(op.results)[0]) if _tensor_shapes(op.results) else 1
        return KernelKind(ScanOp, {"dim": IntegerAttr(int(dim or 0) % max(rank, 1), i64)})
    if kind is GatherOp:
        return KernelKind(GatherOp)
    props = {"family": StringAttr(family)}
    if family in WINDOWED_FAMILIES:
        props["window"] = IntegerAttr(_window(op), i64)
    return KernelKind(CompositeOp, props)
