"""Data movement as index arithmetic: view/reshape/flatten/squeeze/unsqueeze/expand/permute/
transpose/slice/select/narrow/flip/roll/repeat/... never copy; the consuming kernel
reads through the index map (a copy kernel appears only where a buffer is needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, flat_index, unflatten
from ziggurat.backends.cpu.lowering.pointwise import map_tensor
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue


def norm_dim(dim: int, rank: int) -> int:
    r = max(rank, 1)
    if not -r <= dim < r:
        raise NotLowerable(f"dimension {dim} out of range for rank {rank}")
    return dim % r


def reshape(ctx: LoweringContext, x: TensorValue, shape: Sequence[int]) -> TensorValue:
    shape = tuple(shape)
    if shape == x.shape:
        return x
    in_shape = x.shape

    def index_map(idx: Index) -> list[IndexExpr]:
        return unflatten(flat_index(idx, shape), in_shape)

    return map_tensor(ctx, x, shape, x.dtype, index_map)


def permute(ctx: LoweringContext, x: TensorValue, dims: Sequence[int]) -> TensorValue:
    dims = [norm_dim(d, x.rank) for d in dims]
    if dims == list(range(x.rank)):
        return x
    shape = tuple(x.shape[d] for d in dims)
    inverse = [dims.index(i) for i in range(x.rank)]
    return map_tensor(ctx, x, shape, x.dtype, lambda idx: [idx[inverse[i]] for i in range(len(inverse))])


def transpose(ctx: LoweringContext, x: TensorValue, d0: int, d1: int) -> TensorValue:
    if x.rank < 2:
        return x
    dims = list(range(x.rank))
    a, b = norm_dim(d0, x.rank), norm_dim(d1, x.rank)
    dims[a], dims[b] = dims[b], dims[a]
    return permute(ctx, x, dims)


def expand(ctx: LoweringContext, x: TensorValue, shape: Sequence[int]) -> TensorValue:
    shape = tuple(shape)
    if shape == x.shape:
        return x
    lead = len(shape) - x.rank
    xs = x.shape

    def index_map(idx: Index) -> list[IndexExpr]:
        return [IndexExpr.of(0) if n == 1 else IndexExpr.of(idx[lead + d]) for d, n in enumerate(xs)]

    return map_tensor(ctx, x, shape, x.dtype, index_map)


def slice_dim(ctx: LoweringContext, x: TensorValue, dim: int, start: int, step: int, length: int) -> TensorValue:
    dim = norm_dim(dim, x.rank)
    shape = list(x.shape)
    shape[dim] = length
    if length == x.shape[dim] and start == 0 and step == 1:
        return x

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        out[dim] = out[dim] * step + start
        return out

    return map_tensor(ctx, x, shape, x.dtype, index_map)


def select(ctx: LoweringContext, x: TensorValue, dim: int, index: int) -> TensorValue:
    dim = norm_dim(dim, x.rank)
    n = x.shape[dim]
    if not -n <= index < n:
        raise NotLowerable(f"select index {index} out of range for size {n}")
    index %= n
    shape = x.shape[:dim] + x.shape[dim + 1:]

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        return out[:dim] + [IndexExpr.of(index)] + out[dim:]

    return map_tensor(ctx, x, shape, x.dtype, index_map)


def slice_bounds(n: int, start: int | None, end: int | None, step: int) -> tuple[int, int]:
    """(start, length) of ``x[start:end:step]`` along a dim of size ``n`` (Python semantics)."""
    if step <= 0:
        raise NotLowerable(f"slice step must be positive, got {step}")
    s, e, _ = slice(start, end, step).indices(n)
    length = max(0, (e - s + step - 1) // step)
    return s, length


# -- registered views --------------------------------------------------------------------


@lowering("aten::view", "aten::reshape", "aten::_unsafe_view", "aten::flatten.using_ints",
          "aten::unflatten.int", "aten::squeeze", "aten::squeeze.dim", "aten::squeeze.dims", "aten::unsqueeze",
          "aten::view_as", "aten::reshape_as", "aten::atleast_1d", "aten::atleast_2d", "aten::atleast_3d",
          "aten::contiguous",
          "aten::clone", "aten::alias", "aten::detach", "aten::lift_fresh_copy", "aten::detach_", "aten::squeeze_",
          "aten::unsqueeze_", "aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
          "aten::numpy_T", "aten::ravel")
def reshape_like(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """Every op whose result is its input's elements in row-major order (the IR's result type
    gives the shape); dropout at inference is the identity."""
    if args.name in ("dropout", "feature_dropout", "alpha_dropout") and args.static("train", False):
        raise NotLowerable("dropout in training mode is random")
    x = args.tensor("self") if args.has("self") else args.tensor("input")
    shape = args.out_shape
    if args.name == "numpy_T":
        return permute(ctx, x, list(reversed(range(x.rank))))
    return reshape(ctx, x, shape)


@lowering("aten::permute", "aten::movedim.int", "aten::movedim.intlist")
def permute_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    if args.name == "permute":
        return permute(ctx, x, args.get_ints("dims", []))
    src = [norm_dim(d, x.rank) for d in args.get_ints("source", [])]
    dst = [norm_dim(d, x.rank) for d in args.get_ints("destination", [])]
    order = [d for d in range(x.rank) if d not in src]
    dims = [-1] * x.rank
    for s, d in zip(src, dst, strict=True):
        dims[d] = s
    it = iter(order)
    dims = [d if d >= 0 else next(it) for d in dims]
    return permute(ctx, x, dims)


@lowering("aten::transpose.int", "aten::t", "aten::swapaxes", "aten::swapdims")
def transpose_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    if args.name == "t" or x.rank < 2 and not args.has("dim0") and not args.has("axis0"):
        return transpose(ctx, x, 0, 1) if x.rank == 2 else x
    if args.has("dim0"):
        return transpose(ctx, x, int(args.static("dim0")), int(args.static("dim1")))
    return transpose(ctx, x, int(args.static("axis0")), int(args.static("axis1")))


@lowering("aten::expand", "aten::expand_as", "aten::broadcast_to")
def expand_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return expand(ctx, args.tensor("self"), args.out_shape)


@lowering("aten::broadcast_tensors")
def broadcast_tensors(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    return [expand(ctx, t, args.result_shape(i)) for i, t in enumerate(args.tensors("tensors"))]


@lowering("aten::slice.Tensor")
def slice_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    dim = norm_dim(int(args.static("dim", 0)), x.rank)
    start, length = slice_bounds(x.shape[dim], args.static("start"), args.static("end"), int(args.static("step", 1)))
    return slice_dim(ctx, x, dim, start, int(args.static("step", 1)), length)


@lowering("aten::narrow")
def narrow_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    dim = norm_dim(int(args.static("dim")), x.rank)
    start = int(args.static("start"))
    if start < 0:
        start += x.shape[dim]
    return slice_dim(ctx, x, dim, start, 1, int(args.static("length")))


@lowering("aten::narrow.Tensor")
def narrow_tensor(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``narrow`` with a 0-d tensor start: a data-dependent (checked) offset.  As in eager, a
    negative start counts from the end once, and the slice must fit: every subscript is
    checked without a second wrap (start -1 of length 2 is an error, not rows n-1 and 0)."""
    from ziggurat.backends.cpu.lowering.index import Indirect
    from ziggurat.backends.cpu.lowering.index_checks import checked_value, index_site
    from ziggurat.backends.cpu.lowering.ops import add, cast, compare, index, where

    x = args.tensor("self")
    start = args.tensor("start")
    dim = norm_dim(int(args.static("dim")), x.rank)
    n = x.shape[dim]
    if math.prod(args.out_shape) == 0:
        raise NotLowerable("narrow of length 0 reads no element to check its start with")
    site = index_site(ctx, args, n, "start")
    i64 = torch.int64

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        first = cast(start.load([IndexExpr.of(0)] * start.rank), i64)
        first = where(compare("lt", first, 0, i64), add(first, n, i64), first, i64)
        out[dim] = IndexExpr.of(Indirect(checked_value(add(first, index(out[dim]), i64), n, wrap=False), n, site))
        return out

    return ctx.lazy(args.out_shape, x.dtype, lambda idx: x.load(index_map(idx)), [x, start])


