"""Reductions, statistics, norms, arg-extrema, top-k, cumulative sums and softmax."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import (
    FLOAT_DTYPES,
    cast,
    elementwise,
    normalize_dim,
    normalize_dims,
    reduce,
    reshape,
    unary,
)
from ziggurat.backends.tensorrt.converters.casts import torch_cast
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import (
    CumulativeOp,
    ElementWiseOperation,
    ReduceOperation,
    SoftMaxOp,
    TopKOp,
    TopKOperation,
    UnaryOperation,
    mask_from_axes,
)

E = ElementWiseOperation
R = ReduceOperation
U = UnaryOperation


def _dims(args: ConverterArgs, name: str = "dim") -> list[int]:
    """The reduced dims (all of them when the argument is absent, None or empty)."""
    if not args.has(name) or args.is_none(name):
        return []
    return args.get_ints(name)


def _keepdim(args: ConverterArgs) -> bool:
    return args.get_bool("keepdim") if args.has("keepdim") else False


def _input(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """``self`` in the result dtype (``dtype=`` arguments and bool/int promotion of sums)."""
    x = ctx.tensor(args.tensor("self"))
    target = ctx.result_dtype()
    if target == torch.bool:
        return x
    if ctx.dtype(x).is_floating_point and not target.is_floating_point:
        return torch_cast(ctx, x, target, "to result dtype")  # eager's value for NaN and out-of-range floats
    return cast(ctx, x, target, "to result dtype")


def _not_bool_result(args: ConverterArgs) -> str | None:
    from ziggurat.ir.types import dtype_of

    if dtype_of(args.op.results[0].type) == torch.bool:
        return "IReduceLayer does not reduce bool tensors"
    return None


@converter(
    "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    validator=_not_bool_result,
)
def sum_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return reduce(ctx, _input(ctx, args), R.kSUM, _dims(args), _keepdim(args))


@converter(
    "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    validator=_not_bool_result,
)
def mean(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return reduce(ctx, _input(ctx, args), R.kAVG, _dims(args), _keepdim(args))


@converter(
    "aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    validator=_not_bool_result,
)
def prod(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return reduce(ctx, _input(ctx, args), R.kPROD, _dims(args), _keepdim(args))


@converter(
    "aten::max(Tensor self) -> Tensor",
    "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    validator=_not_bool_result,
)
def amax(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return reduce(ctx, args.tensor("self"), R.kMAX, _dims(args), _keepdim(args))


@converter(
    "aten::min(Tensor self) -> Tensor",
    "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    validator=_not_bool_result,
)
def amin(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return reduce(ctx, args.tensor("self"), R.kMIN, _dims(args), _keepdim(args))


def _any_all(ctx: ConversionContext, args: ConverterArgs, op: ReduceOperation) -> SSAValue:
    """any = max over (x != 0), all = min over (x != 0), computed on int32 (TensorRT reduces numbers)."""
    x = ctx.tensor(args.tensor("self"))
    if ctx.dtype(x) != torch.bool:
        x = unary(ctx, elementwise(ctx, x, 0, E.kEQUAL, dtype=ctx.dtype(x), suffix="== 0"), U.kNOT, "!= 0")
    numbers = cast(ctx, x, torch.int32, "as int32")
    dims = [args.get_int("dim")] if args.has("dim") and args.schema.overload == "dim" else _dims(args)
    y = reduce(ctx, numbers, op, dims, _keepdim(args), "reduce")
    return cast(ctx, y, ctx.result_dtype(), "")


@converter(
    "aten::any(Tensor self) -> Tensor",
    "aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
)
def any_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _any_all(ctx, args, R.kMAX)


@converter(
    "aten::all(Tensor self) -> Tensor",
    "aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "aten::all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
)
def all_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _any_all(ctx, args, R.kMIN)


# -- arg-extrema and top-k -------------------------------------------------------------------------


def topk(ctx: ConversionContext, x: SSAValue, k: int, dim: int, largest: bool, suffix: str = "") -> tuple[SSAValue, SSAValue]:
    x = ctx.tensor(x)
    if ctx.rank(x) == 0:  # a 0-d tensor is its own top-1
        x, dim = reshape(ctx, x, [1], "as 1-D"), 0
    layer = ctx.add(TopKOp(x, TopKOperation.kMAX if largest else TopKOperation.kMIN, k, mask_from_axes([dim]),
                           name=ctx.name(suffix)))
    return layer.values, layer.indices


def smallest(ctx: ConversionContext, x: SSAValue, dim: int, suffix: str) -> tuple[SSAValue, SSAValue]:
    """The minimum along ``dim`` and its first index, as ``torch.min(dim)``/``argmin``: a NaN is
    the minimum there (the top-k order puts NaN above every number, so a kMIN top-1 skipped
    it).  Floats take the top-1 of ``-x`` (NaN stays NaN and comes first, ties keep their
    order); integers, which have no NaN (and whose minimum has no negation), take kMIN."""
    x = ctx.tensor(x)
    if ctx.dtype(x) not in FLOAT_DTYPES:
        return topk(ctx, x, 1, dim, False, suffix)
    values, indices = topk(ctx, unary(ctx, x, U.kNEG, f"{suffix} negated"), 1, dim, True, suffix)
    return unary(ctx, values, U.kNEG, f"{suffix} values"), indices


def _topk_input(args: ConverterArgs) -> str | None:
    dtype = args.dtype("self")
    if dtype == torch.bool or dtype == torch.int8:
        return f"ITopKLayer does not take {dtype}"
    return None


@converter(
    "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    validator=_topk_input,
)
def max_dim(ctx: ConversionContext, args: ConverterArgs) -> list[SSAValue]:
    dim = normalize_dim(ctx, args.get_int("dim"), max(args.rank("self"), 1))
    if args.schema.base_name == "max":
        values, indices = topk(ctx, args.tensor("self"), 1, dim, True, "top-1")
    else:
        values, indices = smallest(ctx, args.tensor("self"), dim, "top-1")
    values = reshape(ctx, values, ctx.result_shape(0), "values")
    indices = reshape(ctx, cast(ctx, indices, torch.int64, "indices cast"), ctx.result_shape(1), "indices")
    return [values, indices]


@converter(
    "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    validator=_topk_input,
)
def argmax(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = ctx.tensor(args.tensor("self"))
    if args.is_none("dim"):
        x = reshape(ctx, x, [-1], "flatten")
        dim = 0
    else:
        dim = normalize_dim(ctx, args.get_int("dim"), max(ctx.rank(x), 1))
    if args.schema.base_name == "argmax":
        _, indices = topk(ctx, x, 1, dim, True, "top-1")
    else:
        _, indices = smallest(ctx, x, dim, "top-1")
    return reshape(ctx, cast(ctx, indices, torch.int64, "indices cast"), ctx.result_shape(), "")


@converter("aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
           validator=_topk_input)
def topk_(ctx: ConversionContext, args: ConverterArgs) -> list[SSAValue]:
    dim = normalize_dim(ctx, args.get_int("dim"), max(args.rank("self"), 1))
    values, indices = topk(ctx, args.tensor("self"), args.get_int("k"), dim, args.get_bool("largest"))
    values = reshape(ctx, values, ctx.result_shape(0), "values")
    return [values, reshape(ctx, cast(ctx, indices, torch.int64, "indices cast"), ctx.result_shape(1), "indices")]


# -- scans and softmax ---------------------------------------------------------------------------------


@converter("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", validator=_not_bool_result)
def cumsum(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    x = _input(ctx, args)
    if ctx.rank(x) == 0:
        return reshape(ctx, cumsum_1d(ctx, reshape(ctx, x, [1], "as 1-D")), [], "")
    return ctx.add(CumulativeOp(x, normalize_dim(ctx, args.get_int("dim"), ctx.rank(x)), name=ctx.name())).output


def cumsum_1d(ctx: ConversionContext, x: SSAValue) -> SSAValue:
    return ctx.add(CumulativeOp(x, 0, name=ctx.name("scan"))).output


def _float_softmax(args: ConverterArgs) -> str | None:
    from ziggurat.ir.types import dtype_of

    dtype = dtype_of(args.op.results[0].type)
    return None if dtype in FLOAT_DTYPES else f"softmax producing {dtype}"


def softmax(ctx: ConversionContext, x: SSAValue, dim: int, suffix: str = "") -> SSAValue:
    x = ctx.tensor(x)
    if ctx.rank(x) == 0:
        x = reshape(ctx, x, [1], "as 1-D")
        return reshape(ctx, ctx.add(SoftMaxOp(x, 1, name=ctx.name(suffix))).output, [], "as 0-D")
    return ctx.add(SoftMaxOp(x, mask_from_axes([normalize_dim(ctx, dim, ctx.rank(x))]), name=ctx.name(suffix))).output


@converter("aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", validator=_float_softmax)
def softmax_(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return softmax(ctx, _input(ctx, args), args.get_int("dim"))


@converter("aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", validator=_float_softmax)
def log_softmax(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """Eager's ``(x - max) - log(sum(exp(x - max)))``: ``log(softmax(x))`` is -inf wherever the
    softmax underflows to 0 (a row spread wider than about 104), where eager is finite."""
    x = _input(ctx, args)
    scalar = ctx.rank(x) == 0
    if scalar:
        x = reshape(ctx, x, [1], "as 1-D")
    dim = normalize_dim(ctx, args.get_int("dim"), ctx.rank(x))
    shifted = elementwise(ctx, x, reduce(ctx, x, R.kMAX, [dim], True, "max"), E.kSUB, suffix="shifted")
    total = reduce(ctx, unary(ctx, shifted, U.kEXP, "exp"), R.kSUM, [dim], True, "sum")
    y = elementwise(ctx, shifted, unary(ctx, total, U.kLOG, "log"), E.kSUB, suffix="" if not scalar else "1-D")
    return reshape(ctx, y, [], "as 0-D") if scalar else y


# -- statistics and norms ---------------------------------------------------------------------------------


def _correction(args: ConverterArgs) -> float:
    if args.has("correction"):
        value = args.get_optional_scalar("correction")
        return 1.0 if value is None else float(value)
    return 1.0 if args.get_bool("unbiased") else 0.0


def variance(ctx: ConversionContext, x: SSAValue, dims: Sequence[int], keepdim: bool, correction: float) -> SSAValue:
    """sum((x - mean)^2) / (N - correction)."""
    x = ctx.tensor(x)
    rank = ctx.rank(x)
    axes = normalize_dims(ctx, dims, rank) if dims else list(range(rank))
    count = math.prod(ctx.shape(x)[a] for a in axes)
    centered = elementwise(ctx, x, reduce(ctx, x, R.kAVG, axes, True, "mean"), E.kSUB, suffix="centered")
    squares = elementwise(ctx, centered, centered, E.kPROD, suffix="squared")
    total = reduce(ctx, squares, R.kSUM, axes, keepdim, "sum of squares")
    return elementwise(ctx, total, float(max(count - correction, 0)), E.kDIV, suffix="")


def _float_self(args: ConverterArgs) -> str | None:
    dtype = args.dtype("self")
    return None if dtype in FLOAT_DTYPES else f"statistics of {dtype} tensors"


@converter(
    "aten::var(Tensor self, bool unbiased=True) -> Tensor",
    "aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
    "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    validator=_float_self,
)
def var(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return variance(ctx, args.tensor("self"), _dims(args), _keepdim(args), _correction(args))


@converter(
    "aten::std(Tensor self, bool unbiased=True) -> Tensor",
    "aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
    "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    validator=_float_self,
)
def std(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    v = variance(ctx, args.tensor("self"), _dims(args), _keepdim(args), _correction(args))
    return unary(ctx, v, U.kSQRT, "sqrt")


def p_norm(ctx: ConversionContext, x: SSAValue, p: float, dims: Sequence[int], keepdim: bool) -> SSAValue:
    """The vector p-norm over ``dims`` (all when empty): inf/-inf/0/1/2/general p."""
    x = ctx.tensor(x)
    magnitude = unary(ctx, x, U.kABS, "abs")
    if p == math.inf:
        return reduce(ctx, magnitude, R.kMAX, dims, keepdim, "")
    if p == -math.inf:
        return reduce(ctx, magnitude, R.kMIN, dims, keepdim, "")
    if p == 0:
        nonzero = unary(ctx, elementwise(ctx, x, 0.0, E.kEQUAL, suffix="== 0"), U.kNOT, "!= 0")
        return reduce(ctx, cast(ctx, nonzero, ctx.dtype(x), "count"), R.kSUM, dims, keepdim, "")
    if p == 1:
        return reduce(ctx, magnitude, R.kSUM, dims, keepdim, "")
    if p == 2:
        squares = elementwise(ctx, x, x, E.kPROD, suffix="squared")
        return unary(ctx, reduce(ctx, squares, R.kSUM, dims, keepdim, "sum"), U.kSQRT, "")
    powers = elementwise(ctx, magnitude, p, E.kPOW, suffix="power")
    return elementwise(ctx, reduce(ctx, powers, R.kSUM, dims, keepdim, "sum"), 1.0 / p, E.kPOW, suffix="root")


def _norm_ok(args: ConverterArgs) -> str | None:
    reason = _float_self(args)
    if reason:
        return reason
    if args.has("ord") and args.schema.overload == "ord_str":
        return None if args.get_str("ord") == "fro" else f"matrix norm ord={args.get_str('ord')!r}"
    if args.key == "aten::linalg_norm" and not args.is_none("ord"):
        if args.is_none("dim") and args.rank("self") == 2 or not args.is_none("dim") and len(args.get_ints("dim")) == 2:
            return "matrix norms with a numeric ord"
    return None


@converter(
    "aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor",
    "aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
    "aten::norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor",
    "aten::norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor",
    "aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
    validator=_norm_ok,
)
def norm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    name = "p" if args.has("p") else "ord" if args.has("ord") else None
    if name is None or args.schema.overload == "ord_str" or args.is_none(name):
        p = 2.0  # Frobenius = 2-norm of the flattened dims
    else:
        p = float(args.get_scalar(name))
    return p_norm(ctx, _input(ctx, args), p, _dims(args), _keepdim(args))
