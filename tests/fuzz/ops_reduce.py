"""Reductions over every combination of dims, scans, softmax, sorting.

Ops whose tie order torch leaves unspecified (``sort``, ``topk``, ``kthvalue`` indices)
contribute their values only; ``argsort(stable=True)`` and ``argmax`` (first index) keep
their indices, which are exact.
"""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit, Value
from tests.fuzz.registry import add_spec, spec

F32 = (torch.float32,)
NUMS = (torch.float32, torch.int64, torch.int32)
ALL = (torch.float32, torch.int64, torch.int32, torch.bool)


def _dims_arg(b: Builder, x: Value, allow_empty: bool = False) -> str:
    dims = b.dims_subset(x.rank, allow_empty)
    if len(dims) == 1 and b.chance(0.5):
        return str(dims[0])
    return repr(tuple(dims)) if b.chance(0.5) else repr(dims)


def _keep(b: Builder) -> bool:
    return b.chance(0.4)


#: name -> (template with {x} {dims} {keep}, operand dtypes, whole-tensor form or None)
DIM_REDUCTIONS: dict[str, tuple[str, tuple[torch.dtype, ...], str | None]] = {
    "sum": ("torch.sum({x}, dim={dims}, keepdim={keep})", ALL, "torch.sum({x})"),
    "sum_dtype": ("torch.sum({x}, dim={dims}, dtype=torch.float32)", ALL, "torch.sum({x}, dtype=torch.int64)"),
    "mean": ("torch.mean({x}, dim={dims}, keepdim={keep})", F32, "torch.mean({x})"),
    "nansum": ("torch.nansum({x}, dim={dims}, keepdim={keep})", F32, "torch.nansum({x})"),
    "nanmean": ("torch.nanmean({x}, dim={dims}, keepdim={keep})", F32, "torch.nanmean({x})"),
    "amax": ("torch.amax({x}, dim={dims}, keepdim={keep})", ALL, "torch.amax({x})"),
    "amin": ("torch.amin({x}, dim={dims}, keepdim={keep})", ALL, "torch.amin({x})"),
    "any_dims": ("torch.any({x}, dim={dims}, keepdim={keep})", ALL, "torch.any({x})"),
    "all_dims": ("torch.all({x}, dim={dims}, keepdim={keep})", ALL, "torch.all({x})"),
    "std": ("torch.std({x}, dim={dims}, keepdim={keep})", F32, "torch.std({x})"),
    "var": ("torch.var({x}, dim={dims}, keepdim={keep})", F32, "torch.var({x})"),
    "std_correction": ("torch.std({x}, dim={dims}, correction=0, keepdim={keep})", F32, None),
    "var_correction": ("torch.var({x}, dim={dims}, correction=2, keepdim={keep})", F32, None),
    "var_unbiased": ("torch.var({x}, {dims}, False, {keep})", F32, "torch.var({x}, False)"),
    "logsumexp": ("torch.logsumexp({x}, dim={dims}, keepdim={keep})", F32, None),
    "norm": ("torch.norm({x}, p={p}, dim={dims}, keepdim={keep})", F32, "torch.norm({x})"),
    "vector_norm": ("torch.linalg.vector_norm({x}, ord={p}, dim={dims}, keepdim={keep})", F32,
                    "torch.linalg.vector_norm({x}, ord={p})"),
    "count_nonzero": ("torch.count_nonzero({x}, dim={dims})", ALL, "torch.count_nonzero({x})"),
}

#: single-dim reductions: name -> (template with {x} {dim} {keep}, dtypes, whole-tensor form or None)
ONE_DIM: dict[str, tuple[str, tuple[torch.dtype, ...], str | None]] = {
    "prod": ("torch.prod({x}, {dim}, keepdim={keep})", NUMS, "torch.prod({x})"),
    "max_dim": ("torch.max({x}, {dim}, keepdim={keep})", NUMS, "torch.max({x})"),
    "min_dim": ("torch.min({x}, {dim}, keepdim={keep})", NUMS, "torch.min({x})"),
    "argmax": ("torch.argmax({x}, dim={dim}, keepdim={keep})", NUMS, "torch.argmax({x})"),
    "argmin": ("torch.argmin({x}, dim={dim}, keepdim={keep})", NUMS, "torch.argmin({x})"),
    "any_dim": ("torch.any({x}, {dim}, keepdim={keep})", ALL, None),
    "all_dim": ("torch.all({x}, {dim})", ALL, None),
    "aminmax": ("torch.aminmax({x}, dim={dim}, keepdim={keep})", NUMS, "torch.aminmax({x})"),
    "std_mean": ("torch.std_mean({x}, dim={dim}, keepdim={keep})", F32, "torch.std_mean({x})"),
    "var_mean": ("torch.var_mean({x}, dim={dim}, correction=0)", F32, "torch.var_mean({x})"),
    "cumsum": ("torch.cumsum({x}, dim={dim})", ALL, None),
    "cumsum_dtype": ("torch.cumsum({x}, {dim}, dtype=torch.float32)", NUMS, None),
    "cumprod": ("torch.cumprod({x}, dim={dim})", NUMS, None),
    "logcumsumexp": ("torch.logcumsumexp({x}, dim={dim})", F32, None),
    "softmax": ("torch.softmax({x}, dim={dim})", F32, None),
    "softmax_f": ("F.softmax({x}, dim={dim})", F32, None),
    "log_softmax": ("torch.log_softmax({x}, dim={dim})", F32, None),
    "log_softmax_f": ("F.log_softmax({x}, {dim})", F32, None),
    "special_softmax": ("torch.special.softmax({x}, {dim})", F32, None),
    "special_log_softmax": ("torch.special.log_softmax({x}, {dim})", F32, None),
    "softmin": ("F.softmin({x}, dim={dim})", F32, None),
    "msort": ("torch.msort({x})", NUMS, None),
    "sort_values": ("torch.sort({x}, dim={dim}, descending={keep})[0]", NUMS, None),
    "sort_stable": ("torch.sort({x}, dim={dim}, stable=True, descending={keep})", NUMS, None),
    "argsort_stable": ("torch.argsort({x}, dim={dim}, stable=True, descending={keep})", NUMS, None),
    "kthvalue": ("torch.kthvalue({x}, {k}, dim={dim}, keepdim={keep})[0]", NUMS, None),
    "topk": ("torch.topk({x}, {k}, dim={dim}, largest={keep})[0]", NUMS, None),
    "topk_sorted": ("torch.topk({x}, {k}, dim={dim}, sorted=True)[0]", NUMS, None),
}


