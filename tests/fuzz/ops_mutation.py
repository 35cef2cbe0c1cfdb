"""Views followed by mutation: a fresh copy is written through a view (slice assignment,
``copy_``/``fill_``/arithmetic into a narrow/select/transpose/diagonal, ``index_put_``,
scatters), and views taken *before* the write must see it.  Operands themselves are
never mutated (the builder checks their version counters)."""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Reject, Stmts, Value
from tests.fuzz.ops_shape import slice_text
from tests.fuzz.registry import spec

NUMS = (torch.float32, torch.int64, torch.int32)


def _base(b: Builder, x: Value) -> str:
    """An expression making a fresh tensor equal to ``x`` (its own storage)."""
    if x.is_bool:
        return f"{x}.clone()"
    return b.choice([f"{x}.clone()", f"{x} * 1", f"{x} + 0", f"torch.clone({x})"])


def _view(b: Builder, x: Value, name: str) -> str:
    """A view of ``name`` (which holds x's shape)."""
    r = x.rank
    options = [f"{name}[{slice_text(b, x)}]", f"{name}.narrow({b.dim(r)}, 0, 1)" if r else f"{name}[...]",
               f"{name}.select({b.dim(r)}, -1)" if r else f"{name}[...]",
               f"{name}.transpose(0, {r - 1})" if r >= 2 else f"{name}.view(-1)",
               f"{name}.diagonal()" if r >= 2 else f"{name}[:]", f"{name}.view(-1)[1:]" if x.numel > 1 else f"{name}.view(-1)",
               f"{name}.permute({', '.join(str(i) for i in reversed(range(r)))})" if r >= 2 else f"{name}.unsqueeze(0)"]
    return b.choice(options)


def _write(b: Builder, x: Value, view: str) -> str:
    """An in-place write into ``view`` (a statement)."""
    value = b.choice([2.5, -1.0, 0.0]) if x.is_float else b.choice([3, -2, 0])
    if x.is_bool:
        return b.choice([f"{view}.fill_(True)", f"{view}.logical_not_()", f"{view}.copy_({view}.logical_not())"])
    writes = [f"{view}.fill_({value})", f"{view}.mul_(2)", f"{view}.add_({value})", f"{view}.zero_()",
              f"{view}.copy_({view} * 3)", f"{view}.clamp_(-1, 1)", f"{view}.neg_()", f"{view}.sub_(1)"]
    if x.is_float:
        writes += [f"{view}.sigmoid_()", f"{view}.relu_()", f"{view}.div_(2.0)", f"{view}.exp_()",
                   f"{view}.addcmul_({view}, {view}, value=0.5)", f"{view}.lerp_({view} * 2, 0.25)",
                   f"{view}.masked_fill_({view} > 0, {value})", f"{view}.pow_(2)", f"{view}.tanh_()"]
    else:
        writes += [f"{view}.bitwise_and_(5)", f"{view}.remainder_(3)", f"{view}.abs_()",
                   f"{view}.div_(2, rounding_mode='floor')", f"{view}.bitwise_left_shift_(1)"]
    return b.choice(writes)


@spec("mutate_view", weight=3.0, family="mutation")
def _mutate_view(b: Builder) -> list[Value]:
    x = b.pick(NUMS + (torch.bool,), min_rank=1)
    t = b.fresh()
    view = _view(b, x, t)
    lines = [f"{t} = {_base(b, x)}"]
    form = b.rng.randrange(5)
    if form == 0:  # write through a view, read the base
        lines.append(_write(b, x, view))
        return b.emit("mutate_view", Stmts(lines, [t]))
    if form == 1:  # take a view, then write the base: the view sees it
        w = b.fresh()
        lines += [f"{w} = {view}", _write(b, x, t)]
        return b.emit("mutate_view", Stmts(lines, [w, t] if b.chance(0.5) else [w]))
    if form == 2:  # slice assignment
        value = b.choice(["2.5", "-1", "0"]) if not x.is_bool else "True"
        lines.append(f"{t}[{slice_text(b, x)}] = {value}")
        return b.emit("mutate_view", Stmts(lines, [t]))
    if form == 3:  # copy another tensor into a view (broadcasting)
        src = b.partner(x)
        lines.append(f"{t}[{slice_text(b, x)}] = {src}[{slice_text(b, src)}]" if src.rank else f"{t}[...] = {src}")
        return b.emit("mutate_view", Stmts(lines, [t]))
    w = b.fresh()  # two views of one base, one written, the other read
    lines += [f"{w} = {view}", _write(b, x, _view(b, x, t))]
    return b.emit("mutate_view", Stmts(lines, [w]))


@spec("mutate_index", weight=1.5, family="mutation")
def _mutate_index(b: Builder) -> list[Value]:
    x = b.pick(NUMS, min_rank=1)
    t = b.fresh()
    n = x.shape[0]
    form = b.rng.randrange(4)
    lines = [f"{t} = {_base(b, x)}"]
    if form == 0:
        k = b.rng.randint(1, n)
        idx = b.index_const(n, [k], negative=True, unique=True)
        lines.append(f"{t}[{idx}] = {b.choice(['1', '-2', '0'])}")
    elif form == 1:
        k = b.size(1, 7)
        idx = b.index_const(n, [k], negative=True)
        vals = b.new_tensor([k] + x.shape[1:], x.dtype)
        lines.append(f"{t}.index_put_(({idx},), {vals}, accumulate=True)")
    elif form == 2:
        d = b.dim(x.rank)
        shape = [b.rng.randint(1, s) for s in x.shape]
        idx = b.index_const(x.shape[d], shape, negative=False)
        src = b.new_tensor(shape, x.dtype)
        lines.append(f"{t}.scatter_add_({d}, {idx}, {src})")
    else:
        mask = b.partner(x, torch.bool)
        lines.append(f"{t}.masked_fill_({mask}, {b.choice(['1', '-3'])})")
    return b.emit("mutate_index", Stmts(lines, [t]))


@spec("mutate_inplace_view_op", weight=0.5, family="mutation")
def _inplace_view_op(b: Builder) -> list[Value]:
    """In-place metadata changes of a fresh tensor (``unsqueeze_``, ``squeeze_``, ``t_``)."""
    x = b.pick(NUMS, max_rank=4)
    t = b.fresh()
    op = b.choice([f"unsqueeze_({b.rng.randint(-x.rank - 1, x.rank)})", "squeeze_()"] + (["t_()"] if x.rank == 2 else []))
    return b.emit("mutate_inplace_view_op", Stmts([f"{t} = {x}.clone()", f"{t}.{op}"], [t]))


@spec("branch", weight=0.25, family="control")
def _branch(b: Builder) -> list[Value]:
    """Data-dependent control flow: a traced graph must not bake in the example's branch."""
    x = b.pick_float()
    y = b.pick_float()
    t = b.fresh()
    cond = b.choice([f"float({x}.sum()) > 0", f"bool(({x} > 0).any())", f"{x}.mean() > 0", f"{x}.max().item() > 0.5"])
    other = b.choice([f"-{y}", f"{y} + 1", f"torch.relu({y})"])
    lines = [f"if {cond}:", f"    {t} = {y} * 2", "else:", f"    {t} = {other}"]
    if y.numel == 0:
        raise Reject("empty")
    return b.emit("branch", Stmts(lines, [t]))
