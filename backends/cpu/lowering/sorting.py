"""sort / argsort / msort / topk / kthvalue by ranks.

The stable rank of element ``i`` along the sorted dim is the number of elements that come
before it (smaller, or equal with a smaller index; NaN sorts last, as in torch):
``rank[i] = sum_j before(x_j, x_i)``.  The ``p``-th sorted element is the one whose rank is
``p`` (an arg-reduction), read with a checked indirect index.  Quadratic in the length of the
sorted dim, fully native, and in-bounds by construction.

The keys are computed once, into a buffer, before they are ranked: the rank kernel reads
every key twice (as ``x_i`` and as ``x_j``) and the values are read a third time, and a
fused producer recomputed there is not bit-identical across those reads (a mean summed by a
vector reduction for ``x_i``, by a scalar loop for ``x_j``; vector and scalar math).  Keys
one ulp apart then break a tie both ways, two elements get the same rank, no element gets
the other, and a wrong element is read with no error (fuzz seed 3, programs 5666 and 6549).
"""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.ops import cast, compare, logical_and, logical_not, logical_or, predicate
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import norm_dim

I64 = torch.int64


def _before(a: Value, b: Value, descending: bool) -> Value:
    """``a`` sorts strictly before ``b`` (NaN is the largest value)."""
    if a.dtype.is_floating_point:
        a_nan, b_nan = predicate("isnan", a), predicate("isnan", b)
        if descending:
            return logical_or(logical_and(a_nan, logical_not(b_nan)), compare("gt", a, b))
        return logical_or(logical_and(b_nan, logical_not(a_nan)), compare("lt", a, b))
    return compare("gt" if descending else "lt", a, b)


def _same(a: Value, b: Value) -> Value:
    if a.dtype.is_floating_point:
        return logical_or(compare("eq", a, b), logical_and(predicate("isnan", a), predicate("isnan", b)))
    return compare("eq", a, b)


def sort_along(ctx: LoweringContext, args: LoweringArgs, x: TensorValue, dim: int, descending: bool,
               count: int) -> tuple[TensorValue, TensorValue]:
    """The first ``count`` sorted (values, indices) along ``dim``."""
    from ziggurat.backends.cpu.lowering.tensors import BufferValue

    x = BufferValue(ctx.realize(x, "sort_keys"))  # every key computed once (module docstring)
    n = x.shape[dim]
    rank_shape = x.shape

    def rank_body(out: Index, red: Index) -> Value:
        xi = x.load(out)
        sub = [IndexExpr.of(o) for o in out]
        sub[dim] = IndexExpr.of(red[0])
        xj = x.load(sub)
        earlier = compare("lt", cast(_index(red[0]), I64), cast(_index(out[dim]), I64))
        return cast(logical_or(_before(xj, xi, descending), logical_and(_same(xj, xi), earlier)), I64)

    ranks = ctx.reduction("sum", I64, rank_shape, (n,), rank_body, [x])
    buf = ctx.realize(ranks, "rank")
    out_shape = list(x.shape)
    out_shape[dim] = count

    def find_body(out: Index, red: Index) -> Value:
        sub = [IndexExpr.of(o) for o in out]
        sub[dim] = IndexExpr.of(red[0])
        from ziggurat.backends.cpu.lowering.values import Load

        return cast(compare("eq", Load(buf, sub), _index(out[dim])), I64)

    indices = ctx.reduction("argmax", I64, tuple(out_shape), (n,), find_body, [x])
    site = ctx.error_site(f"{args.key}: internal sort index")

    def value(idx: Index) -> Value:
        sub = [IndexExpr.of(i) for i in idx]
        sub[dim] = IndexExpr.of(Indirect(indices.load(idx), n, site))
        return x.load(sub)

    return ctx.lazy(tuple(out_shape), x.dtype, value, [x]), indices


def _index(e: IndexExpr | object) -> Value:
    from ziggurat.backends.cpu.lowering.ops import index

    return index(IndexExpr.of(e))  # type: ignore[arg-type]


@lowering("aten::sort", "aten::sort.stable", "aten::argsort", "aten::argsort.stable", "aten::msort")
def sort(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    x = args.tensor("self")
    if x.rank == 0:
        raise NotLowerable("sort of a 0-d tensor")
    dim = norm_dim(int(args.static("dim", 0 if args.name == "msort" else -1)), x.rank)
    descending = bool(args.static("descending", False))
    values, indices = sort_along(ctx, args, x, dim, descending, x.shape[dim])
    if args.name == "argsort":
        return indices
    if args.name == "msort":
        return values
    return [values, indices]


@lowering("aten::topk")
def topk(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    x = args.tensor("self")
    if x.rank == 0:
        raise NotLowerable("topk of a 0-d tensor")
    dim = norm_dim(int(args.static("dim", -1)), x.rank)
    k = int(args.static("k"))
    values, indices = sort_along(ctx, args, x, dim, bool(args.static("largest", True)), k)
    return [values, indices]


@lowering("aten::kthvalue")
def kthvalue(ctx: LoweringContext, args: LoweringArgs) -> list[TensorValue]:
    from ziggurat.backends.cpu.lowering.views import reshape, select

    x = args.tensor("self")
    if x.rank == 0:
        raise NotLowerable("kthvalue of a 0-d tensor")
    dim = norm_dim(int(args.static("dim", -1)), x.rank)
    k = int(args.static("k"))
    values, indices = sort_along(ctx, args, x, dim, False, k)
    v, i = select(ctx, values, dim, k - 1), select(ctx, indices, dim, k - 1)
    if bool(args.static("keepdim", False)):
        v, i = reshape(ctx, v, args.result_shape(0)), reshape(ctx, i, args.result_shape(1))
    return [v, i]
