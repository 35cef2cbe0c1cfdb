"""softmax / log_softmax and the normalization layers (layer, group, instance, batch, RMS).

A softmax over the last dimension is one kernel: per row, a vectorized max loop, a
vectorized sum-of-exp loop, then the output loop (the reductions are computed in the
consuming kernel, see ``placement.py``).  Normalizations compute mean and variance in
two passes (mean, then squared deviations), in float32; batch statistics (batch and instance
norm) sum in float64, as eager's CPU kernels do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.ops import add, cast, compare, const, div, fma, mul, sub, unary, where
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.reduce_util import numel, read_twice, reduce, source_index
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.values import Value
from ziggurat.backends.cpu.lowering.views import norm_dim, reshape


def _float(args: LoweringArgs) -> str | None:
    return None if args.out_dtype == torch.float32 else f"float32 only, got {args.out_dtype}"


def _kept(idx: Index, dims: Sequence[int]) -> list[IndexExpr]:
    return [IndexExpr.of(0) if d in dims else IndexExpr.of(i) for d, i in enumerate(idx)]


def softmax(ctx: LoweringContext, x: TensorValue, dim: int, log: bool, dt: torch.dtype) -> TensorValue:
    dim = norm_dim(dim, x.rank)
    if x.rank == 0:
        # eager's x - max(x) is NaN for an infinite or NaN element, so is the result
        def single(v: Value) -> Value:
            shifted = sub(v, v, dt)
            return shifted if log else unary("exp", shifted)

        return pointwise(ctx, [x], (), dt, single)
    x = read_twice(ctx, x)
    m = reduce(ctx, x, [dim], True, "shift_max", dt)
    rank = x.rank

    def body(out: Index, red: Index) -> Value:
        idx = source_index(rank, [dim], True, out, red)
        return unary("exp", sub(cast(x.load(idx), dt), m.load(_kept(idx, [dim])), dt))

    s = ctx.reduction("sum", dt, m.shape, (x.shape[dim],), body, [x])

    def element(idx: Index) -> Value:
        k = _kept(idx, [dim])
        shifted = sub(cast(x.load(idx), dt), m.load(k), dt)
        if log:
            return sub(shifted, unary("log", s.load(k)), dt)
        # one divide per row (hoisted out of the row loop), then a multiply per element
        return mul(unary("exp", shifted), div(const(1.0, dt), s.load(k), dt), dt)

    return ctx.lazy(x.shape, dt, element, [x])


@lowering("aten::softmax.int", "aten::_softmax", "aten::log_softmax.int", "aten::_log_softmax",
          "aten::_safe_softmax", "aten::special_softmax", "aten::special_log_softmax", validator=_float)
def softmax_op(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    log = "log" in args.name
    dt = args.out_dtype
    if args.name == "safe_softmax":
        return safe_softmax(ctx, x, int(args.static("dim")), dt)
    return softmax(ctx, x, int(args.static("dim")), log, dt)


def safe_softmax(ctx: LoweringContext, x: TensorValue, dim: int, dt: torch.dtype) -> TensorValue:
    """torch's ``_safe_softmax`` (attention's): a row whose every element is -inf (fully
    masked) is 0 instead of NaN."""
    result = softmax(ctx, x, dim, False, dt)
    dim = norm_dim(dim, max(x.rank, 1))
    neg_inf = pointwise(ctx, [x], x.shape, torch.bool, lambda v: compare("eq", v, -math.inf, v.dtype), x.dtype)
    masked = reduce(ctx, neg_inf, [dim], True, "all", torch.bool) if x.rank else neg_inf
    return pointwise(ctx, [masked, result], x.shape, dt, lambda m, r: where(m, 0.0, r, dt))


def statistics(ctx: LoweringContext, x: TensorValue, dims: Sequence[int], eps: float, dt: torch.dtype,
               rms: bool = False) -> tuple[TensorValue, TensorValue]:
    """(mean, rstd) over ``dims`` (kept as size 1): the mean (a float64 sum rounded once), then
    the squared deviations from it, in float32; ``rms``: a zero mean and the root of the mean
    square."""
    dims = list(dims)
    n = numel([x.shape[d] for d in dims])
    rank = x.rank
    if rms:
        sq = reduce(ctx, x, dims, True, "sum", dt, lambda v, o: mul(v, v, dt))
        mean = pointwise(ctx, [sq], sq.shape, dt, lambda s: const(0.0, dt))
    else:
        # the sum in float64, rounded once to the mean: eager's Welford mean stays finite where a
        # float32 sum of values near 1e38 overflows (its infinite mean made the output NaN where
        # eager's squares overflow instead and give the bias: fuzz seed 96, program 151)
        total = reduce(ctx, x, dims, True, "sum", torch.float64)
        mean = pointwise(ctx, [total], total.shape, dt, lambda s: div(s, float(n), torch.float64), torch.float64)

        def body(out: Index, red: Index) -> Value:
            idx = source_index(rank, dims, True, out, red)
            d = sub(cast(x.load(idx), dt), mean.load(_kept(idx, dims)), dt)
            return mul(d, d, dt)

        sq = ctx.reduction("sum", dt, mean.shape, tuple(x.shape[d] for d in dims), body, [x])
    rstd = pointwise(ctx, [sq], sq.shape, dt, lambda s: unary("rsqrt", add(div(s, float(n), dt), eps, dt)))
    return mean, rstd


def batch_statistics(ctx: LoweringContext, x: TensorValue, dims: Sequence[int], eps: float,
                     dt: torch.dtype) -> tuple[TensorValue, TensorValue]:
    """(mean, rstd) over ``dims`` (kept as size 1) as eager's batch and instance norms compute
    their batch statistics on the CPU (``batch_norm_cpu_collect_stats``, whose accumulator is
    ``acc_type<float, false>``, a double): ``mean = float(sum / n)`` with the sum in float64,
    ``var_sum`` the float64 sum of the float32 ``(x - mean)**2``, stored as a float32, and
    ``rstd = float(1 / sqrt(double(var_sum / n) + eps))``.  A float32 sum overflowed where
    eager's does not (values near 1e38): its infinite mean made the output NaN where eager's
    is finite (fuzz seed 82, program 173)."""
    f64 = torch.float64
    dims = list(dims)
    n = numel([x.shape[d] for d in dims])
    rank = x.rank
    total = reduce(ctx, x, dims, True, "sum", f64)
    mean = pointwise(ctx, [total], total.shape, dt, lambda s: div(s, float(n), f64), f64)

    def body(out: Index, red: Index) -> Value:
        idx = source_index(rank, dims, True, out, red)
        d = sub(cast(x.load(idx), dt), mean.load(_kept(idx, dims)), dt)
        return cast(mul(d, d, dt), f64)

    var_sum = ctx.reduction("sum", f64, mean.shape, tuple(x.shape[d] for d in dims), body, [x])

    def invstd(s: Value) -> Value:
        var = div(cast(s, dt), float(n), dt)
        return div(1.0, unary("sqrt", add(cast(var, f64), eps, f64)), f64)

    rstd = pointwise(ctx, [var_sum], var_sum.shape, dt, invstd, f64)
    return mean, rstd


def scale_shift(xv: Value, mean: Value, rstd: Value, weight: Value | None, bias: Value | None,
                dt: torch.dtype, fused: bool = False) -> Value:
    """Eager's batch, instance and group norm kernels: ``x * a + (bias - mean * a)`` with
    ``a = rstd * weight``; ``fused``: both multiply-adds rounded once, as eager's batch and
    instance norms (their compiler contracts them; measured bit for bit).
    Only finite values round alike in ``(x - mean) * rstd * weight``: an infinite weight gives
    NaN here wherever ``x`` or ``mean`` is 0 or their signs differ."""
    a = rstd if weight is None else mul(rstd, weight, dt)
    b = bias if bias is not None else const(0.0, dt)
    if fused:
        return fma(xv, a, fma(mul(mean, -1.0, dt), a, b, dt), dt)
    return add(mul(xv, a, dt), sub(b, mul(mean, a, dt), dt), dt)


def normalize(ctx: LoweringContext, x: TensorValue, dims: Sequence[int], eps: float,
              weight: TensorValue | None, bias: TensorValue | None, affine_dims: Sequence[int],
              dt: torch.dtype, rms: bool = False) -> tuple[TensorValue, TensorValue, TensorValue]:
    """Eager's layer/RMS norm over ``dims``: ``(x - mean) * rstd * weight + bias`` (layer norm
    adds a zero bias when there is none, as eager does: ``-0`` becomes ``0``), ``x * rstd * weight``
    (RMS); ``weight``/``bias`` span ``affine_dims`` of x.  Returns (output, mean, rstd), the
    statistics with ``dims`` kept as size 1."""
    dims = list(dims)
    mean, rstd = statistics(ctx, x, dims, eps, dt, rms)

    def element(idx: Index) -> Value:
        k = _kept(idx, dims)
        xv = cast(x.load(idx), dt)
        y = mul(xv if rms else sub(xv, mean.load(k), dt), rstd.load(k), dt)
        affine_idx = [IndexExpr.of(idx[d]) for d in affine_dims]
        if weight is not None:
            y = mul(y, cast(weight.load(_fit(weight, affine_idx)), dt), dt)
        if bias is not None:
            y = add(y, cast(bias.load(_fit(bias, affine_idx)), dt), dt)
        elif not rms:
            y = add(y, const(0.0, dt), dt)
        return y

    out = ctx.lazy(x.shape, dt, element, [x])
    return out, mean, rstd


def _linear_norm(ctx: LoweringContext, x: TensorValue, dims: Sequence[int], eps: float,
                 weight: TensorValue | None, bias: TensorValue | None,
                 dt: torch.dtype) -> tuple[TensorValue, TensorValue, TensorValue]:
    """Instance norm and batch norm with batch statistics over ``dims``, per-channel (dim 1)
    ``weight``/``bias``, in eager's :func:`scale_shift` form with its statistics
    (:func:`batch_statistics`).  Returns (output, mean, rstd)."""
    dims = list(dims)
    mean, rstd = batch_statistics(ctx, x, dims, eps, dt)

    def element(idx: Index) -> Value:
        k = _kept(idx, dims)
        ch = [IndexExpr.of(idx[1])]
        return scale_shift(cast(x.load(idx), dt), mean.load(k), rstd.load(k),
                           cast(weight.load(ch), dt) if weight is not None else None,
                           cast(bias.load(ch), dt) if bias is not None else None, dt, fused=True)

    return ctx.lazy(x.shape, dt, element, [x]), mean, rstd


def _fit(t: TensorValue, idx: list[IndexExpr]) -> list[IndexExpr]:
    """``idx`` for a parameter tensor that may have fewer dims or size-1 dims."""
    idx = idx[len(idx) - t.rank:] if t.rank <= len(idx) else idx
    return [IndexExpr.of(0) if n == 1 else i for i, n in zip(idx, t.shape, strict=True)]


def _refuse_welford_mean(args: LoweringArgs) -> None:
    """native_layer_norm / native_group_norm whose mean output is read run in torch: eager
    accumulates it with a vectorized Welford cascade, where a row holding an infinity gives
    NaN or inf depending on where the infinity sits and on the host's vector width (the
    normalized output and rstd are NaN for such rows either way)."""
    if len(args.op.results) > 1 and list(args.op.results[1].uses):
        raise NotLowerable(f"the mean output of {args.name} (eager's Welford accumulation: a row holding "
                           "an infinity gives NaN or inf depending on its position and the host's vector width)")


def _normalized_dims(args: LoweringArgs, x: TensorValue) -> list[int]:
    """The trailing dims ``normalized_shape`` covers (layer_norm, rms_norm)."""
    k = len(args.get_ints("normalized_shape", []))
    return list(range(x.rank - k, x.rank))


@lowering("aten::layer_norm", "aten::native_layer_norm", validator=_float)
def layer_norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    _refuse_welford_mean(args)
    x = args.tensor("input")
    dims = _normalized_dims(args, x)
    eps = float(args.static("eps", 1e-5))
    out, mean, rstd = normalize(ctx, x, dims, eps, args.optional_tensor("weight"), args.optional_tensor("bias"), dims,
                                args.result_dtype(0))
    if args.name == "native_layer_norm":
        return [out, reshape(ctx, mean, args.result_shape(1)), reshape(ctx, rstd, args.result_shape(2))]
    return out


@lowering("aten::rms_norm", validator=_float)
def rms_norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("input")
    dims = _normalized_dims(args, x)
    eps = args.static("eps")
    eps = float(torch.finfo(torch.float32).eps) if eps is None else float(eps)
    out, _, _ = normalize(ctx, x, dims, eps, args.optional_tensor("weight"), None, dims, args.out_dtype, rms=True)
    return out


@lowering("aten::group_norm", "aten::native_group_norm", validator=_float)
def group_norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    _refuse_welford_mean(args)
    x = args.tensor("input")
    groups = int(args.static("num_groups") if args.has("num_groups") else args.static("group"))
    eps = float(args.static("eps", 1e-5))
    n, c = x.shape[0], x.shape[1]
    spatial = x.shape[2:]
    per = c // groups
    grouped = reshape(ctx, x, (n, groups, per * numel(spatial)))
    dt = args.result_dtype(0)
    mean, rstd = statistics(ctx, grouped, [2], eps, dt)
    weight, bias = args.optional_tensor("weight"), args.optional_tensor("bias")

    def element(idx: Index) -> Value:
        g = [IndexExpr.of(idx[0]), IndexExpr.of(idx[1]) // per, IndexExpr.of(0)]
        xv = cast(x.load(idx), dt)
        if weight is None and bias is None:  # eager: (x - mean) * rstd without an affine
            return mul(sub(xv, mean.load(g), dt), rstd.load(g), dt)
        ch = [IndexExpr.of(idx[1])]
        return scale_shift(xv, mean.load(g), rstd.load(g), cast(weight.load(ch), dt) if weight is not None else None,
                           cast(bias.load(ch), dt) if bias is not None else None, dt)

    out = ctx.lazy(x.shape, dt, element, [x])
    if args.name == "native_group_norm":
        return [out, reshape(ctx, mean, args.result_shape(1)), reshape(ctx, rstd, args.result_shape(2))]
    return out


@lowering("aten::instance_norm", validator=_float)
def instance_norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("input")
    eps = float(args.static("eps", 1e-5))
    dt = args.out_dtype
    weight, bias = args.optional_tensor("weight"), args.optional_tensor("bias")
    if not bool(args.static("use_input_stats", True)):
        return _batch_norm_eval(ctx, x, args.optional_tensor("running_mean"), args.optional_tensor("running_var"),
                                weight, bias, eps, dt)
    # eager: batch_norm with batch statistics over [1, N * C, *spatial]
    out, _, _ = _linear_norm(ctx, x, range(2, x.rank), eps, weight, bias, dt)
    return out


def _batch_norm_eval(ctx: LoweringContext, x: TensorValue, mean: TensorValue | None, var: TensorValue | None,
                     weight: TensorValue | None, bias: TensorValue | None, eps: float, dt: torch.dtype) -> TensorValue:
    if mean is None or var is None:
        raise NotLowerable("batch_norm in eval mode without running statistics")

    def element(idx: Index) -> Value:
        ch = [IndexExpr.of(idx[1])] if x.rank > 1 else [IndexExpr.of(0)]
        rstd = unary("rsqrt", add(cast(var.load(ch), dt), eps, dt))  # 1 / sqrt(var + eps) as eager
        return scale_shift(cast(x.load(idx), dt), cast(mean.load(ch), dt), rstd,
                           cast(weight.load(ch), dt) if weight is not None else None,
                           cast(bias.load(ch), dt) if bias is not None else None, dt, fused=True)

    return ctx.lazy(x.shape, dt, element, [x])


@lowering("aten::batch_norm", "aten::native_batch_norm", "aten::_native_batch_norm_legit_no_training",
          validator=_float)
def batch_norm(ctx: LoweringContext, args: LoweringArgs) -> TensorValue | list[TensorValue]:
    x = args.tensor("input")
    eps = float(args.static("eps", 1e-5))
    dt = args.result_dtype(0)
    weight, bias = args.optional_tensor("weight"), args.optional_tensor("bias")
    training = bool(args.static("training", False))
    if training:
        out, mean, rstd = _linear_norm(ctx, x, [0, *range(2, x.rank)], eps, weight, bias, dt)
    else:
        out = _batch_norm_eval(ctx, x, args.optional_tensor("running_mean"), args.optional_tensor("running_var"),
                               weight, bias, eps, dt)
        mean = rstd = None
    if len(args.op.results) == 1:
        return out
    extra: list[TensorValue] = []
    for i in range(1, len(args.op.results)):
        shape = args.result_shape(i)
        stat = (mean if i == 1 else rstd) if training else None
        if stat is not None and numel(stat.shape) == numel(shape):
            extra.append(reshape(ctx, stat, shape))
        else:
            extra.append(ctx.lazy(shape, args.result_dtype(i), lambda idx, d=args.result_dtype(i): const(0.0, d), []))
    return [out, *extra]