@lowering("aten::select.int")
def select_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return select(ctx, args.tensor("self"), int(args.static("dim")), int(args.static("index")))


@lowering("aten::flip")
def flip_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    dims = {norm_dim(d, x.rank) for d in args.get_ints("dims", [])}
    shape = x.shape

    def index_map(idx: Index) -> list[IndexExpr]:
        return [(shape[d] - 1) - IndexExpr.of(i) if d in dims else IndexExpr.of(i) for d, i in enumerate(idx)]

    return map_tensor(ctx, x, shape, x.dtype, index_map)


@lowering("aten::fliplr", "aten::flipud")
def fliplr_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    d = 1 if args.name == "fliplr" else 0
    n = x.shape[d]

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        out[d] = (n - 1) - out[d]
        return out

    return map_tensor(ctx, x, x.shape, x.dtype, index_map)


@lowering("aten::roll")
def roll_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    shifts = args.get_ints("shifts", [])
    dims = args.get_ints("dims", [])
    if not dims:
        flat = reshape(ctx, x, (x.numel,))
        rolled = _roll(ctx, flat, shifts[0], 0)
        return reshape(ctx, rolled, x.shape)
    out = x
    for s, d in zip(shifts, dims, strict=True):
        out = _roll(ctx, out, s, norm_dim(d, x.rank))
    return out


