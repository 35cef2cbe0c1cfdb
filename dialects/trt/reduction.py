"""Layers that reduce or scan along axes: reduce, softmax, pooling, normalization, topk, cumulative."""

from __future__ import annotations

from typing import ClassVar

from collections.abc import Sequence

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, TensorType, i32
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from ziggurat.dialects.trt.base import (
    FLOAT_TYPES,
    INT_TYPES,
    TrtLayerOp,
    bool_attr,
    element_of,
    f32_attr,
    i64_array,
    i64_attr,
    ints,
    mask_attr,
    opt_ints,
    shape_of,
    tensor_of,
)
from ziggurat.dialects.trt.enums import (
    CumulativeOperation,
    CumulativeOperationAttr,
    PaddingMode,
    PaddingModeAttr,
    PoolingType,
    PoolingTypeAttr,
    ReduceOperation,
    ReduceOperationAttr,
    TopKOperation,
    TopKOperationAttr,
)
from ziggurat.dialects.trt.shapes import (
    ShapeError,
    axes_from_mask,
    normalize_axis,
    pooling_output_shape,
    reduce_output_shape,
    single_axis,
    topk_output_shape,
)


@irdl_op_definition
class ReduceOp(TrtLayerOp):
    """IReduceLayer: ``op`` over the axes of the ``axes`` bitmask."""

    name = "trt.reduce"
    LAYER: ClassVar[str] = "IReduceLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)
    op = prop_def(ReduceOperationAttr)
    axes = prop_def(IntegerAttr)
    keep_dims = prop_def(BoolAttr, default_value=bool_attr(False))

    assembly_format = "$op $input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, op: ReduceOperation, axes: int, *, name: str, keep_dims: bool = False) -> None:
        shape = reduce_output_shape(shape_of(input), axes, keep_dims)
        super().__init__(
            operands=[input],
            result_types=[tensor_of(shape, element_of(input))],
            properties={
                "name": StringAttr(name),
                "op": ReduceOperationAttr(op),
                "axes": mask_attr(axes),
                "keep_dims": bool_attr(keep_dims),
            },
        )

    @property
    def axes_list(self) -> tuple[int, ...]:
        return axes_from_mask(self.axes.value.data, len(shape_of(self.input)))

    def verify_layer(self) -> None:
        allowed = (*FLOAT_TYPES, *INT_TYPES[:2])
        self.expect_elements(self.input, allowed, "input")
        shape = reduce_output_shape(shape_of(self.input), self.axes.value.data, bool(self.keep_dims.value.data))
        self.expect_type(self.output, shape, element_of(self.input))


@irdl_op_definition
class SoftMaxOp(TrtLayerOp):
    """ISoftMaxLayer: softmax along the single axis of the ``axes`` bitmask."""

    name = "trt.softmax"
    LAYER: ClassVar[str] = "ISoftMaxLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = prop_def(IntegerAttr)

    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, axes: int, *, name: str) -> None:
        super().__init__(
            operands=[input],
            result_types=[input.type],
            properties={"name": StringAttr(name), "axes": mask_attr(axes)},
        )

    @property
    def axis(self) -> int:
        return single_axis(self.axes.value.data, len(shape_of(self.input)), "ISoftMaxLayer")

    def verify_layer(self) -> None:
        self.expect_elements(self.input, FLOAT_TYPES, "input")
        _ = self.axis
        self.expect_type(self.output, shape_of(self.input), element_of(self.input))


