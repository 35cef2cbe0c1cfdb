"""Losses and similarity functions, as element functions and reductions.

``reduction``: 0 = none, 1 = mean, 2 = sum (torch's ``Reduction`` enum).
"""

from __future__ import annotations

import math

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, Indirect
from ziggurat.backends.cpu.lowering.index_checks import checked_value
from ziggurat.backends.cpu.lowering.normalization import softmax
from ziggurat.backends.cpu.lowering.ops import (
    add,
    cast,
    compare,
    const,
    div,
    maximum,
    mul,
    sub,
    unary,
    where,
)
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.reduce_util import reduce
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value

F32 = torch.float32
I64 = torch.int64


def _float(args: LoweringArgs) -> str | None:
    return None if args.result_dtype(0) == F32 else "losses compute float32 only"


def reduced(ctx: LoweringContext, loss: TensorValue, reduction: int, dt: torch.dtype) -> TensorValue:
    if reduction == 0:
        return loss
    total = reduce(ctx, loss, list(range(loss.rank)), False, "sum", dt)
    if reduction == 2:
        return total
    n = max(loss.numel, 0)
    return pointwise(ctx, [total], (), dt, lambda s: div(s, float(n), dt) if n else const(math.nan, dt))


def _elementwise_loss(ctx: LoweringContext, args: LoweringArgs, fn) -> TensorValue:  # type: ignore[no-untyped-def]
    x, y = args.tensor("self"), args.tensor("target")
    shape = tuple(torch.broadcast_shapes(x.shape, y.shape))
    dt = args.result_dtype(0)
    loss = pointwise(ctx, [x, y], shape, dt, fn)
    return reduced(ctx, loss, int(args.static("reduction", 1)), dt)


