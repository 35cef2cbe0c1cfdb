"""Cumulative ops along one dimension (cumsum, cumprod, logcumsumexp) as scan kernels."""

from __future__ import annotations

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.pointwise import pointwise
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import TensorValue
from ziggurat.backends.cpu.lowering.views import norm_dim, reshape


@lowering("aten::cumsum", "aten::cumprod", "aten::logcumsumexp", "aten::cumsum_", "aten::cumprod_")
def cumulative(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    x = args.tensor("self")
    dt = args.out_dtype
    kind = {"cumsum": "sum", "cumprod": "prod", "logcumsumexp": "logaddexp"}[args.name]
    if kind == "logaddexp" and not dt.is_floating_point:
        raise NotLowerable("logcumsumexp of integers")
    if x.rank == 0:
        return pointwise(ctx, [x], (), dt, lambda v: v, dt)
    dim = norm_dim(int(args.static("dim")), x.rank)
    src = pointwise(ctx, [x], x.shape, dt, lambda v: v, dt) if x.dtype != dt else x
    if x.numel == 0:
        return src
    out = ctx.add_scan(src, dim, kind, dt)
    return reshape(ctx, out, args.out_shape)
