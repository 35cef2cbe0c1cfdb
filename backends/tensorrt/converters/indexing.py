"""Slicing, splitting, joining and indexing -> ISliceLayer / IConcatenationLayer / IGatherLayer / IScatterLayer."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import (
    broadcast_to,
    cast,
    elementwise,
    insert_dims,
    normalize_dim,
    reshape,
    select,
    select_dim,
    slice_dim,
    transpose,
)
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt.shapes import DYNAMIC
from ziggurat.dialects.trt import (
    ConcatenationOp,
    ElementWiseOperation,
    GatherMode,
    GatherOp,
    IdentityOp,
    ScatterMode,
    ScatterOp,
    SliceOp,
)

E = ElementWiseOperation


def _dim(ctx: ConversionContext, args: ConverterArgs, name: str = "dim") -> int:
    return normalize_dim(ctx, args.get_int(name), args.rank("self"))


# -- slicing ------------------------------------------------------------------------------------------


@converter("aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)")
def slice_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    dim = _dim(ctx, args)
    (extent,) = ctx.dims(x, [dim])
    start = args.get_optional_int("start") or 0
    if start < 0:
        start += extent
    start = min(max(start, 0), extent)
    (size,) = ctx.dims(ctx.op.results[0], [dim])
    if size == extent:
        return ctx.add(IdentityOp(x, name=ctx.name())).output
    return slice_dim(ctx, x, dim, start, size, args.get_int("step"), "")


@converter(
    "aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
    "aten::narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)",
)
def narrow(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    dim = _dim(ctx, args)
    raw = args.tensor_or_scalar("start")
    if isinstance(raw, SSAValue):
        literal = ctx.literal(raw)
        if literal is None:
            raise ctx.error("narrow with a start computed at run time")
        raw = int(literal.item())
    start = int(raw) + (ctx.shape(x)[dim] if int(raw) < 0 else 0)
    return slice_dim(ctx, x, dim, start, args.get_int("length"), 1, "")


@converter("aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
def select_int(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    dim = _dim(ctx, args)
    index = args.get_int("index")
    if index < 0:
        index += ctx.dims(x, [dim])[0]
    if DYNAMIC in ctx.shape(x, dynamic=True):
        return select_dim(ctx, x, dim, index, "")
    return reshape(ctx, slice_dim(ctx, x, dim, index, 1, 1, "slice"), ctx.result_shape(), "")


def _pieces(ctx: ConversionContext, x: SSAValue, dim: int, squeeze: bool) -> list[SSAValue]:
    """One slice per result of the op, sized by the result types."""
    out: list[SSAValue] = []
    offset = 0
    for i, result in enumerate(ctx.op.results):
        if squeeze:
            piece = select_dim(ctx, x, dim, offset, f"part {i}")
            size = 1
        else:
            (size,) = ctx.dims(result, [dim])
            piece = slice_dim(ctx, x, dim, offset, size, 1, f"part {i}")
        if piece is x:
            piece = ctx.add(IdentityOp(x, name=ctx.name(f"part {i}"))).output
        out.append(piece)
        offset += size
    return out


@converter(
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
    "aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
    "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
    "aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]",
    "aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]",
    "aten::unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
)
def split(ctx: ConversionContext, args: ConverterArgs) -> list[SSAValue]:
    return _pieces(ctx, ctx.tensor(args.tensor("self")), _dim(ctx, args), squeeze=False)


@converter("aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
def unbind(ctx: ConversionContext, args: ConverterArgs) -> list[SSAValue]:
    return _pieces(ctx, ctx.tensor(args.tensor("self")), _dim(ctx, args), squeeze=True)


# -- joining -----------------------------------------------------------------------------------------------


def _concat(ctx: ConversionContext, values: Sequence[SSAValue], dim: int) -> SSAValue:
    dtype = ctx.result_dtype()
    parts = [cast(ctx, ctx.tensor(v), dtype, f"input {i} cast") for i, v in enumerate(values)]
    return ctx.add(ConcatenationOp(parts, dim, name=ctx.name())).output


@converter("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
def cat(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    # torch skips 1-D empty inputs (legacy); a dynamic 1-D input that is empty at run time
    # breaks the concatenation's rank rule there (an error, not a wrong value)
    values = [v for v in args.tensors("tensors") if ctx.shape(v, dynamic=True) != (0,)] or args.tensors("tensors")[:1]
    return _concat(ctx, values, normalize_dim(ctx, args.get_int("dim"), ctx.rank(ctx.op.results[0])))


@converter("aten::stack(Tensor[] tensors, int dim=0) -> Tensor")
def stack(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    dim = normalize_dim(ctx, args.get_int("dim"), ctx.rank(ctx.op.results[0]))
    values = [insert_dims(ctx, ctx.tensor(v), [dim], f"input {i} unsqueeze") for i, v in enumerate(args.tensors("tensors"))]
    return _concat(ctx, values, dim)


@converter(
    "aten::meshgrid(Tensor[] tensors) -> Tensor[]",
    "aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]",
)
def meshgrid(ctx: ConversionContext, args: ConverterArgs) -> list[SSAValue]:
    tensors = args.tensors("tensors")
    xy = args.has("indexing") and args.get_str("indexing") == "xy" and len(tensors) >= 2
    out_shape = ctx.result_shape()
    rank = len(tensors)
    results = []
    for i, v in enumerate(tensors):
        position = i
        if xy and i < 2:
            position = 1 - i
        shape = [1] * rank
        shape[position] = ctx.shape(v)[0] if ctx.rank(v) else 1
        aligned = reshape(ctx, ctx.tensor(v), shape, f"input {i} align")
        results.append(broadcast_to(ctx, aligned, out_shape, f"input {i} expand"))
    return results


# -- gathering ----------------------------------------------------------------------------------------


def _wrap_negative(ctx: ConversionContext, index: SSAValue, extent: int, suffix: str) -> SSAValue:
    """index + extent where index < 0 (TensorRT gathers only in [0, extent))."""
    literal = ctx.literal(index)
    if literal is not None:
        fixed = torch.where(literal < 0, literal + extent, literal)
        return ctx.constant(fixed.to(torch.int64 if literal.dtype == torch.int64 else torch.int32), suffix)
    t = ctx.tensor(index)
    dtype = ctx.dtype(t)
    negative = elementwise(ctx, t, 0, E.kLESS, dtype=dtype, suffix=f"{suffix} < 0")
    shifted = elementwise(ctx, t, extent, E.kSUM, dtype=dtype, suffix=f"{suffix} + size")
    return select(ctx, negative, shifted, t, dtype=dtype, suffix=f"{suffix} wrapped")


def _modulo(ctx: ConversionContext, index: SSAValue, extent: int, suffix: str) -> SSAValue:
    """index modulo extent, the sign of extent (``take_along_dim`` takes every index so)."""
    literal = ctx.literal(index)
    if literal is not None:
        return ctx.constant(torch.remainder(literal, extent), suffix)
    t = ctx.tensor(index)
    dtype = ctx.dtype(t)
    quotient = elementwise(ctx, t, extent, E.kFLOOR_DIV, dtype=dtype, suffix=f"{suffix} // size")
    whole = elementwise(ctx, quotient, extent, E.kPROD, dtype=dtype, suffix=f"{suffix} // size * size")
    return elementwise(ctx, t, whole, E.kSUB, dtype=dtype, suffix=f"{suffix} mod size")


def _integer_index(args: ConverterArgs, name: str) -> str | None:
    dtype = args.dtype(name)
    if dtype.is_floating_point or dtype == torch.bool:
        return f"'{name}' has dtype {dtype}; TensorRT gathers with int32/int64 indices"
    return None


@converter("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor",
           validator=lambda args: _integer_index(args, "index"))
def index_select(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    if ctx.rank(x) == 0:  # a 0-d tensor indexes like a 1-element vector
        x = reshape(ctx, x, [1], "as 1-D")
    dim = normalize_dim(ctx, args.get_int("dim"), ctx.rank(x))
    index = ctx.tensor(args.tensor("index"))  # a negative index is out of range, as in eager
    if ctx.rank(index) == 0:
        index = reshape(ctx, index, [1], "index as vector")
    y = ctx.add(GatherOp(x, index, name=ctx.name(), axis=dim)).output
    return reshape(ctx, y, ctx.result_shape(), "result shape")


@converter(
    "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    validator=lambda args: _integer_index(args, "indices"),
)
def embedding(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    weight = ctx.tensor(args.tensor("weight"))
    indices = ctx.tensor(args.tensor("indices"))
    return ctx.add(GatherOp(weight, indices, name=ctx.name(), axis=0)).output


def _gather_ok(args: ConverterArgs) -> str | None:
    if args.get_bool("sparse_grad"):
        return "sparse gradients"
    return _integer_index(args, "index")


@converter("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", validator=_gather_ok)
def gather(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kELEMENT gather; ``self`` is cut to ``index``'s extent on the other dims first (torch allows smaller)."""
    x = ctx.tensor(args.tensor("self"))
    index = ctx.tensor(args.tensor("index"))
    if ctx.rank(x) == 0:  # 0-d gathers like a 1-element vector
        x = reshape(ctx, x, [1], "as 1-D")
        index = reshape(ctx, index, [1], "index as 1-D")
    dim = normalize_dim(ctx, args.get_int("dim"), ctx.rank(x))
    x = _fit(ctx, x, ctx.shape(index), dim, "fit to index")
    y = ctx.add(GatherOp(x, index, name=ctx.name(), mode=GatherMode.kELEMENT, axis=dim)).output
    return reshape(ctx, y, ctx.result_shape(), "result shape")


