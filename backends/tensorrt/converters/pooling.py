"""Pooling -> IPoolingLayer; adaptive pooling -> pooling (divisible sizes) or exact separable forms.

TensorRT pools 2-D/3-D windows: 1-D pooling gets a trailing unit dim.  torch's
``ceil_mode`` (the last window must start inside the input or its left padding)
is matched by explicit extra post padding when max or padding-excluding average
pooling allows it, and by kEXPLICIT_ROUND_UP where the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import FLOAT_DTYPES, reshape, reshape_to_result, slice_dim
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import (
    ConcatenationOp,
    PaddingMode,
    PoolingOp,
    PoolingType,
    ReduceOp,
    ReduceOperation,
)


def _expand(values: Sequence[int], n: int) -> list[int]:
    values = list(values)
    return values * n if len(values) == 1 else values


def _float(args: ConverterArgs) -> str | None:
    dtype = args.dtype("self")
    return None if dtype in FLOAT_DTYPES else f"IPoolingLayer takes float tensors, 'self' is {dtype}"


def _to_pooling_rank(ctx: ConversionContext, x: SSAValue, spatial: int) -> tuple[SSAValue, bool]:
    """[N, C, *s] with at least 2 spatial dims (1-D gets a trailing unit dim); also whether it was unbatched."""
    x = ctx.tensor(x)
    unbatched = ctx.rank(x) == spatial + 1
    if unbatched:
        x = reshape(ctx, x, [1, *ctx.shape(x)], "add batch dim")
    if spatial == 1:
        x = reshape(ctx, x, [*ctx.shape(x, dynamic=True), 1], "as 2-D")
    return x, unbatched


def pool(
    ctx: ConversionContext,
    x: SSAValue,
    kind: PoolingType,
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    exclude_padding: bool,
    out_spatial: Sequence[int],
) -> SSAValue:
    """A pooling layer whose output has torch's spatial size ``out_spatial``."""
    spatial = len(kernel)
    x, _ = _to_pooling_rank(ctx, x, spatial)
    if spatial == 1:
        kernel, stride, padding, out_spatial = [*kernel, 1], [*stride, 1], [*padding, 0], [*out_spatial, 1]
    in_spatial = ctx.dims(x, range(2, ctx.rank(x)))
    post = list(padding)
    mode = PaddingMode.kEXPLICIT_ROUND_DOWN
    if ceil_mode:
        down = [(i + 2 * p - k) // s + 1 for i, p, k, s in zip(in_spatial, padding, kernel, stride, strict=True)]
        if list(down) != list(out_spatial):
            if kind == PoolingType.kAVERAGE and not exclude_padding:
                up = [-(-(i + 2 * p - k) // s) + 1 for i, p, k, s in zip(in_spatial, padding, kernel, stride, strict=True)]
                if list(up) != list(out_spatial):
                    raise ctx.error("ceil_mode windows that TensorRT's rounding cannot reproduce with count_include_pad")
                mode = PaddingMode.kEXPLICIT_ROUND_UP
            else:
                post = [max(p, (o - 1) * s + k - i - p)
                        for o, s, k, i, p in zip(out_spatial, stride, kernel, in_spatial, padding, strict=True)]
    y = ctx.add(PoolingOp(x, kind, list(kernel), name=ctx.name(), stride=list(stride), pre_padding=list(padding),
                          post_padding=post, padding_mode=mode, average_count_excludes_padding=exclude_padding)).output
    return reshape_to_result(ctx, y)


def _window(args: ConverterArgs, spatial: int) -> tuple[list[int], list[int], list[int]]:
    kernel = _expand(args.get_ints("kernel_size"), spatial)
    stride = _expand(args.get_ints("stride"), spatial) if args.get_ints("stride") else kernel
    padding = _expand(args.get_ints("padding"), spatial)
    return kernel, stride, padding


def _max_ok(args: ConverterArgs) -> str | None:
    if any(d != 1 for d in args.get_ints("dilation")):
        return "IPoolingLayer has no dilation"
    return _float(args)


@converter(
    "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor",
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor",
    validator=_max_ok,
)
def max_pool(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    spatial = int(args.schema.base_name.removesuffix("_with_indices")[-2])  # max_pool<N>d
    kernel, stride, padding = _window(args, spatial)
    out = list(ctx.dims(ctx.op.results[0], range(-spatial, 0)))
    return pool(ctx, args.tensor("self"), PoolingType.kMAX, kernel, stride, padding, args.get_bool("ceil_mode"),
                True, out)


def _max_values_ok(args: ConverterArgs) -> str | None:
    if args.op.results[1].uses:
        return "the indices of max pooling are used (TensorRT pooling has no indices)"
    return _max_ok(args)


@converter(
    "aten::max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    validator=_max_values_ok,
)
def max_pool_with_indices(ctx: ConversionContext, args: ConverterArgs) -> tuple[SSAValue, None]:
    return max_pool(ctx, args), None


def _avg_ok(args: ConverterArgs) -> str | None:
    if args.has("divisor_override") and not args.is_none("divisor_override") and args.get_bool("ceil_mode"):
        return "avg_pool with divisor_override and ceil_mode"
    return _float(args)


@converter(
    "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
    "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    validator=_avg_ok,
)
def avg_pool(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    spatial = int(args.schema.base_name[-2])
    kernel, stride, padding = _window(args, spatial)
    out = list(ctx.dims(ctx.op.results[0], range(-spatial, 0)))
    divisor = args.get_optional_int("divisor_override") if args.has("divisor_override") else None
    if divisor is not None:
        # Without ceil_mode every window lies in the padded input: sum = padded average * window area.
        y = pool(ctx, args.tensor("self"), PoolingType.kAVERAGE, kernel, stride, padding, False, False, out)
        area = 1
        for k in kernel:
            area *= k
        from ziggurat.backends.tensorrt.converters.common import elementwise
        from ziggurat.dialects.trt import ElementWiseOperation

        return elementwise(ctx, y, area / divisor, ElementWiseOperation.kPROD, suffix="divisor_override")
    return pool(ctx, args.tensor("self"), PoolingType.kAVERAGE, kernel, stride, padding,
                args.get_bool("ceil_mode"), not args.get_bool("count_include_pad"), out)


def _bounds(in_len: int, out_len: int) -> list[tuple[int, int]]:
    """torch's adaptive windows: [floor(i*in/out), ceil((i+1)*in/out))."""
    return [((i * in_len) // out_len, -(-((i + 1) * in_len) // out_len)) for i in range(out_len)]


@converter(
    "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
    "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
    validator=_float,
)
def adaptive_avg_pool(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Divisible sizes: one pooling layer.  Otherwise per spatial dim, a kAVG reduce of each
    window, concatenated (a product with a matrix of window weights would multiply the
    elements outside a window by 0, and 0 * NaN or 0 * inf made a window NaN that eager
    leaves finite)."""
    x = ctx.tensor(args.tensor("self"))
    spatial = len(args.get_ints("output_size"))
    in_spatial = list(ctx.dims(x, range(-spatial, 0)))
    out_spatial = list(ctx.dims(ctx.op.results[0], range(-spatial, 0)))
    if all(o and i % o == 0 for i, o in zip(in_spatial, out_spatial, strict=True)):
        kernel = [i // o for i, o in zip(in_spatial, out_spatial, strict=True)]
        return pool(ctx, x, PoolingType.kAVERAGE, kernel, kernel, [0] * spatial, False, True, out_spatial)
    return _window_reduce(ctx, x, in_spatial, out_spatial, ReduceOperation.kAVG, "average")


def _window_reduce(ctx: ConversionContext, x: SSAValue, in_spatial: Sequence[int], out_spatial: Sequence[int],
                   op: ReduceOperation, what: str) -> SSAValue:
    """Adaptive pooling of the trailing spatial dims: per dim, ``op`` over each of torch's
    windows, concatenated."""
    from ziggurat.dialects.trt import mask_from_axes

    rank = ctx.rank(x)
    spatial = len(in_spatial)
    y = x
    for j in range(spatial):
        dim = rank - spatial + j
        parts = []
        for i, (lo, hi) in enumerate(_bounds(in_spatial[j], out_spatial[j])):
            window = slice_dim(ctx, y, dim, lo, hi - lo, 1, f"dim {dim} window {i}")
            parts.append(ctx.add(ReduceOp(window, op, mask_from_axes([dim]),
                                          name=ctx.name(f"dim {dim} window {i} {what}"), keep_dims=True)).output)
        y = ctx.add(ConcatenationOp(parts, dim, name=ctx.name(f"dim {dim}"))).output
    return y


def _max_values_only(args: ConverterArgs) -> str | None:
    if args.op.results[1].uses:
        return "the indices of adaptive max pooling are used (TensorRT pooling has no indices)"
    return _float(args)


@converter(
    "aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
    "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
    "aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",
    validator=_max_values_only,
)
def adaptive_max_pool(ctx: ConversionContext, args: ConverterArgs) -> tuple[SSAValue, None]:
    """Divisible sizes: one pooling layer; otherwise per dim, a kMAX reduce of each window, concatenated."""
    x = ctx.tensor(args.tensor("self"))
    spatial = len(args.get_ints("output_size"))
    in_spatial = list(ctx.dims(x, range(-spatial, 0)))
    out_spatial = list(ctx.dims(ctx.op.results[0], range(-spatial, 0)))
    if all(o and i % o == 0 for i, o in zip(in_spatial, out_spatial, strict=True)):
        kernel = [i // o for i, o in zip(in_spatial, out_spatial, strict=True)]
        return pool(ctx, x, PoolingType.kMAX, kernel, kernel, [0] * spatial, False, True, out_spatial), None
    return _window_reduce(ctx, x, in_spatial, out_spatial, ReduceOperation.kMAX, "max"), None