@lowering("aten::mse_loss", validator=_float)
def mse_loss(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _elementwise_loss(ctx, args, lambda a, b: mul(sub(a, b, F32), sub(a, b, F32), F32))


@lowering("aten::l1_loss", validator=_float)
def l1_loss(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    return _elementwise_loss(ctx, args, lambda a, b: unary("abs", sub(a, b, F32)))


@lowering("aten::smooth_l1_loss", "aten::huber_loss", validator=_float)
def smooth_l1(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    huber = args.name == "huber_loss"
    beta = float(args.static("delta", 1.0) if huber else args.static("beta", 1.0))

    def fn(a: Value, b: Value) -> Value:
        d = unary("abs", sub(a, b, F32))
        if beta == 0:
            return d
        half_sq = mul(mul(d, d, F32), 0.5, F32)
        if huber:  # 0.5 d^2 below delta, delta (d - delta/2) above
            quad, lin = half_sq, mul(sub(d, 0.5 * beta, F32), beta, F32)
        else:  # 0.5 d^2 / beta below beta, d - beta/2 above
            quad, lin = div(half_sq, beta, F32), sub(d, 0.5 * beta, F32)
        return where(compare("lt", d, beta, F32), quad, lin, F32)

    return _elementwise_loss(ctx, args, fn)


@lowering("aten::kl_div", validator=_float)
def kl_div(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    log_target = bool(args.static("log_target", False))
    if int(args.static("reduction", 1)) not in (0, 1, 2):
        raise NotLowerable("kl_div reduction")

    def fn(x: Value, t: Value) -> Value:
        if log_target:
            return mul(unary("exp", t), sub(t, x, F32), F32)
        xlogy = where(compare("eq", t, 0.0, F32), const(0.0, F32), mul(t, unary("log", t), F32), F32)
        return sub(xlogy, mul(t, x, F32), F32)

    return _elementwise_loss(ctx, args, fn)


@lowering("aten::binary_cross_entropy_with_logits", validator=_float)
def bce_logits(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, y = args.tensor("self"), args.tensor("target")
    w, pw = args.optional_tensor("weight"), args.optional_tensor("pos_weight")
    shape = tuple(torch.broadcast_shapes(*[t.shape for t in (x, y, w, pw) if t is not None]))
    operands = [x, y] + [t for t in (w, pw) if t is not None]

    def fn(xv: Value, yv: Value, *rest: Value) -> Value:
        it = iter(rest)
        wv = next(it) if w is not None else None
        pv = next(it) if pw is not None else None
        # log(1 + exp(-x)) computed stably: softplus(-x)
        sp = unary("softplus", unary("neg", xv))
        if pv is not None:
            lw = add(mul(sub(pv, 1.0, F32), yv, F32), 1.0, F32)
            loss = add(mul(sub(1.0, yv, F32), xv, F32), mul(lw, sp, F32), F32)
        else:
            loss = add(mul(sub(1.0, yv, F32), xv, F32), sp, F32)
        return mul(loss, wv, F32) if wv is not None else loss

    loss = pointwise(ctx, operands, shape, F32, fn)
    return reduced(ctx, loss, int(args.static("reduction", 1)), F32)


def _nll(ctx: LoweringContext, args: LoweringArgs, logp: TensorValue, target: TensorValue,
         weight: TensorValue | None, reduction: int, ignore: int) -> tuple[TensorValue, TensorValue]:
    """(loss, total_weight) of ``-weight[t] * logp[n, t, ...]`` over the batch (and spatial) dims."""
    c = logp.shape[1] if logp.rank > 1 else logp.shape[0]
    site = ctx.error_site(f"{args.key}: target out of range for {c} classes")
    batched = logp.rank > 1
    tshape = target.shape

    def per_element(idx: Index, want_weight: bool) -> Value:
        t = cast(target.load(idx), I64)
        valid = compare("ne", t, ignore, I64)
        safe = where(valid, checked_value(t, c, wrap=False), const(0, I64), I64)  # eager raises on -1
        cls = IndexExpr.of(Indirect(safe, c, site))
        sub_ = [IndexExpr.of(idx[0]), cls, *[IndexExpr.of(i) for i in idx[1:]]] if batched else [cls]
        wv = cast(weight.load([cls]), F32) if weight is not None else const(1.0, F32)
        if want_weight:
            return where(valid, wv, const(0.0, F32), F32)
        # an ignored element is exactly 0 as in eager, also where its row holds NaN or inf
        # (a weight of 0 times that NaN/inf would be NaN)
        return where(valid, mul(mul(cast(logp.load(sub_), F32), wv, F32), -1.0, F32), const(0.0, F32), F32)

    loss = ctx.lazy(tshape, F32, lambda idx: per_element(idx, False), [logp, target])
    wsum = ctx.lazy(tshape, F32, lambda idx: per_element(idx, True), [target])
    if reduction == 0:  # torch leaves total_weight at 0 without a reduction
        return loss, ctx.lazy((), F32, lambda idx: const(0.0, F32))
    total_w = reduce(ctx, wsum, list(range(len(tshape))), False, "sum", F32)
    total = reduce(ctx, loss, list(range(len(tshape))), False, "sum", F32)
    if reduction == 2:
        return total, total_w
    return pointwise(ctx, [total, total_w], (), F32, lambda s, wt: div(s, wt, F32)), total_w


@lowering("aten::nll_loss_forward", "aten::nll_loss", "aten::nll_loss2d_forward", "aten::nll_loss_nd",
          validator=_float)
def nll_loss(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    loss, total = _nll(ctx, args, args.tensor("self"), args.tensor("target"), args.optional_tensor("weight"),
                       int(args.static("reduction", 1)), int(args.static("ignore_index", -100)))
    if len(args.op.results) == 2:
        return [loss, total]
    return loss


@lowering("aten::cross_entropy_loss", validator=_float)
def cross_entropy(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, target = args.tensor("self"), args.tensor("target")
    if float(args.static("label_smoothing", 0.0)) != 0.0:
        raise NotLowerable("cross_entropy with label smoothing")
    cdim = 1 if x.rank > 1 else 0
    logp = softmax(ctx, x, cdim, True, F32)
    if target.dtype.is_floating_point:
        weight = args.optional_tensor("weight")

        def term(idx: Index) -> Value:
            v = mul(cast(target.load(idx), F32), logp.load(idx), F32)
            if weight is not None:
                v = mul(v, cast(weight.load([idx[cdim]]), F32), F32)
            return mul(v, -1.0, F32)

        per_class = ctx.lazy(x.shape, F32, term, [x, target])
        loss = reduce(ctx, per_class, [cdim], False, "sum", F32)
        return reduced(ctx, loss, int(args.static("reduction", 1)), F32)
    loss, _ = _nll(ctx, args, logp, target, args.optional_tensor("weight"), int(args.static("reduction", 1)),
                   int(args.static("ignore_index", -100)))
    return loss


@lowering("aten::poisson_nll_loss", validator=_float)
def poisson_nll(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x, y = args.tensor("input"), args.tensor("target")
    log_input, full = bool(args.static("log_input")), bool(args.static("full"))
    eps = float(args.static("eps"))
    shape = tuple(torch.broadcast_shapes(x.shape, y.shape))

    def fn(xv: Value, yv: Value) -> Value:
        if log_input:
            loss = sub(unary("exp", xv), mul(yv, xv, F32), F32)
        else:
            loss = sub(xv, mul(yv, unary("log", add(xv, eps, F32)), F32), F32)
        if full:
            stirling = add(sub(mul(yv, unary("log", yv), F32), yv, F32),
                           mul(unary("log", mul(yv, 2 * math.pi, F32)), 0.5, F32), F32)
            loss = add(loss, where(compare("gt", yv, 1.0, F32), stirling, const(0.0, F32), F32), F32)
        return loss

    loss = pointwise(ctx, [x, y], shape, F32, fn)
    return reduced(ctx, loss, int(args.static("reduction", 1)), F32)


@lowering("aten::cosine_similarity", validator=_float)
def cosine_similarity(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    from ziggurat.backends.cpu.lowering.views import expand, norm_dim

    a, b = args.tensor("x1"), args.tensor("x2")
    shape = tuple(torch.broadcast_shapes(a.shape, b.shape))
    if not shape:
        raise NotLowerable("cosine_similarity of 0-d tensors (no dim to reduce; eager treats dim 0 specially)")
    a, b = expand(ctx, a, shape), expand(ctx, b, shape)
    dim = norm_dim(int(args.static("dim", 1)), len(shape))
    eps = float(args.static("eps", 1e-8))
    # eager's formula: each operand divided by its norm (clamped to eps), then the dot product.
    # The dot product over the product of the norms gave NaN (inf / inf) where a norm overflows
    # (|x| past 1.8e19), where eager gives x / inf = 0 (fuzz seed 63, program 114).
    norms = [pointwise(ctx, [reduce(ctx, v, [dim], True, "sum", F32, lambda x, o: mul(x, x, F32))],
                       shape[:dim] + (1,) + shape[dim + 1:], F32, lambda s: maximum(unary("sqrt", s), eps, F32))
             for v in (a, b)]

    def term(x: Value, y: Value, nx: Value, ny: Value) -> Value:
        return mul(div(x, nx, F32), div(y, ny, F32), F32)

    return reduce(ctx, pointwise(ctx, [a, b, *norms], shape, F32, term), [dim], False, "sum", F32)
