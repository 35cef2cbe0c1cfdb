"""Writes at computed positions, as reads: slice/select/diagonal_scatter, scatter (src, value,
add, reduce), index_put.

Kernels only write their own output index, so a scatter is computed from the output's
side: ``out[p]`` reduces over the scattered sources whose index equals ``p`` (the last
one for plain assignment, like torch's sequential CPU loop).  This costs the size of the
scattered dimension per output element, and keeps every write in bounds by construction.
Every index is checked as eager checks it (``index_checks``): one that eager rejects is a
run-time error naming the op, never a dropped write.
"""

from __future__ import annotations

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.index_checks import asserted_index, index_site
from ziggurat.backends.cpu.lowering.ops import (
    add,
    cast,
    compare,
    const,
    div,
    identity,
    index,
    logical_and,
    logical_not,
    maximum,
    minimum,
    mul,
    predicate,
    where,
)
from ziggurat.backends.cpu.lowering.pointwise import broadcast_index
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import norm_dim, slice_bounds

I64 = torch.int64


@lowering("aten::slice_scatter")
def slice_scatter(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, src = args.tensor("self"), args.tensor("src")
    dim = norm_dim(int(args.static("dim", 0)), x.rank)
    step = int(args.static("step", 1))
    start, length = slice_bounds(x.shape[dim], args.static("start"), args.static("end"), step)
    dt = x.dtype

    def element(idx: Index) -> Value:
        i = IndexExpr.of(idx[dim])
        rel = i - start
        inside = logical_and(compare("ge", index(rel), 0, I64), compare("lt", index(rel), length * step, I64),
                             compare("eq", index(rel % step), 0, I64)) if step > 1 else \
            logical_and(compare("ge", index(rel), 0, I64), compare("lt", index(rel), length, I64))
        from ziggurat.backends.cpu.lowering.ops import load_or

        sub = [IndexExpr.of(j) for j in idx]
        sub[dim] = rel // step
        return where(inside, cast(load_or(src, sub, 0), dt), x.load(idx), dt)

    return ctx.lazy(x.shape, dt, element, [x, src])


@lowering("aten::select_scatter")
def select_scatter(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, src = args.tensor("self"), args.tensor("src")
    dim = norm_dim(int(args.static("dim")), x.rank)
    pos = int(args.static("index")) % x.shape[dim]
    dt = x.dtype

    def element(idx: Index) -> Value:
        hit = compare("eq", index(IndexExpr.of(idx[dim])), pos, I64)
        sub = [IndexExpr.of(j) for j in idx[:dim]] + [IndexExpr.of(j) for j in idx[dim + 1:]]
        return where(hit, cast(src.load(sub), dt), x.load(idx), dt)

    return ctx.lazy(x.shape, dt, element, [x, src])


@lowering("aten::diagonal_scatter")
def diagonal_scatter(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, src = args.tensor("self"), args.tensor("src")
    offset = int(args.static("offset", 0))
    d1 = norm_dim(int(args.static("dim1", 0)), x.rank)
    d2 = norm_dim(int(args.static("dim2", 1)), x.rank)
    dt = x.dtype
    rest = [d for d in range(x.rank) if d not in (d1, d2)]

    def element(idx: Index) -> Value:
        a, b = IndexExpr.of(idx[d1]), IndexExpr.of(idx[d2])
        on = compare("eq", index(b - a), offset, I64)
        k = a - max(-offset, 0)
        from ziggurat.backends.cpu.lowering.ops import load_or

        sub = [IndexExpr.of(idx[d]) for d in rest] + [k]
        return where(on, cast(load_or(src, sub, 0), dt), x.load(idx), dt)

    return ctx.lazy(x.shape, dt, element, [x, src])


def _adds_something(v: Value) -> Value:
    """Whether adding ``v`` can change a float: every value but -0.0 (``x + -0.0`` is ``x``
    bit for bit, -0.0 and NaN included; ``-0.0 + +0.0`` is ``+0.0``).

    Eager accumulates scatter_add / index_put(accumulate) sources into the destination one
    by one, so where no source but -0.0 lands the result is the destination itself (a -0.0
    stays -0.0); a reduction starts at +0.0, and ``-0.0 + +0.0`` is +0.0.  Where a source
    other than -0.0 lands, a zero result is +0.0 in any summation order, as in eager's."""
    return logical_not(logical_and(compare("eq", v, 0.0, v.dtype), predicate("signbit", v)))


_COMBINE = {"sum": "sum", "add": "sum", "prod": "prod", "multiply": "prod", "amax": "max", "amin": "min",
            "mean": "sum"}


def _scatter(ctx: LoweringContext, args: LoweringArgs, x: TensorValue, dim: int, idx_t: TensorValue,
             src: TensorValue | float | int | bool, mode: str, include_self: bool) -> TensorValue:
    """``mode``: ``assign`` (the last writer wins) or a reduction over the matching sources."""
    from ziggurat.backends.cpu.lowering.values import guarded_loads

    dt = x.dtype
    n = idx_t.shape[dim]
    rank = x.rank
    site = ctx.error_site(f"{args.key}: internal index")
    index_error = index_site(ctx, args, x.shape[dim])

    def matches(out: Index, k: IndexExpr) -> tuple[Value, list[IndexExpr]]:
        """Whether source ``k`` along ``dim`` writes output ``out``, and its subscripts."""
        sub = [IndexExpr.of(o) for o in out]
        sub[dim] = k
        conds: list[Value] = []
        for d in range(rank):
            if d != dim and idx_t.shape[d] < x.shape[d]:
                conds.append(compare("lt", index(IndexExpr.of(out[d])), idx_t.shape[d], I64))
        with guarded_loads():  # (outside the index's shape: 0, in range, not a source)
            target = asserted_index(idx_t.load(sub), x.shape[dim], index_error, wrap=False)
        return logical_and(compare("eq", target, index(IndexExpr.of(out[dim])), I64), *conds), sub

    def value_at(sub: list[IndexExpr]) -> Value:
        if not isinstance(src, TensorValue):
            return const(src, dt)
        with guarded_loads():
            return cast(src.load(sub), dt)

    hits = ctx.reduction("sum", I64, x.shape, (n,), lambda o, r: cast(matches(o, IndexExpr.of(r[0]))[0], I64),
                         [idx_t])
    if mode == "assign":
        last = ctx.reduction("argmax", I64, x.shape, (n,),
                             lambda o, r: cast(matches(o, (n - 1) - IndexExpr.of(r[0]))[0], I64), [x, idx_t])

        def assign(out: Index) -> Value:
            k = add(const(n - 1, I64), mul(last.load(out), -1, I64), I64)
            _, sub = matches(out, IndexExpr.of(Indirect(k, n, site)))
            return where(compare("gt", hits.load(out), 0, I64), value_at(sub), x.load(out), dt)

        return ctx.lazy(x.shape, dt, assign, [x, idx_t])

    kind = _COMBINE[mode]
    ident = identity(kind, dt)

    def red_body(out: Index, red: Index) -> Value:
        hit, sub = matches(out, IndexExpr.of(red[0]))
        return where(hit, value_at(sub), const(ident, dt), dt)

    total = ctx.reduction(kind, dt, x.shape, (n,), red_body, [x, idx_t])
    live = None
    if kind == "sum" and include_self and dt.is_floating_point:
        def live_body(out: Index, red: Index) -> Value:
            hit, sub = matches(out, IndexExpr.of(red[0]))
            return cast(logical_and(hit, _adds_something(value_at(sub))), I64)

        live = ctx.reduction("sum", I64, x.shape, (n,), live_body, [x, idx_t])

    first_zero = None
    if kind in ("max", "min") and dt.is_floating_point:
        # eager replaces its running max/min only by a strictly greater/smaller value, so where
        # the result is a zero its sign is the first zero's in the order eager visits them
        # (the destination, with include_self, then the sources by position)
        def zero_hit(out: Index, red: Index) -> Value:
            hit, sub = matches(out, IndexExpr.of(red[0]))
            return cast(logical_and(hit, compare("eq", value_at(sub), 0.0, dt)), I64)

        first_zero = ctx.reduction("argmax", I64, x.shape, (n,), zero_hit, [x, idx_t])

    def signed_zero(out: Index, v: Value, base: Value) -> Value:
        """``v`` with a zero result signed as eager's."""
        assert first_zero is not None
        _, sub = matches(out, IndexExpr.of(Indirect(first_zero.load(out), n, site)))
        pick = value_at(sub)
        if include_self:
            pick = where(compare("eq", base, 0.0, dt), base, pick, dt)
        return where(compare("eq", v, 0.0, dt), pick, v, dt)

    def combined(out: Index) -> Value:
        base, t = x.load(out), total.load(out)
        if kind == "sum" and include_self:
            v = add(t, base, dt)
            if live is not None:  # no source but -0.0: eager's result is base, bit for bit
                v = where(compare("gt", live.load(out), 0, I64), v, base, dt)
            if mode == "mean":
                v = div(v, cast(add(hits.load(out), 1, I64), dt), dt)
            return v
        h = hits.load(out)
        if mode == "mean":
            v = div(t, cast(maximum(h, 1, I64), dt), dt)
        elif include_self:
            op = {"sum": add, "prod": mul, "max": maximum, "min": minimum}[kind]
            v = op(t, base, dt)
        else:
            v = t
        if first_zero is not None:
            v = signed_zero(out, v, base)
        if not include_self:
            v = where(compare("gt", h, 0, I64), v, base, dt)
        return v

    return ctx.lazy(x.shape, dt, combined, [x, idx_t])


@lowering("aten::scatter.src", "aten::scatter.value", "aten::scatter.reduce", "aten::scatter.value_reduce",
          "aten::scatter_add", "aten::scatter_reduce.two", "aten::scatter_.src", "aten::scatter_.value",
          "aten::scatter_add_")
def scatter(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    dim = norm_dim(int(args.static("dim")), max(x.rank, 1))
    idx_t = args.tensor("index")
    src = args.get("src") if args.has("src") else args.static("value")
    if x.rank == 0 or idx_t.numel == 0 or x.numel == 0:
        raise NotLowerable("scatter into a 0-d or empty tensor or with no indices")
    reduce = args.static("reduce") if args.has("reduce") else None
    if args.name.startswith("scatter_add"):
        mode = "sum"
    elif reduce is None:
        mode = "assign"
    else:
        mode = str(reduce)
    if mode not in _COMBINE and mode != "assign":
        raise NotLowerable(f"scatter reduce '{mode}'")
    if mode == "mean" and not x.dtype.is_floating_point:
        raise NotLowerable("integer scatter mean rounds like torch's floor division")
    include_self = bool(args.static("include_self", True))
    return _scatter(ctx, args, x, dim, idx_t, src, mode, include_self)


@lowering("aten::index_put", "aten::index_put.hacked_twin", "aten::_index_put_impl_",
          "aten::_index_put_impl_.hacked_twin", "aten::index_put_", "aten::_unsafe_index_put")
def index_put(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``x[indices] = values`` (``accumulate`` adds) for integer index tensors on leading dims."""
    x = args.tensor("self")
    indices = list(args.get("indices") or [])
    values = args.tensor("values")
    accumulate = bool(args.static("accumulate", False))
    if not indices or any(i is None or not isinstance(i, TensorValue) or i.dtype == torch.bool for i in indices):
        raise NotLowerable("index_put with None or boolean indices")
    if x.numel == 0:
        raise NotLowerable("index_put into an empty tensor")
    k = len(indices)
    sites = [index_site(ctx, args, x.shape[d]) for d in range(k)]
    bshape = tuple(torch.broadcast_shapes(*[i.shape for i in indices]))
    m = 1
    for d in bshape:
        m *= d
    if m == 0:
        return x
    tail = x.shape[k:]
    dt = x.dtype
    vshape = bshape + tail

    def source(j: IndexExpr, out: Index) -> tuple[Value, list[IndexExpr]]:
        from ziggurat.backends.cpu.lowering.index import unflatten

        bidx = unflatten(j, bshape) if bshape else []
        hit: Value | None = None
        for d, t in enumerate(indices):
            # eager: a negative index counts from the end, one outside [-size, size) raises
            v = asserted_index(t.load(broadcast_index(bidx, t.shape, bshape)), x.shape[d], sites[d], wrap=True)
            h = compare("eq", v, index(IndexExpr.of(out[d])), I64)
            hit = h if hit is None else logical_and(hit, h)
        assert hit is not None
        vsub = broadcast_index([*bidx, *[IndexExpr.of(o) for o in out[k:]]], values.shape, vshape)
        return hit, vsub

    if accumulate:
        def body(out: Index, red: Index) -> Value:
            hit, vsub = source(IndexExpr.of(red[0]), out)
            return where(hit, cast(values.load(vsub), dt), const(0, dt), dt)

        total = ctx.reduction("sum", dt, x.shape, (m,), body, [x, values])
        if not dt.is_floating_point:
            return ctx.lazy(x.shape, dt, lambda out: add(x.load(out), total.load(out), dt), [x])

        def live_body(out: Index, red: Index) -> Value:
            hit, vsub = source(IndexExpr.of(red[0]), out)
            return cast(logical_and(hit, _adds_something(cast(values.load(vsub), dt))), I64)

        live = ctx.reduction("sum", I64, x.shape, (m,), live_body, [x, values])

        def accumulated(out: Index) -> Value:  # no source but -0.0: eager's result is x, bit for bit
            base = x.load(out)
            return where(compare("gt", live.load(out), 0, I64), add(base, total.load(out), dt), base, dt)

        return ctx.lazy(x.shape, dt, accumulated, [x])

    def last_body(out: Index, red: Index) -> Value:
        hit, _ = source((m - 1) - IndexExpr.of(red[0]), out)
        return cast(hit, I64)

    last = ctx.reduction("argmax", I64, x.shape, (m,), last_body, [x, values])
    hits = ctx.reduction("any", torch.bool, x.shape, (m,), lambda o, r: source(IndexExpr.of(r[0]), o)[0], [x])
    site = ctx.error_site(f"{args.key}: internal index")

    def element(out: Index) -> Value:
        j = add(const(m - 1, I64), mul(last.load(out), -1, I64), I64)
        _, vsub = source(IndexExpr.of(Indirect(j, m, site)), out)
        return where(hits.load(out), cast(values.load(vsub), dt), x.load(out), dt)

    return ctx.lazy(x.shape, dt, element, [x, values])
