"""Reductions: sum/mean/prod/amax/amin/max/min/argmax/argmin/all/any/var/std/logsumexp/norms.

Each is a :class:`Reduction` read lazily: the kernel that consumes it computes it in its
own loops (per row, vectorized over the reduced dimension) when the index structure
allows, else it is realized as its own kernel.  Accumulation dtypes follow torch: float32
for float inputs, int64 for integer/bool sums and products.
"""

from __future__ import annotations

import math

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.ops import add, cast, compare, const, div, index, mul, predicate, sub, unary, where
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.reduce_util import numel, out_shape, read_twice, reduce, reduce_dims, source_index
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Binary, Value
from ziggurat.backends.cpu.lowering.views import reshape


def _self(args: LoweringArgs) -> TensorValue:
    return args.tensor("self") if args.has("self") else args.tensor("input")


def _dims(args: LoweringArgs, x: TensorValue) -> list[int]:
    for name in ("dim", "axis"):
        if args.has(name):
            return reduce_dims(x, args.static(name))
    return list(range(x.rank))


@lowering("aten::sum", "aten::sum.dim_IntList", "aten::mean", "aten::mean.dim", "aten::prod", "aten::prod.dim_int",
          "aten::nansum", "aten::nanmean")
def sum_mean(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dims = _dims(args, x)
    keep = bool(args.static("keepdim", False))
    dt = args.out_dtype
    kind = "prod" if args.name == "prod" else "sum"
    nan = args.name in ("nansum", "nanmean")
    element = (lambda v, o: where(predicate("isnan", v), 0.0, v, v.dtype)) if nan and dt.is_floating_point else None
    if kind == "prod" and dt.is_floating_point:
        return _product(ctx, read_twice(ctx, x), dims, keep, dt)
    total = reduce(ctx, x, dims, keep, kind, dt, element)
    if args.name not in ("mean", "nanmean"):
        return total
    if not dt.is_floating_point:
        raise NotLowerable("mean of an integer tensor")
    if args.name == "nanmean":
        count = reduce(ctx, x, dims, keep, "sum", dt, lambda v, o: cast(compare("eq", predicate("isnan", v), False), dt))
        return pointwise(ctx, [total, count], total.shape, dt, lambda s, c: div(s, c, dt))
    n = numel([x.shape[d] for d in dims])
    return pointwise(ctx, [total], total.shape, dt, lambda s: div(s, float(n), dt) if n else const(math.nan, dt))


def _product(ctx: LoweringContext, x: TensorValue, dims: list[int], keep: bool, dt: torch.dtype) -> TensorValue:
    """The product of finite factors one of which is zero is that zero, signed by the parity of
    the factors' signs, whatever the order: a vector's lanes multiply in another order than
    eager's, and one lane's partial product may pass float32's range (inf) before another lane's
    zero meets it at the end (NaN; fuzz seed 146, program 139: 3,645 differences, eager 0).
    Beside the product, the product of each factor's unit (+-1, +-0 for a zero, NaN for an inf
    or NaN: it never overflows) is +-0 exactly there, and is the result then."""
    product = reduce(ctx, x, dims, keep, "prod", dt)

    def unit(v: Value, _idx: Index) -> Value:
        v = cast(v, dt)
        signed_one = where(predicate("signbit", v), -1.0, 1.0, dt)
        finite = where(predicate("isfinite", v), signed_one, math.nan, dt)
        return where(compare("eq", v, 0.0), v, finite, dt)

    units = reduce(ctx, x, dims, keep, "prod", dt, unit)
    return pointwise(ctx, [units, product], product.shape, dt, lambda u, p: where(compare("eq", u, 0.0), u, p, dt))


@lowering("aten::amax", "aten::amin", "aten::max", "aten::min")
def amax(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dims = _dims(args, x)
    keep = bool(args.static("keepdim", False))
    kind = "max" if args.name in ("amax", "max") else "min"
    return reduce(ctx, x, dims, keep, kind, args.out_dtype)


@lowering("aten::max.dim", "aten::min.dim")
def max_dim(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    x = _self(args)
    dims = reduce_dims(x, int(args.static("dim")))
    keep = bool(args.static("keepdim", False))
    kind = args.name
    values = reduce(ctx, x, dims, keep, kind, args.result_dtype(0))
    indices = reduce(ctx, x, dims, keep, "arg" + kind, torch.int64)
    return [values, indices]


@lowering("aten::aminmax")
def aminmax(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    x = _self(args)
    dim = args.static("dim")
    dims = reduce_dims(x, dim) if dim is not None else list(range(x.rank))
    keep = bool(args.static("keepdim", False))
    return [reduce(ctx, x, dims, keep, "min", args.result_dtype(0)),
            reduce(ctx, x, dims, keep, "max", args.result_dtype(1))]


@lowering("aten::argmax", "aten::argmin")
def argmax(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dim = args.static("dim")
    keep = bool(args.static("keepdim", False))
    if dim is None:
        flat = reshape(ctx, x, (x.numel,))
        out = reduce(ctx, flat, [0], False, args.name, torch.int64)
        return reshape(ctx, out, args.out_shape) if out.shape != args.out_shape else out
    return reduce(ctx, x, reduce_dims(x, int(dim)), keep, args.name, torch.int64)


@lowering("aten::all", "aten::all.dim", "aten::all.dims", "aten::any", "aten::any.dim", "aten::any.dims")
def all_any(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dims = _dims(args, x)
    keep = bool(args.static("keepdim", False))
    kind = args.name
    red = reduce(ctx, x, dims, keep, kind, torch.bool)
    if args.out_dtype != torch.bool:
        return pointwise(ctx, [red], red.shape, args.out_dtype, lambda v: v, torch.bool)
    return red


@lowering("aten::count_nonzero", "aten::count_nonzero.dim_IntList")
def count_nonzero(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dims = _dims(args, x)
    # compared in x's own dtype: 0.5 cast to int64 first would count as zero
    nonzero = pointwise(ctx, [x], x.shape, torch.bool, lambda v: compare("ne", v, 0, v.dtype), x.dtype)
    return reduce(ctx, nonzero, dims, False, "sum", torch.int64)


def _variance(ctx: LoweringContext, x: TensorValue, dims: list[int], keep: bool, correction: float,
              sqrt: bool, dt: torch.dtype) -> tuple[TensorValue, TensorValue]:
    """(variance or, with ``sqrt``, standard deviation; mean), in float64 as eager's CPU kernel
    (``WelfordOps<scalar_t, double>``) and rounded once to ``dt``: two passes, the mean, then the
    sum of squared deviations from it.  In float32 the squares of values past 1.8e19 overflowed
    where eager's are finite (fuzz seed 87, program 198: ``std`` of values near 1e36 gave inf),
    and the result was an ulp off eager's in about half the cases."""
    from ziggurat.backends.cpu.lowering.index import IndexExpr

    f64 = torch.float64
    n = numel([x.shape[d] for d in dims])
    total = reduce(ctx, x, dims, True, "sum", f64)
    mean = pointwise(ctx, [total], total.shape, f64, lambda s: div(s, float(n), f64))
    rank = x.rank

    def body(out: Index, red: Index) -> Value:
        idx = source_index(rank, dims, keep, out, red)
        mean_idx = [IndexExpr.of(0) if d in dims else i for d, i in enumerate(idx)]
        d = sub(cast(x.load(idx), f64), mean.load(mean_idx), f64)
        return mul(d, d, f64)

    shape = out_shape(x, dims, keep)
    sq = ctx.reduction("sum", f64, shape, tuple(x.shape[d] for d in dims), body, [x])
    denom = max(n - correction, 0)

    def result(s: Value) -> Value:
        var = div(s, float(denom), f64) if denom else mul(s, math.inf, f64)
        return unary("sqrt", var) if sqrt else var

    out = pointwise(ctx, [sq], shape, dt, result, f64)
    mean_out = pointwise(ctx, [mean], mean.shape, dt, lambda m: m, f64)
    return out, reshape(ctx, mean_out, shape) if mean_out.shape != shape else mean_out


def _correction(args: LoweringArgs) -> float:
    if args.has("correction"):
        c = args.static("correction")
        return 1.0 if c is None else float(c)
    return 1.0 if bool(args.static("unbiased", True)) else 0.0


@lowering("aten::var", "aten::var.dim", "aten::var.correction", "aten::std", "aten::std.dim", "aten::std.correction",
          "aten::var_mean", "aten::var_mean.dim", "aten::var_mean.correction", "aten::std_mean",
          "aten::std_mean.dim", "aten::std_mean.correction")
def var_std(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    x = _self(args)
    dt = args.result_dtype(0)
    if not dt.is_floating_point:
        raise NotLowerable("variance of an integer tensor")
    dims = _dims(args, x)
    keep = bool(args.static("keepdim", False))
    out, mean = _variance(ctx, x, dims, keep, _correction(args), args.name.startswith("std"), dt)
    if args.name.endswith("_mean"):
        return [out, _welford_mean(ctx, x, dims, keep, mean, dt)]
    return out


def _welford_mean(ctx: LoweringContext, x: TensorValue, dims: list[int], keep: bool, mean: TensorValue,
                  dt: torch.dtype) -> TensorValue:
    """The mean ``var_mean``/``std_mean`` return, as eager's Welford update computes it: once the
    running mean is infinite, every later element makes it NaN (``x - inf``), so a row with an
    infinity anywhere but in its last position has mean NaN (``torch.mean`` gives inf there)."""
    from ziggurat.backends.cpu.lowering.index import flat_index

    red_shape = tuple(x.shape[d] for d in dims)
    n = numel(red_shape)
    if n < 2:
        return mean
    rank = x.rank

    def early_inf(out: Index, red: Index) -> Value:
        v = cast(x.load(source_index(rank, dims, keep, out, red)), dt)
        return Binary("and", predicate("isinf", v), compare("lt", index(flat_index(red, red_shape)), n - 1))

    shape = out_shape(x, dims, keep)
    poisoned = ctx.reduction("any", torch.bool, shape, red_shape, early_inf, [x])
    return pointwise(ctx, [poisoned, mean], shape, dt, lambda p, m: where(p, math.nan, m, dt))


@lowering("aten::logsumexp")
def logsumexp(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dims = _dims(args, x)
    keep = bool(args.static("keepdim", False))
    dt = args.out_dtype
    if not dt.is_floating_point:
        raise NotLowerable("logsumexp of an integer tensor")
    x = read_twice(ctx, x)
    m = reduce(ctx, x, dims, True, "shift_max", dt)
    safe = pointwise(ctx, [m], m.shape, dt, lambda v: where(predicate("isinf", v), 0.0, v, dt))
    rank = x.rank

    def body(out: Index, red: Index) -> Value:
        idx = source_index(rank, dims, keep, out, red)
        from ziggurat.backends.cpu.lowering.index import IndexExpr

        m_idx = [IndexExpr.of(0) if d in dims else i for d, i in enumerate(idx)]
        return unary("exp", sub(cast(x.load(idx), dt), safe.load(m_idx), dt))

    shape = out_shape(x, dims, keep)
    s = ctx.reduction("sum", dt, shape, tuple(x.shape[d] for d in dims), body, [x])
    safe_out = reshape(ctx, safe, shape) if safe.shape != shape else safe
    return pointwise(ctx, [s, safe_out], shape, dt, lambda sv, mv: add(unary("log", sv), mv, dt))


def _norm(ctx: LoweringContext, x: TensorValue, p: float, dims: list[int], keep: bool, dt: torch.dtype) -> TensorValue:
    if p == math.inf:
        return reduce(ctx, x, dims, keep, "max", dt, lambda v, o: unary("abs", v))
    if p == -math.inf:
        return reduce(ctx, x, dims, keep, "min", dt, lambda v, o: unary("abs", v))
    if p == 0:
        return reduce(ctx, x, dims, keep, "sum", dt, lambda v, o: cast(compare("ne", v, 0.0), dt))
    if p == 1:
        return reduce(ctx, x, dims, keep, "sum", dt, lambda v, o: unary("abs", v))
    if p == 2:
        s = reduce(ctx, x, dims, keep, "sum", dt, lambda v, o: mul(v, v, dt))
        return pointwise(ctx, [s], s.shape, dt, lambda v: unary("sqrt", v))
    s = reduce(ctx, x, dims, keep, "sum", dt, lambda v, o: unary("pow", unary("abs", v), exponent=p))
    return pointwise(ctx, [s], s.shape, dt, lambda v: unary("pow", v, exponent=1.0 / p))


@lowering("aten::norm.Scalar", "aten::norm.ScalarOpt_dim", "aten::norm.ScalarOpt_dim_dtype",
          "aten::linalg_vector_norm", "aten::frobenius_norm.dim")
def norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    dt = args.out_dtype
    if not dt.is_floating_point:
        raise NotLowerable("norm of an integer tensor")
    p = args.static("ord") if args.has("ord") else args.static("p", 2.0)
    p = 2.0 if p is None else float(p)
    dims = _dims(args, x)
    keep = bool(args.static("keepdim", False))
    return _norm(ctx, x, p, dims, keep, dt)


@lowering("aten::linalg_norm")
def linalg_norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = _self(args)
    ord_ = args.static("ord")
    dims = _dims(args, x)
    if ord_ is not None and len(dims) != 1:
        raise NotLowerable("matrix norms other than Frobenius")
    if ord_ is None and len(dims) > 2 and args.static("dim") is not None:
        raise NotLowerable("linalg_norm over more than two dims")
    p = 2.0 if ord_ is None else float(ord_)
    return _norm(ctx, x, p, dims, bool(args.static("keepdim", False)), args.out_dtype)


@lowering("aten::trace")
def trace(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """The diagonal's sum; a float one in float64, rounded once, as eager's CPU kernel
    (``acc_type<scalar_t, false>``): in float32, ``3e38 + 3e38 - 3e38`` overflowed."""
    x = _self(args)
    n = min(x.shape)
    dt = args.out_dtype
    acc = torch.float64 if dt.is_floating_point else dt
    from ziggurat.backends.cpu.lowering.index import IndexExpr

    def body(out: Index, red: Index) -> Value:
        i = IndexExpr.of(red[0])
        return cast(x.load([i, i]), acc)

    if not n:
        return ctx.lazy((), dt, lambda idx: const(0, dt), [x])
    total = ctx.reduction("sum", acc, (), (n,), body, [x])
    return total if acc == dt else pointwise(ctx, [total], (), dt, lambda v: v, acc)


__all__ = ["Binary"]