def _multi_or_single(b: Builder, name: str, code: str) -> list[Value] | Emit:
    if isinstance(b.probe(code), tuple | list):
        return b.emit_multi(name, code)
    return code


def _dim_reduction(name: str, template: str, dtypes: tuple[torch.dtype, ...], whole: str | None):  # type: ignore[no-untyped-def]
    def make(b: Builder) -> list[Value] | Emit:
        x = b.pick(dtypes)
        p = b.choice([1, 2, 3, "float('inf')", "-float('inf')", 0.5] + ([0] if "vector" in name else []))
        if whole is not None and b.chance(0.2):
            return _multi_or_single(b, name, whole.format(x=x, p=p))
        code = template.format(x=x, dims=_dims_arg(b, x), keep=_keep(b), p=p)
        return _multi_or_single(b, name, code)

    return make


def _one_dim(name: str, template: str, dtypes: tuple[torch.dtype, ...], whole: str | None):  # type: ignore[no-untyped-def]
    def make(b: Builder) -> list[Value] | Emit:
        x = b.pick(dtypes)
        if whole is not None and b.chance(0.25):
            return _multi_or_single(b, name, whole.format(x=x))
        d = b.dim(x.rank)
        size = x.shape[d] if x.rank else 1
        k = b.rng.randint(1, size)
        if name in ("cumprod", "prod") and x.is_float:
            x_name = f"{x}.clamp(-2.0, 2.0)"
        else:
            x_name = x.name
        return _multi_or_single(b, name, template.format(x=x_name, dim=d, keep=_keep(b), k=k))

    return make


for _name, (_tpl, _dts, _whole) in DIM_REDUCTIONS.items():
    add_spec(_name, _dim_reduction(_name, _tpl, _dts, _whole), weight=1.2, family="reduce")
for _name, (_tpl, _dts, _whole) in ONE_DIM.items():
    add_spec(_name, _one_dim(_name, _tpl, _dts, _whole), weight=1.0, family="reduce")


@spec("frobenius_norm", weight=0.5, family="reduce")
def _fro(b: Builder) -> Emit:
    x = b.pick_float(min_rank=2)
    dims = b.rng.sample(range(x.rank), 2)
    return f"torch.norm({x}, p='fro', dim={dims!r})"


@spec("linalg_norm", weight=0.5, family="reduce")
def _linalg_norm(b: Builder) -> Emit:
    x = b.pick_float(min_rank=1)
    return f"torch.linalg.norm({x}, dim={b.dim(x.rank)})"


@spec("trace", weight=0.5, family="reduce")
def _trace(b: Builder) -> Emit:
    return f"torch.trace({b.pick_number(2, 2)})"


@spec("mean_dtype", weight=0.3, family="reduce")
def _mean_dtype(b: Builder) -> Emit:
    x = b.pick_int()
    return f"torch.mean({x}.to(torch.float32), dim={_dims_arg(b, x)})"


@spec("reduce_empty_dims", weight=0.3, family="reduce")
def _reduce_empty(b: Builder) -> Emit:
    """dim=[] reduces over every dim for sum/mean/amax (a documented corner)."""
    x = b.pick_float()
    op = b.choice(["sum", "mean", "amax", "amin"])
    return f"torch.{op}({x}, dim=[])"


@spec("prod_past_float32", weight=0.0, family="reduce")
def _prod_past_float32(b: Builder) -> Emit:
    """The product of 1,300-9,600 differences of two inputs on a grid of quarters, some of them
    zero: partial products of hundreds of factors pass float32's range, so the order a
    vector's lanes multiply in decides between 0 and ``inf * 0 = NaN``; the zero is the
    product (fuzz seed 146, program 139: eager 0, the native kernel NaN, fixed by
    ``lowering/reductions._product``).  Of weight 0 but in the ``nonfinite`` profile."""
    # a narrow last dim: the kernel vectorizes along it, each of its few lanes a long product
    shape = [b.size(8, 12), b.size(10, 16), b.size(8, 10), b.choice([2, 3, 5])]
    x, y = b.new_input(shape, torch.float32, "grid"), b.new_input(shape, torch.float32, "grid")
    return f"torch.prod({x} - {y})" if b.chance(0.7) else f"torch.prod(({x} - {y}).flatten(1), 1)"
