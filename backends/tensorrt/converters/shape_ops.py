"""Views, permutations, broadcasts, repeats and flips -> IShuffleLayer / ISliceLayer (casts and
``copy_``: ``casts.py``)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import (
    broadcast_to,
    normalize_dim,
    reshape,
    transpose,
)
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import IdentityOp, SampleMode, ShuffleOp, SliceOp
from ziggurat.dialects.trt.shapes import DYNAMIC


def _same_rank_view(ctx: ConversionContext, x: SSAValue) -> SSAValue:
    """A layer for ops whose result equals their input (TensorRT outputs must be distinct tensors)."""
    return ctx.add(IdentityOp(ctx.tensor(x), name=ctx.name())).output


@converter(
    "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)",
    "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
    "aten::squeeze(Tensor(a) self) -> Tensor(a)",
    "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
    "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
)
def view(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Every view of the same elements in the same order is one reshape to the result shape.
    Dynamic result dims: a 0 (copy) where the input's dim at that position has the same size
    expression, and one inferred -1 for the rest (more: refused)."""
    x = ctx.tensor(args.tensor("self"))
    target = ctx.shape(ctx.op.results[0], dynamic=True)
    if ctx.shape(x, dynamic=True) == target and DYNAMIC not in target:
        return _same_rank_view(ctx, x)
    if DYNAMIC not in target:
        return reshape(ctx, x, target, "")
    return ctx.add(ShuffleOp(x, name=ctx.name(), reshape_dims=dynamic_reshape_dims(ctx, args.tensor("self")),
                             zero_is_placeholder=True)).output


def dynamic_reshape_dims(ctx: ConversionContext, source: SSAValue) -> list[int]:
    """Reshape dims for the op's result, which has dynamic dims: each is copied (0) from the
    same position of ``source`` when both have the same size expression, else the one -1."""
    target = ctx.shape(ctx.op.results[0], dynamic=True)
    out_sizes, in_sizes = ctx.size_exprs(ctx.op.results[0]), ctx.size_exprs(source)
    if out_sizes is None or in_sizes is None:
        raise ctx.error("a reshape to dynamic dims needs the size expressions of its input and result")
    dims: list[int] = []
    for i, d in enumerate(target):
        if d >= 0:
            if d == 0:
                raise ctx.error("a reshape to an empty dim next to dynamic ones")
            dims.append(d)
        elif i < len(in_sizes) and in_sizes[i] == out_sizes[i]:
            dims.append(0)
        else:
            dims.append(-1)
    if dims.count(-1) > 1:
        raise ctx.error(f"reshaping {list(in_sizes)} to {list(out_sizes)} needs more than one inferred dim")
    return dims


@converter(
    "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)",
    "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "aten::detach(Tensor(a) self) -> Tensor(a)",
    "aten::alias(Tensor(a) self) -> Tensor(a)",
)
def identity(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _same_rank_view(ctx, args.tensor("self"))


def _inference_dropout(args: ConverterArgs) -> str | None:
    return "dropout in training mode" if args.get_bool("train") else None


@converter("aten::dropout(Tensor input, float p, bool train) -> Tensor", validator=_inference_dropout)
def dropout(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _same_rank_view(ctx, args.tensor("input"))


@converter(
    "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "aten::t(Tensor(a) self) -> Tensor(a)",
)
def permute(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    rank = ctx.rank(x)
    if rank <= 1:  # transposing 0-d and 1-d tensors changes nothing
        return _same_rank_view(ctx, x)
    if args.has("dims"):
        perm = [normalize_dim(ctx, d, rank) for d in args.get_ints("dims")]
    elif args.has("dim0"):
        perm = list(range(rank))
        a, b = normalize_dim(ctx, args.get_int("dim0"), rank), normalize_dim(ctx, args.get_int("dim1"), rank)
        perm[a], perm[b] = perm[b], perm[a]
    else:
        perm = list(reversed(range(rank)))
    if perm == list(range(rank)):
        return _same_rank_view(ctx, x)
    return transpose(ctx, x, perm, "")


@converter(
    "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
    "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
)
def expand(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    if ctx.shape(x) == ctx.result_shape():
        return _same_rank_view(ctx, x)
    return broadcast_to(ctx, x, ctx.result_shape(), "")


@converter(
    "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor",
    "aten::tile(Tensor self, SymInt[] dims) -> Tensor",
)
def repeat(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Tiling is a kWRAP slice: output[y] = input[y mod d]."""
    x = ctx.tensor(args.tensor("self"))
    out = ctx.result_shape()
    x = reshape(ctx, x, [1] * (len(out) - ctx.rank(x)) + list(ctx.shape(x)), "align ranks")
    if ctx.shape(x) == out:
        return _same_rank_view(ctx, x)
    return ctx.add(SliceOp(x, [0] * len(out), list(out), [1] * len(out), name=ctx.name(),
                           mode=SampleMode.kWRAP)).output


@converter("aten::flip(Tensor self, int[] dims) -> Tensor")
def flip(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    shape = ctx.shape(x)
    dims = {normalize_dim(ctx, d, len(shape)) for d in args.get_ints("dims")}
    start = [shape[i] - 1 if i in dims else 0 for i in range(len(shape))]
    stride = [-1 if i in dims else 1 for i in range(len(shape))]
    return ctx.add(SliceOp(x, start, list(shape), stride, name=ctx.name())).output


@converter("aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")
def roll(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """output[i] = input[(i - shift) mod d]: a kWRAP slice starting at -shift."""
    x = ctx.tensor(args.tensor("self"))
    shifts = args.get_ints("shifts")
    dims = args.get_ints("dims")
    original = ctx.shape(x)
    if not dims:
        x = reshape(ctx, x, [-1 if original else 1], "flatten")
        dims = [0]
    shape = ctx.shape(x)
    start = [0] * len(shape)
    for shift, d in zip(shifts, dims, strict=True):
        d = normalize_dim(ctx, d, len(shape))
        start[d] = (start[d] - shift) % shape[d] if shape[d] else 0
    y = ctx.add(SliceOp(x, start, list(shape), [1] * len(shape), name=ctx.name(), mode=SampleMode.kWRAP)).output
    return reshape(ctx, y, original, "restore shape")


@converter("aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor")
def pixel_shuffle(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """[*, C*r*r, H, W] -> [*, C, r, r, H, W] -> [*, C, H, r, W, r] -> [*, C, H*r, W*r]."""
    x = ctx.tensor(args.tensor("self"))
    r = args.get_int("upscale_factor")
    *lead, c, h, w = ctx.shape(x)
    n = len(lead)
    split = reshape(ctx, x, [*lead, c // (r * r), r, r, h, w], "split channels")
    perm = [*range(n), n, n + 3, n + 1, n + 4, n + 2]
    return ctx.add(_shuffle(ctx, split, perm, [*lead, c // (r * r), h * r, w * r])).output


def _shuffle(ctx: ConversionContext, x: SSAValue, perm: list[int], shape: list[int]):  # noqa: ANN202
    from ziggurat.dialects.trt import ShuffleOp

    return ShuffleOp(x, name=ctx.name(), first_transpose=perm, reshape_dims=shape, zero_is_placeholder=False)