@irdl_op_definition
class PoolingOp(TrtLayerOp):
    """IPoolingLayer (``add_pooling_nd``), 2-D or 3-D windows over [N, C, *spatial]."""

    name = "trt.pooling"
    LAYER: ClassVar[str] = "IPoolingLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    output = result_def(TensorType)
    type = prop_def(PoolingTypeAttr)
    window_size = prop_def(DenseArrayBase)
    stride = opt_prop_def(DenseArrayBase)
    pre_padding = opt_prop_def(DenseArrayBase)
    post_padding = opt_prop_def(DenseArrayBase)
    padding_mode = prop_def(PaddingModeAttr, default_value=PaddingModeAttr(PaddingMode.kEXPLICIT_ROUND_DOWN))
    blend_factor = prop_def(FloatAttr, default_value=f32_attr(0.0))
    average_count_excludes_padding = prop_def(BoolAttr, default_value=bool_attr(True))

    assembly_format = "$type $input attr-dict `:` type($input) `->` type($output)"

    def __init__(
        self,
        input: SSAValue,
        type: PoolingType,
        window_size: Sequence[int],
        *,
        name: str,
        stride: Sequence[int] | None = None,
        pre_padding: Sequence[int] | None = None,
        post_padding: Sequence[int] | None = None,
        padding_mode: PaddingMode = PaddingMode.kEXPLICIT_ROUND_DOWN,
        blend_factor: float = 0.0,
        average_count_excludes_padding: bool = True,
    ) -> None:
        n = len(window_size)
        props: dict[str, object] = {
            "name": StringAttr(name),
            "type": PoolingTypeAttr(type),
            "window_size": i64_array(window_size),
            "padding_mode": PaddingModeAttr(padding_mode),
            "blend_factor": f32_attr(blend_factor),
            "average_count_excludes_padding": bool_attr(average_count_excludes_padding),
        }
        # TensorRT's default stride equals the window.
        for key, value, default in (
            ("stride", stride, list(window_size)),
            ("pre_padding", pre_padding, [0] * n),
            ("post_padding", post_padding, [0] * n),
        ):
            if value is not None and list(value) != default:
                props[key] = i64_array(value)
        shape = pooling_output_shape(
            shape_of(input), window_size, stride or window_size, pre_padding or [0] * n,
            post_padding or [0] * n, padding_mode,
        )
        super().__init__(
            operands=[input],
            result_types=[tensor_of(shape, element_of(input))],
            properties=props,  # pyright: ignore[reportArgumentType]
        )

    def window_values(self) -> tuple[int, ...]:
        return ints(self.window_size)

    def stride_values(self) -> tuple[int, ...]:
        return opt_ints(self.stride, self.window_values())

    def pre_padding_values(self) -> tuple[int, ...]:
        return opt_ints(self.pre_padding, [0] * len(self.window_values()))

    def post_padding_values(self) -> tuple[int, ...]:
        return opt_ints(self.post_padding, [0] * len(self.window_values()))

    def verify_layer(self) -> None:
        self.expect_elements(self.input, FLOAT_TYPES, "input")
        blend = self.blend_factor.value.data
        if not 0.0 <= blend <= 1.0:
            raise ShapeError(f"blend_factor must be in [0, 1], got {blend}")
        shape = pooling_output_shape(
            shape_of(self.input), self.window_values(), self.stride_values(),
            self.pre_padding_values(), self.post_padding_values(), self.padding_mode.data,
        )
        self.expect_type(self.output, shape, element_of(self.input))


@irdl_op_definition
class NormalizationOp(TrtLayerOp):
    """INormalizationLayer: ``(x - mean) / sqrt(var + epsilon) * scale + bias`` over ``axes``.

    With ``num_groups`` = 1, ``scale``/``bias`` have the input's rank with size 1 or the
    input's size per dim (layer/instance norm).  With ``num_groups`` = G > 1 the
    channels (dim 1) split into G groups, each normalized over its channels and the
    ``axes`` dims; ``scale``/``bias`` are [1, G, 1, ...] as TensorRT documents.
    """

    name = "trt.normalization"
    LAYER: ClassVar[str] = "INormalizationLayer"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    output = result_def(TensorType)
    axes = prop_def(IntegerAttr)
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    num_groups = prop_def(IntegerAttr, default_value=i64_attr(1))

    assembly_format = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        scale: SSAValue,
        bias: SSAValue,
        axes: int,
        *,
        name: str,
        epsilon: float = 1e-5,
        num_groups: int = 1,
    ) -> None:
        super().__init__(
            operands=[input, scale, bias],
            result_types=[input.type],
            properties={
                "name": StringAttr(name),
                "axes": mask_attr(axes),
                "epsilon": f32_attr(epsilon),
                "num_groups": i64_attr(num_groups),
            },
        )

    def verify_layer(self) -> None:
        self.expect_elements(self.input, FLOAT_TYPES, "input")
        element = self.expect_same_elements([self.input, self.scale, self.bias], "input, scale and bias")
        shape = shape_of(self.input)
        rank = len(shape)
        axes = axes_from_mask(self.axes.value.data, rank)
        groups = self.num_groups.value.data
        if groups < 1:
            raise ShapeError(f"num_groups must be positive, got {groups}")
        for what, value in (("scale", self.scale), ("bias", self.bias)):
            wshape = shape_of(value)
            if len(wshape) != rank:
                raise ShapeError(f"{what} must have the input's rank {rank}, got {list(wshape)}")
            if groups == 1:
                if any(w not in (1, d) for w, d in zip(wshape, shape, strict=True)):
                    raise ShapeError(f"{what} shape {list(wshape)} does not broadcast to {list(shape)}")
            else:
                expected = [1, groups] + [1] * (rank - 2)
                if list(wshape) != expected:
                    raise ShapeError(f"{what} must have shape {expected} for {groups} groups, got {list(wshape)}")
        if groups > 1:
            if rank < 3 or shape[1] % groups:
                raise ShapeError(f"num_groups {groups} must divide the channels of {list(shape)}")
            if 0 in axes or 1 in axes:
                raise ShapeError("group normalization axes must be spatial dims (not N or C)")
        self.expect_type(self.output, shape, element)


