"""Which ``INetworkDefinition`` call each ``trt`` op becomes.

One small function per op, registered with :func:`emits`; each reads the op's
parameters and appends a :class:`LayerCall` through the :class:`PlanBuilder`,
which names layers after the op's ``name`` and tensors after SSA name hints,
keeps both unique (TensorRT rejects repeated layer names), and turns
``trt.constant`` values into ``Weights`` where the API takes weights or into
``add_constant`` layers where it takes tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from xdsl.ir import Operation, SSAValue

from ziggurat.backends.tensorrt.network_plan import (
    Arg,
    DataTypeRef,
    EnumRef,
    LayerCall,
    NetworkPlan,
    TensorRef,
    Weights,
)
from ziggurat.dialects.trt import (
    ActivationOp,
    CastOp,
    ConcatenationOp,
    ConstantOp,
    ConvolutionOp,
    CumulativeOp,
    DeconvolutionOp,
    DequantizeOp,
    EinsumOp,
    ElementWiseOp,
    FillOp,
    GatherOp,
    GridSampleOp,
    IdentityOp,
    MatrixMultiplyOp,
    NormalizationOp,
    PaddingOp,
    PoolingOp,
    PoolingType,
    QuantizeOp,
    ReduceOp,
    ResizeOp,
    ScaleOp,
    ScatterOp,
    SelectOp,
    ShapeOp,
    ShuffleOp,
    SliceOp,
    SoftMaxOp,
    TopKOp,
    TrtLayerOp,
    UnaryOp,
    WindowedConvolutionOp,
)
from ziggurat.dialects.trt.base import floats, ints, shape_of
from ziggurat.dialects.trt.enums import FillOperation
from ziggurat.ir.literals import literal_tensor
from ziggurat.ir.types import dtype_of

OpT = TypeVar("OpT", bound=TrtLayerOp)
Emitter = Callable[["PlanBuilder", TrtLayerOp], None]

EMITTERS: dict[type[Operation], Emitter] = {}


class PlanError(Exception):
    """A ``trt`` function the emitter cannot express as TensorRT API calls."""


def emits(op_type: type[OpT]) -> Callable[[Callable[[PlanBuilder, OpT], None]], Callable[[PlanBuilder, OpT], None]]:
    def register(fn: Callable[[PlanBuilder, OpT], None]) -> Callable[[PlanBuilder, OpT], None]:
        EMITTERS[op_type] = fn  # pyright: ignore[reportArgumentType]
        return fn

    return register


class PlanBuilder:
    """Accumulates the :class:`NetworkPlan` of one ``trt`` function."""

    def __init__(self) -> None:
        self.plan = NetworkPlan()
        self._tensors: dict[SSAValue, str] = {}
        self._tensor_names: set[str] = set()
        self._layer_names: set[str] = set()

    # -- names ------------------------------------------------------------------------
    def unique_tensor_name(self, wanted: str) -> str:
        return self._unique(wanted, self._tensor_names)

    def unique_layer_name(self, wanted: str) -> str:
        return self._unique(wanted or "layer", self._layer_names)

    @staticmethod
    def _unique(wanted: str, taken: set[str]) -> str:
        name = wanted
        n = 2
        while name in taken:
            name = f"{wanted} #{n}"
            n += 1
        taken.add(name)
        return name

    def bind(self, value: SSAValue, name: str) -> TensorRef:
        self._tensors[value] = name
        return TensorRef(name)

    # -- operands -----------------------------------------------------------------------
    def tensor(self, value: SSAValue) -> TensorRef:
        """The network tensor of ``value``; a constant becomes an ``add_constant`` layer on first use."""
        if value in self._tensors:
            return TensorRef(self._tensors[value])
        owner = value.owner
        if isinstance(owner, ConstantOp):
            self.add(owner, "add_constant", (shape_of(owner.output), self.weights(value)))
            return TensorRef(self._tensors[value])
        raise PlanError(f"{value} is used before it is defined")

    def weights(self, value: SSAValue) -> Weights:
        owner = value.owner
        if not isinstance(owner, ConstantOp):
            raise PlanError(f"{value} must be a trt.constant to be passed as build-time weights")
        return Weights.from_tensor(literal_tensor(owner.weights))

    def weights_or_input(self, value: SSAValue | None, index: int, set_inputs: list[tuple[int, TensorRef]]) -> Weights:
        """Weights if ``value`` is a constant; else empty weights and ``set_input(index, tensor)``."""
        if value is None:
            return Weights.empty()
        if isinstance(value.owner, ConstantOp):
            return self.weights(value)
        set_inputs.append((index, self.tensor(value)))
        return Weights.empty()

    # -- layers -------------------------------------------------------------------------
    def add(
        self,
        op: TrtLayerOp,
        method: str,
        args: Sequence[Arg],
        attributes: Sequence[tuple[str, Arg]] = (),
        set_inputs: Sequence[tuple[int, TensorRef]] = (),
        *,
        suffix: str = "",
        results: Sequence[SSAValue] | None = None,
    ) -> LayerCall:
        """Append ``method`` for ``op``, naming its outputs after ``results`` (default: op.results)."""
        name = self.unique_layer_name(op.layer + suffix)
        values = list(op.results) if results is None else list(results)
        outputs = []
        for i, value in enumerate(values):
            hint = value.name_hint or f"{name}:{i}"
            outputs.append(self.unique_tensor_name(hint))
            self.bind(value, outputs[-1])
        call = LayerCall(
            method=method,
            args=tuple(args),
            name=name,
            outputs=tuple(outputs),
            attributes=tuple(attributes),
            set_inputs=tuple(set_inputs),
            source_op=op.name,
        )
        self.plan.layers.append(call)
        return call

    def add_helper(self, op: TrtLayerOp, method: str, args: Sequence[Arg], suffix: str) -> TensorRef:
        """A helper layer with one unnamed output (e.g. the axis constant of a cumulative layer)."""
        name = self.unique_layer_name(op.layer + suffix)
        out = self.unique_tensor_name(name)
        self.plan.layers.append(LayerCall(method, tuple(args), name, (out,), source_op=op.name))
        return TensorRef(out)


def _enum(enum: str, value: str) -> EnumRef:
    return EnumRef.of(enum, value)


# -- pointwise ----------------------------------------------------------------------------


@emits(ActivationOp)
def _activation(b: PlanBuilder, op: ActivationOp) -> None:
    b.add(op, "add_activation", (b.tensor(op.input), _enum("ActivationType", op.type.data)),
          (("alpha", op.alpha.value.data), ("beta", op.beta.value.data)))


@emits(UnaryOp)
def _unary(b: PlanBuilder, op: UnaryOp) -> None:
    b.add(op, "add_unary", (b.tensor(op.input), _enum("UnaryOperation", op.op.data)))


@emits(ElementWiseOp)
def _elementwise(b: PlanBuilder, op: ElementWiseOp) -> None:
    b.add(op, "add_elementwise", (b.tensor(op.lhs), b.tensor(op.rhs), _enum("ElementWiseOperation", op.op.data)))


@emits(SelectOp)
def _select(b: PlanBuilder, op: SelectOp) -> None:
    b.add(op, "add_select", (b.tensor(op.condition), b.tensor(op.then_input), b.tensor(op.else_input)))


@emits(ScaleOp)
def _scale(b: PlanBuilder, op: ScaleOp) -> None:
    def w(value: SSAValue | None) -> Weights:
        return Weights.empty() if value is None else b.weights(value)

    b.add(op, "add_scale_nd", (b.tensor(op.input), _enum("ScaleMode", op.mode.data), w(op.shift), w(op.scale),
                               w(op.power), op.channel_axis.value.data))


@emits(IdentityOp)
def _identity(b: PlanBuilder, op: IdentityOp) -> None:
    b.add(op, "add_identity", (b.tensor(op.input),))


@emits(CastOp)
def _cast(b: PlanBuilder, op: CastOp) -> None:
    b.add(op, "add_cast", (b.tensor(op.input), DataTypeRef.of(dtype_of(op.output.type))))


@emits(QuantizeOp)
def _quantize(b: PlanBuilder, op: QuantizeOp) -> None:
    axis = op.axis_value
    b.add(op, "add_quantize", (b.tensor(op.input), b.tensor(op.scale), DataTypeRef.of(dtype_of(op.output.type))),
          (("axis", axis),) if axis is not None else ())


@emits(DequantizeOp)
def _dequantize(b: PlanBuilder, op: DequantizeOp) -> None:
    axis = op.axis_value
    b.add(op, "add_dequantize", (b.tensor(op.input), b.tensor(op.scale), DataTypeRef.of(dtype_of(op.output.type))),
          (("axis", axis),) if axis is not None else ())


# -- contractions -------------------------------------------------------------------------


def _convolution_like(b: PlanBuilder, op: WindowedConvolutionOp, method: str) -> None:
    set_inputs: list[tuple[int, TensorRef]] = []
    kernel = b.weights_or_input(op.kernel, 1, set_inputs)
    bias = b.weights_or_input(op.bias, 2, set_inputs)
    b.add(
        op,
        method,
        (b.tensor(op.input), op.num_output_maps.value.data, ints(op.kernel_size), kernel, bias),
        (
            ("stride_nd", op.stride_values()),
            ("pre_padding", op.pre_padding_values()),
            ("post_padding", op.post_padding_values()),
            ("dilation_nd", op.dilation_values()),
            ("num_groups", op.num_groups.value.data),
            ("padding_mode", _enum("PaddingMode", op.padding_mode.data)),
        ),
        set_inputs,
    )


@emits(ConvolutionOp)
def _convolution(b: PlanBuilder, op: ConvolutionOp) -> None:
    _convolution_like(b, op, "add_convolution_nd")


@emits(DeconvolutionOp)
def _deconvolution(b: PlanBuilder, op: DeconvolutionOp) -> None:
    _convolution_like(b, op, "add_deconvolution_nd")


@emits(MatrixMultiplyOp)
def _matrix_multiply(b: PlanBuilder, op: MatrixMultiplyOp) -> None:
    b.add(op, "add_matrix_multiply", (b.tensor(op.input0), _enum("MatrixOperation", op.op0.data),
                                      b.tensor(op.input1), _enum("MatrixOperation", op.op1.data)))


@emits(EinsumOp)
def _einsum(b: PlanBuilder, op: EinsumOp) -> None:
    b.add(op, "add_einsum", ([b.tensor(v) for v in op.inputs], op.equation.data))


# -- reductions ------------------------------------------------------------------------------


@emits(PoolingOp)
def _pooling(b: PlanBuilder, op: PoolingOp) -> None:
    attributes: list[tuple[str, Arg]] = [
        ("stride_nd", op.stride_values()),
        ("pre_padding", op.pre_padding_values()),
        ("post_padding", op.post_padding_values()),
        ("padding_mode", _enum("PaddingMode", op.padding_mode.data)),
        ("average_count_excludes_padding", bool(op.average_count_excludes_padding.value.data)),
    ]
    if op.type.data == PoolingType.kMAX_AVERAGE_BLEND:
        attributes.append(("blend_factor", op.blend_factor.value.data))
    b.add(op, "add_pooling_nd", (b.tensor(op.input), _enum("PoolingType", op.type.data), op.window_values()), attributes)


@emits(ReduceOp)
def _reduce(b: PlanBuilder, op: ReduceOp) -> None:
    b.add(op, "add_reduce", (b.tensor(op.input), _enum("ReduceOperation", op.op.data), op.axes.value.data,
                             bool(op.keep_dims.value.data)))


@emits(SoftMaxOp)
def _softmax(b: PlanBuilder, op: SoftMaxOp) -> None:
    b.add(op, "add_softmax", (b.tensor(op.input),), (("axes", op.axes.value.data),))


@emits(NormalizationOp)
def _normalization(b: PlanBuilder, op: NormalizationOp) -> None:
    b.add(op, "add_normalization", (b.tensor(op.input), b.tensor(op.scale), b.tensor(op.bias), op.axes.value.data),
          (("epsilon", op.epsilon.value.data), ("num_groups", op.num_groups.value.data)))


@emits(TopKOp)
def _topk(b: PlanBuilder, op: TopKOp) -> None:
    b.add(op, "add_topk", (b.tensor(op.input), _enum("TopKOperation", op.op.data), op.k.value.data,
                           op.axes.value.data))


@emits(CumulativeOp)
def _cumulative(b: PlanBuilder, op: CumulativeOp) -> None:
    axis = b.add_helper(op, "add_constant", ((), Weights(np.array(op.axis_value, dtype=np.int32))), " (axis)")
    b.add(op, "add_cumulative", (b.tensor(op.input), axis, _enum("CumulativeOperation", op.op.data),
                                 bool(op.exclusive.value.data), bool(op.reverse.value.data)))


# -- data movement ---------------------------------------------------------------------------


@emits(ShuffleOp)
def _shuffle(b: PlanBuilder, op: ShuffleOp) -> None:
    first, reshape, second, zero_is_placeholder = op.parameters()
    attributes: list[tuple[str, Arg]] = [("zero_is_placeholder", zero_is_placeholder)]
    if first is not None:
        attributes.append(("first_transpose", first))
    if reshape is not None:
        attributes.append(("reshape_dims", reshape))
    if second is not None:
        attributes.append(("second_transpose", second))
    b.add(op, "add_shuffle", (b.tensor(op.input),), attributes)


@emits(ConcatenationOp)
def _concatenation(b: PlanBuilder, op: ConcatenationOp) -> None:
    b.add(op, "add_concatenation", ([b.tensor(v) for v in op.inputs],), (("axis", op.axis.value.data),))


@emits(SliceOp)
def _slice(b: PlanBuilder, op: SliceOp) -> None:
    set_inputs = [(4, b.tensor(op.fill))] if op.fill is not None else []
    b.add(op, "add_slice", (b.tensor(op.input), ints(op.start), ints(op.size), ints(op.stride)),
          (("mode", _enum("SampleMode", op.mode.data)),), set_inputs)


@emits(GatherOp)
def _gather(b: PlanBuilder, op: GatherOp) -> None:
    b.add(op, "add_gather", (b.tensor(op.data), b.tensor(op.indices), op.axis.value.data),
          (("mode", _enum("GatherMode", op.mode.data)), ("num_elementwise_dims", op.num_elementwise_dims.value.data)))


@emits(ScatterOp)
def _scatter(b: PlanBuilder, op: ScatterOp) -> None:
    b.add(op, "add_scatter", (b.tensor(op.data), b.tensor(op.indices), b.tensor(op.updates),
                              _enum("ScatterMode", op.mode.data)), (("axis", op.axis.value.data),))


@emits(GridSampleOp)
def _grid_sample(b: PlanBuilder, op: GridSampleOp) -> None:
    b.add(op, "add_grid_sample", (b.tensor(op.input), b.tensor(op.grid)),
          (("interpolation_mode", _enum("InterpolationMode", op.interpolation_mode.data)),
           ("align_corners", bool(op.align_corners.value.data)),
           ("sample_mode", _enum("SampleMode", op.sample_mode.data))))


@emits(PaddingOp)
def _padding(b: PlanBuilder, op: PaddingOp) -> None:
    b.add(op, "add_padding_nd", (b.tensor(op.input), ints(op.pre_padding), ints(op.post_padding)))


@emits(ResizeOp)
def _resize(b: PlanBuilder, op: ResizeOp) -> None:
    attributes: list[tuple[str, Arg]] = [
        ("resize_mode", _enum("InterpolationMode", op.resize_mode.data)),
        ("coordinate_transformation", _enum("ResizeCoordinateTransformation", op.coordinate_transformation.data)),
        ("selector_for_single_pixel", _enum("ResizeSelector", op.selector_for_single_pixel.data)),
        ("nearest_rounding", _enum("ResizeRoundMode", op.nearest_rounding.data)),
    ]
    if op.output_dims is not None:
        attributes.append(("shape", ints(op.output_dims)))
    if op.scales is not None:
        attributes.append(("scales", floats(op.scales)))
    b.add(op, "add_resize", (b.tensor(op.input),), attributes)


# -- sources ----------------------------------------------------------------------------------


@emits(ConstantOp)
def _constant(b: PlanBuilder, op: ConstantOp) -> None:
    """Constants become layers lazily, only where a tensor (not weights) is needed."""


@emits(ShapeOp)
def _shape(b: PlanBuilder, op: ShapeOp) -> None:
    b.add(op, "add_shape", (b.tensor(op.input),))


@emits(FillOp)
def _fill(b: PlanBuilder, op: FillOp) -> None:
    shape = shape_of(op.output)
    dtype = DataTypeRef.of(dtype_of(op.output.type))
    beta = op.beta_values()
    alpha = op.alpha.value.data
    if op.op.data == FillOperation.kLINSPACE and len(shape) != 1:
        # Static alpha/beta setters cover 1-D only: N-D linspace takes them as tensors.
        start = b.add_helper(op, "add_constant", ((), Weights(np.array(alpha, dtype=np.float32))), " (alpha)")
        delta = b.add_helper(op, "add_constant", ((len(beta),), Weights(np.array(beta, dtype=np.float32))), " (beta)")
        b.add(op, "add_fill", (shape, _enum("FillOperation", op.op.data), dtype), (), ((1, start), (2, delta)))
        return
    b.add(op, "add_fill", (shape, _enum("FillOperation", op.op.data), dtype), (("alpha", alpha), ("beta", beta[0])))
