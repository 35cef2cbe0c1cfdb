"""Padding -> ISliceLayer (kFILL / kREFLECT / kCLAMP); upsampling -> IResizeLayer."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import FLOAT_DTYPES, elementwise, select
from ziggurat.backends.tensorrt.converters.linear_resize_taps import copied_with_zero_weight
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import (
    ElementWiseOperation,
    GridSampleOp,
    InterpolationMode,
    ResizeCoordinateTransformation,
    ResizeOp,
    ResizeRoundMode,
    SampleMode,
    SliceOp,
)


def pad_slice(ctx: ConversionContext, x: SSAValue, pads: Sequence[int], mode: SampleMode,
              fill: SSAValue | None = None) -> SSAValue:
    """torch's pad list (last dim first, (before, after) pairs; negative trims) as one slice."""
    x = ctx.tensor(x)
    if not any(pads):
        from ziggurat.dialects.trt import IdentityOp

        return ctx.add(IdentityOp(x, name=ctx.name())).output
    shape = list(ctx.shape(x))
    start = [0] * len(shape)
    size = list(shape)
    for i in range(len(pads) // 2):
        dim = len(shape) - 1 - i
        before, after = pads[2 * i], pads[2 * i + 1]
        start[dim] = -before
        size[dim] = shape[dim] + before + after
    suffix = "" if mode != SampleMode.kSTRICT_BOUNDS else "crop"
    return ctx.add(SliceOp(x, start, size, [1] * len(shape), name=ctx.name(suffix), mode=mode, fill=fill)).output


@converter("aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
def constant_pad_nd(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    fill = ctx.constant(torch.tensor(args.get_scalar("value"), dtype=ctx.dtype(x)), "fill value")
    return pad_slice(ctx, x, args.get_ints("pad"), SampleMode.kFILL, fill)


def _reflect_ok(args: ConverterArgs) -> str | None:
    pads = args.get_ints("padding")
    shape = args.shape("self")
    for i in range(len(pads) // 2):
        if max(pads[2 * i], pads[2 * i + 1]) >= shape[len(shape) - 1 - i]:
            return "reflection padding as large as the dim"
    return None


@converter(
    "aten::reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
    "aten::reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
    "aten::reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
    validator=_reflect_ok,
)
def reflection_pad(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return pad_slice(ctx, args.tensor("self"), args.get_ints("padding"), SampleMode.kREFLECT)


@converter(
    "aten::replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
    "aten::replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
    "aten::replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
)
def replication_pad(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return pad_slice(ctx, args.tensor("self"), args.get_ints("padding"), SampleMode.kCLAMP)


# -- upsampling ---------------------------------------------------------------------------------------


def _scales(args: ConverterArgs) -> list[float | None]:
    """The scale factors torch was given (None where it computes in/out itself)."""
    if args.has("scale_factors"):
        factors = None if args.is_none("scale_factors") else args.get_floats("scale_factors")
        spatial = len(args.shape(_input_name(args))) - 2
        return list(factors) if factors is not None else [None] * spatial
    names = [n for n in ("scales", "scales_d", "scales_h", "scales_w") if args.has(n)]
    return [args.get_optional_float(n) for n in names]


def _input_name(args: ConverterArgs) -> str:
    return "input" if args.has("input") else "self"


def _resize_ok(args: ConverterArgs) -> str | None:
    """IResizeLayer maps coordinates with in/out; torch uses 1/scale when it is given."""
    name = _input_name(args)
    if args.dtype(name) not in FLOAT_DTYPES:
        return f"IResizeLayer takes float tensors, '{name}' is {args.dtype(name)}"
    in_spatial = args.shape(name)[2:]
    out_spatial = args.result_shape()[2:]
    for i, o, s in zip(in_spatial, out_spatial, _scales(args), strict=False):
        if s is not None and abs(1.0 / s - i / o) > 1e-9 * max(1.0, i / o):
            return f"scale factor {s} maps coordinates differently from size ratio {o}/{i}"
    return None


def _resize(ctx: ConversionContext, args: ConverterArgs, mode: InterpolationMode) -> SSAValue:
    x = ctx.tensor(args.tensor(_input_name(args)))
    if mode == InterpolationMode.kNEAREST:
        transform = ResizeCoordinateTransformation.kASYMMETRIC
    elif args.get_bool("align_corners"):
        transform = ResizeCoordinateTransformation.kALIGN_CORNERS
    else:
        transform = ResizeCoordinateTransformation.kHALF_PIXEL
    return ctx.add(ResizeOp(x, mode, name=ctx.name(), output_dims=ctx.result_shape(),
                            coordinate_transformation=transform, nearest_rounding=ResizeRoundMode.kFLOOR)).output


@converter(
    "aten::upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor",
    "aten::upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
    "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor",
    "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
    "aten::upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor",
    "aten::upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
    validator=_resize_ok,
)
def upsample_nearest(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """torch nearest: src = floor(dst * in / out) = kASYMMETRIC coordinates rounded with kFLOOR."""
    return _resize(ctx, args, InterpolationMode.kNEAREST)


def _resize_linear_ok(args: ConverterArgs) -> str | None:
    """Also: torch must weigh the same source elements by 0 as IResizeLayer (inf * 0 is NaN)."""
    why = _resize_ok(args)
    if why is None and _poisoned_indices(args) is None:
        return ("torch's float32 source coordinates weigh other elements by 0 than IResizeLayer's "
                "formula (inf * 0 is NaN), or depend on a fused multiply-add in its kernel")
    return why


@converter(
    "aten::upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor",
    "aten::upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
    "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor",
    "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
    "aten::upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor",
    "aten::upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
    validator=_resize_linear_ok,
)
def upsample_linear(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """align_corners -> kALIGN_CORNERS, else kHALF_PIXEL (negative source coordinates clamp to 0).

    Where torch reads one element for both taps of a dim with weights 1 and 0 (a dim whose size
    does not change, an input of size 1, the last pixel at an exact coordinate: see
    ``linear_resize_taps``), an inf there comes out NaN (inf * 0); IResizeLayer copies that
    element.  ``y + y * 0`` restores it at those output indices: exactly ``y`` where ``y`` is
    finite (``y + 0``, the sign of a zero kept), NaN where it is not.
    """
    y = _resize(ctx, args, InterpolationMode.kLINEAR)
    poisoned = _poisoned_indices(args)
    assert poisoned is not None  # the validator refused otherwise
    mask = torch.zeros(ctx.result_shape()[2:], dtype=torch.bool)
    for dim, indices in enumerate(poisoned):
        index: list[slice | torch.Tensor] = [slice(None)] * mask.dim()
        index[dim] = torch.tensor(indices, dtype=torch.bool)
        mask[tuple(index)] = True
    if not bool(mask.any()):
        return y
    dtype = ctx.dtype(y)
    zero = elementwise(ctx, y, 0.0, ElementWiseOperation.kPROD, dtype=dtype, suffix="copied tap: y*0")
    restored = elementwise(ctx, y, zero, ElementWiseOperation.kSUM, dtype=dtype, suffix="copied tap: y+y*0")
    if bool(mask.all()):
        return restored
    condition = ctx.constant(mask.reshape(1, 1, *mask.shape), "copied tap indices")
    return select(ctx, condition, restored, y, dtype=dtype, suffix="copied tap: where")


def _poisoned_indices(args: ConverterArgs) -> list[list[bool]] | None:
    """Per spatial dim, the output indices at which torch reads one element with weights 1 and 0
    (``linear_resize_taps.copied_with_zero_weight``); None where IResizeLayer's taps are not
    torch's there or elsewhere."""
    name = _input_name(args)
    opmath = torch.float64 if args.dtype(name) == torch.float64 else torch.float32
    sizes = zip(args.shape(name)[2:], args.result_shape()[2:], _scales(args), strict=True)
    dims = [copied_with_zero_weight(i, o, args.get_bool("align_corners"), s, opmath) for i, o, s in sizes]
    return None if any(d is None for d in dims) else [d for d in dims if d is not None]


_PAD_MODES = {"constant": SampleMode.kFILL, "reflect": SampleMode.kREFLECT, "replicate": SampleMode.kCLAMP,
              "circular": SampleMode.kWRAP}


def _pad_ok(args: ConverterArgs) -> str | None:
    mode = args.get_str("mode")
    if mode not in _PAD_MODES:
        return f"padding mode {mode!r}"
    if mode == "reflect":
        pads = args.get_ints("pad")
        shape = args.shape("self")
        for i in range(len(pads) // 2):
            if max(pads[2 * i], pads[2 * i + 1]) >= shape[len(shape) - 1 - i]:
                return "reflection padding as large as the dim"
    return None


@converter('aten::pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', validator=_pad_ok)
def pad(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """F.pad: constant -> kFILL, reflect -> kREFLECT, replicate -> kCLAMP, circular -> kWRAP."""
    x = ctx.tensor(args.tensor("self"))
    mode = _PAD_MODES[args.get_str("mode")]
    fill = None
    pads = args.get_ints("pad")
    if mode == SampleMode.kFILL:
        value = args.get_optional_float("value") or 0.0
        fill = ctx.constant(torch.tensor(value, dtype=ctx.dtype(x)), "fill value")
    if mode == SampleMode.kWRAP and any(p < 0 for p in pads):
        # torch crops first and wraps around the cropped tensor
        x = pad_slice(ctx, x, [min(p, 0) for p in pads], SampleMode.kSTRICT_BOUNDS)
        pads = [max(p, 0) for p in pads]
    return pad_slice(ctx, x, pads, mode, fill)


_GRID_INTERPOLATION = {0: InterpolationMode.kLINEAR, 1: InterpolationMode.kNEAREST}
_GRID_PADDING = {0: SampleMode.kFILL, 1: SampleMode.kCLAMP, 2: SampleMode.kREFLECT}


def _grid_ok(args: ConverterArgs) -> str | None:
    if args.get_int("interpolation_mode") not in _GRID_INTERPOLATION:
        return "bicubic grid sampling"
    if args.get_int("padding_mode") not in _GRID_PADDING:
        return f"padding mode {args.get_int('padding_mode')}"
    if args.get_int("padding_mode") == 2:
        # eager reflects in float32: beyond ~2e6 pixels its coordinates are rounding noise that
        # kREFLECT need not reproduce (measured: they differ from 1e6 on)
        return "reflection padding of far coordinates is rounding noise in eager, not TensorRT's"
    if args.rank("input") != 4:
        return "IGridSampleLayer samples 2-D images [N, C, H, W]"
    if args.dtype("input") not in FLOAT_DTYPES:
        return f"grid sampling of {args.dtype('input')} tensors"
    return None


def _not_nan_grid(ctx: ConversionContext, grid: SSAValue) -> SSAValue:
    """Border padding: eager clips a NaN coordinate to the first pixel, as it does -1 (TensorRT
    leaves NaN undefined); an infinite one clamps to the nearer border by itself."""
    from ziggurat.backends.tensorrt.converters.common import elementwise, select

    ok = elementwise(ctx, grid, grid, ElementWiseOperation.kEQUAL, suffix="grid not NaN")
    return select(ctx, ok, grid, -1.0, dtype=ctx.dtype(grid), suffix="grid NaN to -1")


@converter("aten::grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor",
           validator=_grid_ok)
def grid_sampler(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """IGridSampleLayer: bilinear/nearest, zeros -> kFILL, border -> kCLAMP, reflection -> kREFLECT."""
    from ziggurat.backends.tensorrt.converters.common import cast

    x = ctx.tensor(args.tensor("input"))
    grid = cast(ctx, ctx.tensor(args.tensor("grid")), ctx.dtype(x), "grid cast")
    if args.get_int("padding_mode") == 1:
        grid = _not_nan_grid(ctx, grid)
    return ctx.add(GridSampleOp(x, grid, name=ctx.name(), interpolation_mode=_GRID_INTERPOLATION[args.get_int("interpolation_mode")],
                                align_corners=args.get_bool("align_corners"),
                                sample_mode=_GRID_PADDING[args.get_int("padding_mode")])).output
