"""``einsum`` as views, reductions and batched GEMMs (pairwise contraction, left to right)."""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

import torch

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.linalg import matmul
from ziggurat.backends.cpu.lowering.pointwise import map_tensor
from ziggurat.backends.cpu.lowering.reduce_util import reduce
from ziggurat.backends.cpu.lowering.registry import NotLowerable, lowering
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.backends.cpu.lowering.views import permute, reshape


def parse(equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise NotLowerable(f"einsum '{equation}' has {len(terms)} operands, got {len(ranks)} tensors")
    used = set(eq) - set(".,->")
    free = [c for c in string.ascii_letters if c not in used]
    ell_rank = max((r - (len(t) - 3) for t, r in zip(terms, ranks) if "..." in t), default=0)
    ell = "".join(free[:ell_rank])
    out_terms = []
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            n = r - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - n:])
        if len(t) != r:
            raise NotLowerable(f"einsum term '{t}' does not match rank {r}")
        out_terms.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {c: sum(t.count(c) for t in out_terms) for c in set("".join(out_terms))}
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return out_terms, out


def _diagonal(ctx: LoweringContext, x: TensorValue, term: str) -> tuple[TensorValue, str]:
    """Repeated letters in one term read the diagonal."""
    letters = "".join(dict.fromkeys(term))
    if letters == term:
        return x, term
    pos = {c: term.index(c) for c in letters}
    shape = tuple(x.shape[pos[c]] for c in letters)

    def index_map(idx: Index) -> list[IndexExpr]:
        by_letter = {c: IndexExpr.of(i) for c, i in zip(letters, idx, strict=True)}
        return [by_letter[c] for c in term]

    return map_tensor(ctx, x, shape, x.dtype, index_map), letters


def _sum_out(ctx: LoweringContext, x: TensorValue, term: str, keep: set[str]) -> tuple[TensorValue, str]:
    dims = [d for d, c in enumerate(term) if c not in keep]
    if not dims:
        return x, term
    return reduce(ctx, x, dims, False, "sum", x.dtype), "".join(c for c in term if c in keep)


def _contract(ctx: LoweringContext, a: TensorValue, ta: str, b: TensorValue, tb: str, needed: set[str],
              sizes: dict[str, int]) -> tuple[TensorValue, str]:
    batch = [c for c in ta if c in tb and c in needed]
    contract = [c for c in ta if c in tb and c not in needed]
    a_only = [c for c in ta if c not in tb]
    b_only = [c for c in tb if c not in ta]
    order_a = batch + a_only + contract
    order_b = batch + contract + b_only
    pa = permute(ctx, a, [ta.index(c) for c in order_a])
    pb = permute(ctx, b, [tb.index(c) for c in order_b])
    nb = math.prod(sizes[c] for c in batch)
    m = math.prod(sizes[c] for c in a_only)
    k = math.prod(sizes[c] for c in contract)
    n = math.prod(sizes[c] for c in b_only)
    a3 = reshape(ctx, pa, (nb, m, k))
    b3 = reshape(ctx, pb, (nb, k, n))
    out_term = "".join(batch + a_only + b_only)
    out_shape = tuple(sizes[c] for c in out_term)
    prod = matmul(ctx, a3, b3, (nb, m, n))
    return reshape(ctx, prod, out_shape), out_term


@lowering("aten::einsum")
def einsum(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    tensors = args.tensors("tensors")
    if any(t.dtype != torch.float32 for t in tensors):
        raise NotLowerable("einsum computes float32 only")
    terms, out = parse(str(args.static("equation")), [t.rank for t in tensors])
    sizes: dict[str, int] = {}
    for t, term in zip(tensors, terms, strict=True):
        for c, n in zip(term, t.shape, strict=True):
            if sizes.get(c, n) != n and n != 1 and sizes[c] != 1:
                raise NotLowerable(f"einsum dimension '{c}' has sizes {sizes[c]} and {n}")
            sizes[c] = max(sizes.get(c, n), n)
    ops: list[tuple[TensorValue, str]] = []
    for t, term in zip(tensors, terms, strict=True):
        ops.append(_diagonal(ctx, t, term))
    for i in range(len(ops)):
        later = set(out) | {c for _, term in ops[:i] + ops[i + 1:] for c in term}
        ops[i] = _sum_out(ctx, ops[i][0], ops[i][1], later)
    cur, term = ops[0]
    for i in range(1, len(ops)):
        nxt, nterm = ops[i]
        needed = set(out) | {c for _, t in ops[i + 1:] for c in t}
        if any(sizes[c] != s for c, s in zip(term, cur.shape, strict=True)) or \
                any(sizes[c] != s for c, s in zip(nterm, nxt.shape, strict=True)):
            raise NotLowerable("einsum with broadcast dimensions")
        cur, term = _contract(ctx, cur, term, nxt, nterm, needed, sizes)
        cur, term = _sum_out(ctx, cur, term, needed)
    cur, term = _sum_out(ctx, cur, term, set(out))
    result = permute(ctx, cur, [term.index(c) for c in out]) if term != out else cur
    if result.shape != args.out_shape:
        result = reshape(ctx, result, args.out_shape)
    return result


@lowering("aten::_trilinear")
def trilinear(ctx: LoweringContext, args: LoweringArgs) -> TensorValue:
    """``sum_{sumdim} i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)``."""
    from ziggurat.backends.cpu.lowering.ops import mul
    from ziggurat.backends.cpu.lowering.pointwise import pointwise

    parts = [args.tensor("i1"), args.tensor("i2"), args.tensor("i3")]
    if any(t.dtype != torch.float32 for t in parts):
        raise NotLowerable("_trilinear computes float32 only")
    expanded: list[TensorValue] = []
    for t, name in zip(parts, ("expand1", "expand2", "expand3"), strict=True):
        dims = sorted(args.get_ints(name, []))
        shape = list(t.shape)
        for d in dims:
            shape.insert(d, 1)
        expanded.append(reshape(ctx, t, tuple(shape)))
    full = tuple(torch.broadcast_shapes(*[e.shape for e in expanded]))
    prod = pointwise(ctx, expanded, full, torch.float32, lambda a, b, c: mul(mul(a, b, torch.float32), c,
                                                                             torch.float32))
    sumdim = sorted(args.get_ints("sumdim", []))
    result = reduce(ctx, prod, sumdim, False, "sum", torch.float32) if sumdim else prod
    return reshape(ctx, result, args.out_shape) if result.shape != args.out_shape else result
