"""Opening loops in a scope: each returns the loop op and the scope of its body."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from ziggurat.backends.cpu.loopgen.scope import Scope, VectorLanes
from ziggurat.backends.cpu.lowering.index import Var
from ziggurat.dialects import loop


def open_parallel(scope: Scope, vars_: Sequence[Var]) -> tuple[loop.ParallelOp, Scope]:
    op = loop.ParallelOp([v.extent for v in vars_])
    scope.insert(op)
    ivs: dict[Var, SSAValue] = dict(zip(vars_, op.body.block.args, strict=True))
    for v, iv in ivs.items():
        iv.name_hint = v.name
    child = Scope(op.body.block, scope, tuple(vars_), ivs, scope.vector, depth=scope.depth + 1)
    return op, child


def open_for(scope: Scope, var: Var, inits: Sequence[SSAValue] = ()) -> tuple[loop.ForOp, Scope]:
    op = loop.ForOp(0, var.extent, 1, inits)
    scope.insert(op)
    iv = op.body.block.args[0]
    iv.name_hint = var.name
    child = Scope(op.body.block, scope, (var,), {var: iv}, scope.vector, depth=scope.depth + 1)
    return op, child


def open_vfor(scope: Scope, var: Var, width: int, inits: Sequence[SSAValue] = (),
              masked: bool = False) -> tuple[loop.VForOp, Scope]:
    """A vector loop over ``var``; its lanes are masked where the extent has a tail, or always
    (``masked``: a range schedule, whose code may not depend on the extent)."""
    op = loop.VForOp(0, var.extent, width, inits)
    scope.insert(op)
    iv, lanes = op.body.block.args[0], op.body.block.args[1]
    iv.name_hint = var.name
    lanes.name_hint = "lanes"
    needs_mask = masked or var.extent % width != 0
    vec = VectorLanes(var, width, lanes if needs_mask else None)  # type: ignore[arg-type]
    child = Scope(op.body.block, scope, (var,), {var: iv}, vec, depth=scope.depth + 1)
    return op, child


def close(child: Scope, carried: Sequence[SSAValue] = ()) -> None:
    """End a loop body that carries values: ``loop.yield`` them."""
    if carried:
        child.block.add_op(loop.YieldOp(*carried))
