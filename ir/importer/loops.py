"""Importing TorchScript's ``prim::Loop``.

    %outs... = prim::Loop(%max_trip_count, %initial_condition, %carried...)
      block0(%i, %carried...):  ...  -> (%condition, %next...)

* **Unrolled** when the trip count and the condition are known at compile time (``for i in
  range(3)``, a loop over a static shape, the loop ``F.interpolate`` runs over the spatial
  dims): the body is imported once per iteration with the iteration number static, so the
  iterations fold like straight-line code.  ``MAX_UNROLLED_NODES`` bounds the unrolled size.
* Otherwise a **``torch.loop``** region op (see :mod:`ziggurat.dialects.torch.control_flow`):
  a ``while`` on a run-time condition, or a trip count too large to unroll.  Its carried
  values keep one static type across iterations (else a clear error), and the values the body
  reads from outside become ``captures`` operands.  If the condition turns run-time after some
  unrolled iterations, the rest of the loop is a ``torch.loop`` starting at that iteration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import torch
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f64, i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from ziggurat.dialects.torch.control_flow import LoopOp, LoopYieldOp, new_loop_body
from ziggurat.dialects.torch.schema import parse_schema, registered_schemas
from ziggurat.ir.importer.literal_pool import ssa_name
from ziggurat.ir.importer.op_builder import build_aten_op
from ziggurat.ir.importer.values import Dynamic, TensorConstant, dynamics, is_static
from ziggurat.ir.locations import node_location
from ziggurat.ir.types import format_type

if TYPE_CHECKING:
    from ziggurat.ir.errors import ModelImportError
    from ziggurat.ir.importer.literal_pool import LiteralPool


class GraphImporter(Protocol):
    """What the loop import uses of :class:`ziggurat.ir.importer.graph_importer.GraphImporter`."""

    values: dict[Any, Any]
    builder: Builder
    literals: LiteralPool

    def _import_block(self, nodes: Any) -> None: ...

    def _error(self, node: torch._C.Node, message: str, schema: Any = None) -> ModelImportError: ...

#: Body nodes times iterations above which a static loop becomes a ``torch.loop`` instead.
MAX_UNROLLED_NODES = 20_000


def import_loop(imp: GraphImporter, node: torch._C.Node) -> None:
    trip, cond, *carried = (imp.values[v] for v in node.inputs())
    body = next(iter(node.blocks()))
    size = max(1, _count_nodes(body))
    if isinstance(trip, int) and trip * size > MAX_UNROLLED_NODES:
        _region_loop(imp, node, trip, cond, carried, 0)
        return
    iteration = 0
    while True:
        if isinstance(trip, int) and iteration >= trip:
            break
        if not is_static(trip) or not is_static(cond):
            _region_loop(imp, node, trip, cond, carried, iteration)
            return
        if not cond:
            break
        cond, carried = _run_body(imp, body, iteration, carried)
        iteration += 1
    for out, value in zip(node.outputs(), carried, strict=True):
        imp.values[out] = value


def _run_body(imp: GraphImporter, body: Any, iteration: Any, carried: list[Any]) -> tuple[Any, list[Any]]:
    args = list(body.inputs())
    imp.values[args[0]] = iteration
    for arg, value in zip(args[1:], carried, strict=True):
        imp.values[arg] = value
    imp._import_block(body.nodes())  # pyright: ignore[reportPrivateUsage]
    returned = [imp.values[v] for v in body.returnNode().inputs()]
    return returned[0], returned[1:]


def _count_nodes(block: Any) -> int:
    return sum(1 + sum(_count_nodes(b) for b in n.blocks()) for n in block.nodes())


# -- torch.loop -------------------------------------------------------------------------------
def _region_loop(imp: GraphImporter, node: torch._C.Node, trip: Any, cond: Any, carried: list[Any],
                 start: int) -> None:
    body = next(iter(node.blocks()))
    args = list(body.inputs())
    returns = list(body.returnNode().inputs())
    # a static carried value the body passes through unchanged stays static
    invariant = [is_static(v) and returns[k + 1] is args[k + 1] for k, v in enumerate(carried)]
    outer = imp.builder
    inits: list[SSAValue] = []
    for k, value in enumerate(carried):
        if not invariant[k]:
            inits.append(_ssa(imp, node, value, f"carried value %{args[k + 1].debugName()}"))
    trip_ssa = _ssa(imp, node, trip - start if isinstance(trip, int) else trip, "the trip count")
    cond_ssa = _ssa(imp, node, cond, "the loop condition")
    region = new_loop_body(inits, [])
    block = region.block
    examples = [v.example if isinstance(v, Dynamic) else _example(v) for v, inv in zip(carried, invariant) if not inv]
    before = dict(imp.values)
    imp.builder = Builder(InsertPoint.at_end(block))
    try:
        block.args[0].name_hint = ssa_name(args[0].debugName())
        iteration: Any = Dynamic(block.args[0], start)
        if start:
            iteration = _add_int(imp, node, iteration, start)
        body_carried: list[Any] = []
        dyn = iter(zip(block.args[1:], examples, strict=True))
        for k, value in enumerate(carried):
            if invariant[k]:
                body_carried.append(value)
            else:
                arg, example = next(dyn)
                arg.name_hint = ssa_name(args[k + 1].debugName())
                body_carried.append(Dynamic(arg, example))
        next_cond, next_values = _run_body(imp, body, iteration, body_carried)
        _check_no_escape(imp, node, before, region)
        yielded = [_ssa(imp, node, v, f"carried value %{returns[k + 1].debugName()}")
                   for k, v in enumerate(next_values) if not invariant[k]]
        for k, (init, out) in enumerate(zip(inits, yielded, strict=True)):
            if init.type != out.type:
                raise imp._error(node, f"changes the type of loop-carried value #{k} from "  # pyright: ignore[reportPrivateUsage]
                                 f"{format_type(init.type)} to {format_type(out.type)} between iterations; "
                                 "a loop whose trip count is not static must keep each carried value's "
                                 "shape and dtype")
        block.add_op(LoopYieldOp(_ssa(imp, node, next_cond, "the loop condition"), yielded))
    finally:
        imp.builder = outer
    captured = _capture(region)
    loop = LoopOp(trip_ssa, cond_ssa, inits, captured, region)
    loop.location = node_location(node)
    imp.builder.insert(loop)
    results = iter(zip(loop.res, [v for v, inv in zip(next_values, invariant, strict=True) if not inv], strict=True))
    for k, (out, value) in enumerate(zip(node.outputs(), carried, strict=True)):
        if invariant[k]:
            imp.values[out] = value
            continue
        res, last = next(results)
        res.name_hint = ssa_name(out.debugName())
        imp.values[out] = Dynamic(res, last.example if isinstance(last, Dynamic) else _example(last))


def _ssa(imp: GraphImporter, node: torch._C.Node, value: Any, what: str) -> SSAValue:
    """The SSA value of a run-time value, a constant tensor or a static scalar."""
    if isinstance(value, TensorConstant):
        value = imp.literals(value)
    if isinstance(value, Dynamic):
        return value.ssa
    if isinstance(value, bool):
        op: Operation = arith.ConstantOp(IntegerAttr(int(value), i1))
    elif isinstance(value, int):
        op = arith.ConstantOp(IntegerAttr(value, i64))
    elif isinstance(value, float):
        op = arith.ConstantOp(FloatAttr(value, f64))
    else:
        raise imp._error(  # pyright: ignore[reportPrivateUsage]
            node, f"carries a {type(value).__name__} ({what}) through a loop whose trip count or "
            "condition is not static; only tensors and int/float/bool scalars can be loop-carried")
    imp.builder.insert(op)
    return op.results[0]


def _example(value: Any) -> Any:
    if isinstance(value, TensorConstant):
        return value.tensor
    return value


def _add_int(imp: GraphImporter, node: torch._C.Node, value: Dynamic, offset: int) -> Dynamic:
    schema = parse_schema(registered_schemas()["aten::add.int"])
    op = build_aten_op(imp.builder, schema, {"a": value, "b": offset}, [i64], node_location(node), imp.literals)
    return Dynamic(op.results[0], value.example + offset)


def _check_no_escape(imp: GraphImporter, node: torch._C.Node, before: dict[Any, Any], region: Region) -> None:
    """A body that writes in place to a value from outside (``x.add_(1)``, ``ys.append(y)``)
    would rebind that value to one computed inside the loop: refuse it."""
    for key, old in before.items():
        new = imp.values.get(key)
        if new is old:
            continue
        for d in dynamics(new):
            if region.is_ancestor(_defining_node(d.ssa)):
                raise imp._error(  # pyright: ignore[reportPrivateUsage]
                    node, f"writes in place to %{key.debugName()}, a value from outside a loop whose "
                    "trip count or condition is not static; pass it as a loop-carried value instead "
                    "(x = x + 1 rather than x.add_(1))")


def _defining_node(value: SSAValue) -> Operation | Block:
    return value.owner


def _capture(region: Region) -> list[SSAValue]:
    """Make the body isolated from above: each outside value it reads becomes a block argument
    (and a ``captures`` operand, returned in order)."""
    block = region.block
    captured: list[SSAValue] = []
    for op in list(region.walk()):
        for operand in op.operands:
            if region.is_ancestor(_defining_node(operand)) or operand in captured:
                continue
            captured.append(operand)
    for value in captured:
        arg = block.insert_arg(value.type, len(block.args))
        if value.name_hint:
            arg.name_hint = value.name_hint
        value.replace_uses_with_if(arg, lambda use: region.is_ancestor(use.operation))
    return captured