def _fit(ctx: ConversionContext, x: SSAValue, shape: Sequence[int], skip: int, suffix: str) -> SSAValue:
    current = ctx.shape(x)
    sizes = [current[i] if i == skip else shape[i] for i in range(len(current))]
    if list(sizes) == list(current):
        return x
    return ctx.add(SliceOp(x, [0] * len(current), sizes, [1] * len(current), name=ctx.name(suffix))).output


def _index_ok(args: ConverterArgs) -> str | None:
    indices = args.get("indices")
    present = [v for v in indices if v is not None]
    if not present:
        return "index with no index tensors"
    for v in present:
        if not isinstance(v, SSAValue):
            return "index with a non-tensor index"
        from ziggurat.ir.types import dtype_of

        dtype = dtype_of(v.type)
        if dtype == torch.bool:
            return "boolean mask indexing has a data-dependent shape"
        if dtype.is_floating_point:
            return f"index tensors of dtype {dtype}"
    return None


@converter(
    "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "aten::index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor",
    validator=_index_ok,
)
def index(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Advanced indexing: indexed dims go first, their broadcast indices form a kND gather."""
    x = ctx.tensor(args.tensor("self"))
    shape = ctx.shape(x)
    raw: list[SSAValue | None] = list(args.get("indices"))
    raw += [None] * (len(shape) - len(raw))
    dims = [d for d, v in enumerate(raw) if v is not None]
    if len(dims) == 1:
        d = dims[0]
        idx = raw[d]
        assert idx is not None
        idx = _wrap_negative(ctx, idx, shape[d], "index")
        return ctx.add(GatherOp(x, idx, name=ctx.name(), axis=d)).output
    rest = [d for d in range(len(shape)) if d not in dims]
    x = transpose(ctx, x, dims + rest, "indexed dims first")
    broadcast = list(torch.broadcast_shapes(*(ctx.shape(raw[d]) for d in dims)))  # type: ignore[arg-type]
    parts = []
    for j, d in enumerate(dims):
        v = raw[d]
        assert v is not None
        idx = cast(ctx, _wrap_negative(ctx, v, shape[d], f"index {j}"), torch.int32, f"index {j} cast")
        idx = broadcast_to(ctx, idx, broadcast, f"index {j} expand")
        parts.append(reshape(ctx, idx, [*broadcast, 1], f"index {j} component"))
    nd = ctx.add(ConcatenationOp(parts, len(broadcast), name=ctx.name("index tuple"))).output
    y = ctx.add(GatherOp(x, nd, name=ctx.name(), mode=GatherMode.kND)).output
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0] > 0:
        b = len(broadcast)
        before = list(range(b, b + dims[0]))
        perm = before + list(range(b)) + list(range(b + dims[0], ctx.rank(y)))
        y = transpose(ctx, y, perm, "indexed dims back in place")
    return y


def _scatter_ok(args: ConverterArgs) -> str | None:
    if args.has("reduce"):
        return "scatter with a reduction has no TensorRT layer"
    return _integer_index(args, "index")


@converter(
    "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
    "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
    validator=_scatter_ok,
)
def scatter(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    dim = _dim(ctx, args)
    index = ctx.tensor(args.tensor("index"))
    if args.has("src"):
        updates = cast(ctx, ctx.tensor(args.tensor("src")), ctx.dtype(x), "src cast")
        updates = _fit(ctx, updates, ctx.shape(index), -1, "src fit to index")
    else:
        value = torch.full(ctx.shape(index), args.get_scalar("value"), dtype=ctx.dtype(x))
        updates = ctx.constant(value, "value")
    return ctx.add(ScatterOp(x, index, updates, name=ctx.name(), mode=ScatterMode.kELEMENT, axis=dim)).output


@converter("aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor")
def repeat_interleave(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    repeats = args.get_int("repeats")
    if args.is_none("dim"):
        x = reshape(ctx, x, [-1 if ctx.shape(x) else 1], "flatten")
        dim = 0
    else:
        dim = _dim(ctx, args)
    shape = list(ctx.shape(x))
    widened = reshape(ctx, x, shape[: dim + 1] + [1] + shape[dim + 1 :], "unsqueeze")
    expanded = broadcast_to(ctx, widened, shape[: dim + 1] + [repeats] + shape[dim + 1 :], "expand")
    return reshape(ctx, expanded, ctx.result_shape(), "")


@converter("aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor")
def repeat_interleave_tensor(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Constant ``repeats``: a gather with the index list they spell out."""
    literal = ctx.literal(args.tensor("repeats"))
    if literal is None:
        raise ctx.error("repeat_interleave with repeats computed at run time has a data-dependent shape")
    x = ctx.tensor(args.tensor("self"))
    if args.is_none("dim"):
        x = reshape(ctx, x, [-1 if ctx.shape(x) else 1], "flatten")
        dim = 0
    else:
        dim = _dim(ctx, args)
    counts = literal.reshape(-1).to(torch.int64)
    if counts.numel() == 1:
        counts = counts.expand(ctx.shape(x)[dim])
    order = torch.repeat_interleave(torch.arange(counts.numel()), counts).to(torch.int32)
    return ctx.add(GatherOp(x, ctx.constant(order, "indices"), name=ctx.name(), axis=dim)).output


def _literal_repeats(args: ConverterArgs) -> str | None:
    owner = args.tensor("repeats").owner
    from ziggurat.dialects.torch import LiteralOp

    return None if isinstance(owner, LiteralOp) else "repeat_interleave of run-time repeats has a data-dependent shape"


@converter("aten::repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
           validator=_literal_repeats)
def repeat_interleave_indices(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Constant ``repeats``: the index list [0]*r0 + [1]*r1 + ... is itself a constant."""
    literal = ctx.literal(args.tensor("repeats"))
    assert literal is not None
    order = torch.repeat_interleave(torch.arange(literal.numel()), literal.reshape(-1).to(torch.int64))
    return ctx.constant(order.to(ctx.result_dtype()), "indices")


@converter("aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
           validator=lambda args: _integer_index(args, "indices"))
def take_along_dim(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """kELEMENT gather after broadcasting self and indices on every dim but ``dim`` (flattened if None)."""
    x = ctx.tensor(args.tensor("self"))
    index = ctx.tensor(args.tensor("indices"))
    if args.is_none("dim"):
        x = reshape(ctx, x, [-1 if ctx.shape(x) else 1], "flatten self")
        index = reshape(ctx, index, [-1 if ctx.shape(index) else 1], "flatten indices")
        dim = 0
    else:
        dim = normalize_dim(ctx, args.get_int("dim"), ctx.rank(x))
    sx, si = list(ctx.shape(x)), list(ctx.shape(index))
    common = [max(a, b) for a, b in zip(sx, si, strict=True)]
    x = broadcast_to(ctx, x, [sx[d] if d == dim else common[d] for d in range(len(sx))], "expand self")
    index = broadcast_to(ctx, index, [si[d] if d == dim else common[d] for d in range(len(si))], "expand indices")
    if not args.is_none("dim"):  # eager: indices % size along a dim; flattened, a plain gather
        index = _modulo(ctx, index, sx[dim], "indices")
    y = ctx.add(GatherOp(x, index, name=ctx.name(), mode=GatherMode.kELEMENT, axis=dim)).output
    return reshape(ctx, y, ctx.result_shape(), "result shape")
