"""Native loop bodies: a ``torch.loop`` whose body lowers runs that body as native code.

A ``torch.loop`` (a TorchScript ``prim::Loop`` whose trip count or condition is only known
at run time) is one op of a torch segment at the loop level.  Its body, a function of
``(iteration, carried..., captures...) -> (condition, carried...)``, is compiled on its own
through the CPU backend's pipeline, as ``@forward`` of a module of its own
(:func:`body_module`).  The native code takes tensors only, so the iteration number and any
scalar carried value enter the body boxed as 0-d tensors (``tensor<i64>``, ``tensor<i1>``,
``tensor<f64>``) and are unboxed by ``aten::Int/Bool/Float.Tensor``; the body returns its
condition and scalars as scalars.  The runtime then runs the loop (``i = 0; while i < trip
and cond: cond, carried = body(i, carried, captures); i += 1``), calling the native body once
per iteration; the ops of the body the backend cannot take run through torch inside it, as
in any graph.

A body in which no op lowers natively, or one that does not compile, leaves the loop to the
reference interpreter, which runs the whole loop through torch (the behaviour before), with
a log line.  A loaded module compiles its loop bodies again (the object-code cache holds
their native code).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import Float64Type, IntegerType, ModuleOp, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.dialects.torch.aten_ops import AtenBoolTensorOp, AtenFloatTensorOp, AtenIntTensorOp
from ziggurat.dialects.torch.control_flow import LoopOp, LoopYieldOp
from ziggurat.ir.locations import op_location

log = logging.getLogger("ziggurat")


class BodyRunner(Protocol):
    """What runs one iteration: the body's native executable."""

    def run_checked(self, inputs: Sequence[Any]) -> list[Any]: ...


def _boxed_dtype(ty: Attribute) -> torch.dtype | None:
    """The dtype a scalar of type ``ty`` is boxed as (None: ``ty`` is a tensor type)."""
    if isinstance(ty, IntegerType):
        return torch.bool if ty.width.data == 1 else torch.int64
    if isinstance(ty, Float64Type):
        return torch.float64
    return None


def _boxed_type(ty: Attribute) -> Attribute:
    dtype = _boxed_dtype(ty)
    if dtype is None:
        return ty
    element = ty if not (isinstance(ty, IntegerType) and ty.width.data == 1) else i1
    return TensorType(element, [])


def _unbox(value: SSAValue, ty: Attribute) -> Operation:
    if isinstance(ty, Float64Type):
        return AtenFloatTensorOp(operands=[value], result_types=[ty])
    assert isinstance(ty, IntegerType)
    op_class = AtenBoolTensorOp if ty.width.data == 1 else AtenIntTensorOp
    return op_class(operands=[value], result_types=[ty])


def boxable(loop: LoopOp) -> str | None:
    """Why ``loop``'s body cannot become a function of tensors (None: it can)."""
    for arg in loop.body.block.args:
        if not isinstance(arg.type, TensorType) and _boxed_dtype(arg.type) is None:
            return f"a loop-carried or captured value of type {arg.type}"
    return None


def body_module(loop: LoopOp) -> ModuleOp:
    """``loop``'s body as ``@forward(i, carried..., captures...) -> (cond, carried...)``, its
    scalar arguments boxed as 0-d tensors."""
    block = loop.body.block
    terminator = block.last_op
    assert isinstance(terminator, LoopYieldOp)
    arg_types = [_boxed_type(a.type) for a in block.args]
    result_types = [i1, *(v.type for v in terminator.values)]
    fn = func.FuncOp("forward", (arg_types, result_types))
    body = fn.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip(block.args, body.args, strict=True):
        new.name_hint = old.name_hint
        if new.type == old.type:
            mapping[old] = new
        else:
            unbox = _unbox(new, old.type)
            body.add_op(unbox)
            mapping[old] = unbox.results[0]
    for op in block.ops:
        if op is terminator:
            values = [terminator.condition, *terminator.values]
            body.add_op(func.ReturnOp(*[mapping.get(v, v) for v in values]))
        else:
            body.add_op(op.clone(value_mapper=mapping))
    return ModuleOp([fn])


@dataclass
class NativeLoopBody:
    """A ``torch.loop`` run by the runtime, its body by native code."""

    #: None where the body was only taken to the loop level (``analyze``: ``explain``)
    runner: BodyRunner | None
    #: per body argument (iteration, carried, captures): the dtype a scalar is boxed as
    boxed: list[torch.dtype | None]
    carried: int

    def run(self, values: Sequence[Any]) -> list[Any]:
        assert self.runner is not None, "a loop body analyzed, not built"
        trip, cond, *rest = values
        carried = list(rest[: self.carried])
        captures = list(rest[self.carried:])
        i = 0
        while i < int(trip) and bool(cond):
            args = [i, *carried, *captures]
            boxed = [torch.tensor(a, dtype=d) if d is not None else a for a, d in zip(args, self.boxed, strict=True)]
            cond, *carried = self.runner.run_checked(boxed)
            i += 1
        return carried


def native_body(loop: LoopOp, compile_body: Callable[[ModuleOp], tuple[BodyRunner | None, int]]
                ) -> tuple[NativeLoopBody | None, str]:
    """``loop`` with its body compiled by ``compile_body(module) -> (runner or None, native op
    count)``, or None and why it stays with the interpreter."""
    problem = boxable(loop)
    if problem is not None:
        return None, problem
    try:
        runner, native_ops = compile_body(body_module(loop))
    except Exception as e:  # noqa: BLE001  (the loop still runs, through torch)
        first = (str(e).strip().splitlines() or [""])[0]
        return None, f"its body does not compile: {type(e).__name__}: {first}"
    if not native_ops:
        return None, "no op of its body lowers natively"
    boxed = [_boxed_dtype(a.type) for a in loop.body.block.args]
    return NativeLoopBody(runner, boxed, len(loop.inits)), ""


def loops_of(fn: func.FuncOp) -> list[LoopOp]:
    return [op for op in fn.body.block.ops if isinstance(op, LoopOp)]


def log_interpreted(loop: LoopOp, reason: str) -> None:
    where = op_location(loop)
    log.info("cpu backend: torch.loop%s runs through torch: %s", f" at {where}" if where else "", reason)