@irdl_op_definition
class TopKOp(TrtLayerOp):
    """ITopKLayer: the ``k`` largest/smallest along one axis; values and i32 indices."""

    name = "trt.topk"
    LAYER: ClassVar[str] = "ITopKLayer"

    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    op = prop_def(TopKOperationAttr)
    k = prop_def(IntegerAttr)
    axes = prop_def(IntegerAttr)

    assembly_format = "$op $input attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def __init__(self, input: SSAValue, op: TopKOperation, k: int, axes: int, *, name: str) -> None:
        shape = topk_output_shape(shape_of(input), k, axes)
        super().__init__(
            operands=[input],
            result_types=[tensor_of(shape, element_of(input)), tensor_of(shape, i32)],
            properties={
                "name": StringAttr(name),
                "op": TopKOperationAttr(op),
                "k": i64_attr(k),
                "axes": mask_attr(axes),
            },
        )

    @property
    def axis(self) -> int:
        return single_axis(self.axes.value.data, len(shape_of(self.input)), "ITopKLayer")

    def verify_layer(self) -> None:
        self.expect_elements(self.input, (*FLOAT_TYPES, *INT_TYPES[:2]), "input")
        shape = topk_output_shape(shape_of(self.input), self.k.value.data, self.axes.value.data)
        self.expect_type(self.values, shape, element_of(self.input), "values")
        self.expect_type(self.indices, shape, i32, "indices")


@irdl_op_definition
class CumulativeOp(TrtLayerOp):
    """ICumulativeLayer: prefix ``op`` along ``axis`` (a build-time constant)."""

    name = "trt.cumulative"
    LAYER: ClassVar[str] = "ICumulativeLayer"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    op = prop_def(CumulativeOperationAttr)
    axis = prop_def(IntegerAttr)
    exclusive = prop_def(BoolAttr, default_value=bool_attr(False))
    reverse = prop_def(BoolAttr, default_value=bool_attr(False))

    assembly_format = "$op $input attr-dict `:` type($input) `->` type($output)"

    def __init__(
        self,
        input: SSAValue,
        axis: int,
        *,
        name: str,
        op: CumulativeOperation = CumulativeOperation.kSUM,
        exclusive: bool = False,
        reverse: bool = False,
    ) -> None:
        super().__init__(
            operands=[input],
            result_types=[input.type],
            properties={
                "name": StringAttr(name),
                "op": CumulativeOperationAttr(op),
                "axis": i64_attr(axis),
                "exclusive": bool_attr(exclusive),
                "reverse": bool_attr(reverse),
            },
        )

    @property
    def axis_value(self) -> int:
        return normalize_axis(self.axis.value.data, len(shape_of(self.input)))

    def verify_layer(self) -> None:
        self.expect_elements(self.input, (*FLOAT_TYPES, *INT_TYPES[:2]), "input")
        if len(shape_of(self.input)) < 1:
            raise ShapeError("input must have rank >= 1")
        _ = self.axis_value
        self.expect_type(self.output, shape_of(self.input), element_of(self.input))