def _roll(ctx: LoweringContext, x: TensorValue, shift: int, dim: int) -> TensorValue:
    n = x.shape[dim]
    if n == 0:
        return x
    shift %= n

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        out[dim] = (out[dim] + (n - shift)) % n
        return out

    return map_tensor(ctx, x, x.shape, x.dtype, index_map)


@lowering("aten::repeat", "aten::tile")
def repeat_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    reps = args.get_ints("repeats", []) if args.name == "repeat" else args.get_ints("dims", [])
    out_shape = args.out_shape
    lead = len(out_shape) - x.rank
    xs = x.shape

    def index_map(idx: Index) -> list[IndexExpr]:
        return [IndexExpr.of(idx[lead + d]) % n if n != 1 else IndexExpr.of(0) for d, n in enumerate(xs)]

    del reps
    return map_tensor(ctx, x, out_shape, x.dtype, index_map)


@lowering("aten::pixel_shuffle", "aten::pixel_unshuffle")
def pixel_shuffle_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    out_shape = args.out_shape
    if args.name == "pixel_shuffle":
        r = int(args.static("upscale_factor"))

        def index_map(idx: Index) -> list[IndexExpr]:
            *lead, c, h, w = [IndexExpr.of(i) for i in idx]
            return [*lead, c * (r * r) + (h % r) * r + (w % r), h // r, w // r]
    else:
        r = int(args.static("downscale_factor"))

        def index_map(idx: Index) -> list[IndexExpr]:
            *lead, c, h, w = [IndexExpr.of(i) for i in idx]
            sub = c % (r * r)
            return [*lead, c // (r * r), h * r + sub // r, w * r + sub % r]

    return map_tensor(ctx, x, out_shape, x.dtype, index_map)


@lowering("aten::channel_shuffle")
def channel_shuffle_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    g = int(args.static("groups"))
    c = x.shape[1]
    per = c // g

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx]
        ch = out[1]
        out[1] = (ch % g) * per + ch // g
        return out

    return map_tensor(ctx, x, x.shape, x.dtype, index_map)


@lowering("aten::diagonal")
def diagonal_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    offset = int(args.static("offset", 0))
    d1 = norm_dim(int(args.static("dim1", 0)), x.rank)
    d2 = norm_dim(int(args.static("dim2", 1)), x.rank)
    rest = [d for d in range(x.rank) if d not in (d1, d2)]

    def index_map(idx: Index) -> list[IndexExpr]:
        out: list[IndexExpr] = [IndexExpr.of(0)] * x.rank
        for k, d in enumerate(rest):
            out[d] = IndexExpr.of(idx[k])
        i = IndexExpr.of(idx[-1])
        out[d1] = i + max(-offset, 0)
        out[d2] = i + max(offset, 0)
        return out

    return map_tensor(ctx, x, args.out_shape, x.dtype, index_map)


@lowering("aten::unfold")
def unfold_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    dim = norm_dim(int(args.static("dimension")), x.rank) if x.rank else 0
    step = int(args.static("step"))

    def index_map(idx: Index) -> list[IndexExpr]:
        out = [IndexExpr.of(i) for i in idx[:-1]]
        if x.rank:
            out[dim] = out[dim] * step + IndexExpr.of(idx[-1])
        return out

    return map_tensor(ctx, x, args.out_shape, x.dtype, index_map)


@lowering("aten::as_strided", "aten::as_strided_copy")
def as_strided(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``as_strided`` addresses its operand's storage: lowered against the storage eager gives
    it (``storage.py``), which views share with their base."""
    from ziggurat.backends.cpu.lowering.storage import storage_view

    offset = args.static("storage_offset")
    return storage_view(ctx, args, args.op.operands[0], args.get_ints("size", []), args.get_ints("stride", []),
                        None if offset is None else int(offset))


@lowering("aten::_reshape_alias")
def reshape_alias(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``as_strided(self, size, stride, self.storage_offset())``."""
    from ziggurat.backends.cpu.lowering.storage import storage_view

    return storage_view(ctx, args, args.op.operands[0], args.get_ints("size", []), args.get_ints("stride", []), None)
