"""Loops: ``loop.parallel``, ``loop.for``, ``loop.vfor`` and ``loop.yield``.

Bounds are compile-time integers where the sizes are static, so a loop prints as
``loop.for %i = 0 to 64 step 1`` without ``arith.constant`` clutter.  An upper bound may
instead be a run-time ``index`` value (a dynamic dim, ``loop.dim``, or an affine
``loop.offset`` of one): ``loop.for %i = 0 to %n step 1``, ``loop.parallel %i0 = 0 to %b``.
Lower bounds and steps are always integers.

* ``loop.parallel %i0 = 0 to 8, %i1 = 0 to 64 { ... }`` - iterations are independent
  and are distributed over the worker threads (libgomp) by the code generator.
* ``%r = loop.for %i = 0 to 9 step 1 iter_args(%acc = %init) -> (f32) { ... loop.yield %x : f32 }``
  - a serial loop carrying values.
* ``%r = loop.vfor %j, %lanes = 0 to 1000 step 16 iter_args(...) -> (...) { ... }`` - the
  vector loop: ``%j`` is the first lane's index and ``%lanes`` the number of valid lanes,
  ``min(step, ub - %j)``.  The code generator emits full iterations (``%lanes`` = step) and
  one masked tail iteration (``%lanes`` = ``(ub - lb) % step``, a constant);
  ``loop.vload``/``loop.vstore`` given ``lanes(%lanes)`` touch only the valid lanes, and in
  the tail iteration the lanes past ``%lanes`` of every vector ``iter_args`` value keep
  their previous value (so a reduction never accumulates garbage lanes).  With a run-time
  upper bound the tail's length is computed at run time (0 to ``step - 1`` lanes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DYNAMIC_INDEX, I64, DenseArrayBase, IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, RecursiveMemoryEffect, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.loop.syntax import (
    ensure_yield,
    int_values,
    parse_iter_args,
    parse_bound,
    parse_loop_body,
    print_bound,
    print_iter_args,
    print_loop_body,
)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """``loop.yield %a, %b : f32, vector<16xf32>``: the values carried to the next iteration."""

    name = "loop.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue | Operation) -> None:
        super().__init__(operands=[list(values)])


def _verify_carried(op: IRDLOperation, body: Region, n_ivs: int, inits: Sequence[SSAValue],
                    results: Sequence[SSAValue]) -> None:
    args = body.block.args
    if len(args) != n_ivs + len(inits):
        raise VerifyException(f"{op.name}: the body needs {n_ivs} index argument(s) and "
                              f"{len(inits)} carried value(s), got {len(args)} block arguments")
    for a in args[:n_ivs]:
        if not isinstance(a.type, IndexType):
            raise VerifyException(f"{op.name}: induction variables must be of type index, got {a.type}")
    for i, (a, init, res) in enumerate(zip(args[n_ivs:], inits, results, strict=True)):
        if not (a.type == init.type == res.type):
            raise VerifyException(f"{op.name}: carried value #{i} has types {init.type} (init), "
                                  f"{a.type} (argument), {res.type} (result)")
    last = body.block.last_op
    if isinstance(last, YieldOp):
        got = [v.type for v in last.values]
        if got != [v.type for v in inits]:
            raise VerifyException(f"{op.name}: loop.yield gives {got}, the loop carries "
                                  f"{[v.type for v in inits]}")


#: ``loop.parallel`` attribute of a range build's schedule: the elements one task computes (the
#: code generator runs the loop on one thread below ``PARALLEL_MIN_ELEMENTS`` of work)
TASK_ELEMENTS_ATTR = "loop.task_elements"


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """``loop.parallel %i0 = 0 to 8, %i1 = 0 to %n {...}``: independent iterations, run on the
    thread team.  ``upper_bounds`` holds ``DYNAMIC_INDEX`` where the bound is a run-time value,
    taken in order from ``dynamic_bounds``."""

    name = "loop.parallel"

    upper_bounds = prop_def(DenseArrayBase)
    dynamic_bounds = var_operand_def(IndexType)
    body = region_def("single_block")

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp), RecursiveMemoryEffect())

    def __init__(self, upper_bounds: Sequence[int | SSAValue | Operation], body: Region | None = None) -> None:
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * len(upper_bounds)))
        static = [b if isinstance(b, int) else DYNAMIC_INDEX for b in upper_bounds]
        dynamic = [SSAValue.get(b) for b in upper_bounds if not isinstance(b, int)]
        super().__init__(operands=[dynamic],
                         properties={"upper_bounds": DenseArrayBase.from_list(i64, static)},
                         regions=[body])
        ensure_yield(self.body)

    @property
    def bounds(self) -> list[int | SSAValue]:
        """Each loop's upper bound: an integer, or the run-time ``index`` value."""
        dynamic = iter(self.dynamic_bounds)
        return [next(dynamic) if b == DYNAMIC_INDEX else b for b in int_values(self.upper_bounds)]

    @property
    def static_bounds(self) -> list[int]:
        """The upper bounds, all compile-time integers (an error on a run-time bound)."""
        bounds = self.bounds
        if not all(isinstance(b, int) for b in bounds):
            raise ValueError("loop.parallel has a run-time upper bound")
        return [b for b in bounds if isinstance(b, int)]

    @property
    def ivs(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        static = int_values(self.upper_bounds)
        if not static or any(b < 1 and b != DYNAMIC_INDEX for b in static):
            raise VerifyException(f"loop.parallel: upper bounds must be positive, got {static}")
        if static.count(DYNAMIC_INDEX) != len(self.dynamic_bounds):
            raise VerifyException(f"loop.parallel: {static.count(DYNAMIC_INDEX)} run-time bound(s) "
                                  f"declared, {len(self.dynamic_bounds)} given")
        _verify_carried(self, self.body, len(static), [], [])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        for i, (iv, ub) in enumerate(zip(self.ivs, self.bounds, strict=True)):
            if i:
                printer.print_string(", ")
            printer.print_ssa_value(iv)
            printer.print_string(" = 0 to ")
            print_bound(printer, ub)
        print_loop_body(printer, self.body, False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        ivs: list[Parser.UnresolvedArgument] = []
        bounds: list[int | SSAValue] = []
        while True:
            ivs.append(parser.parse_argument(expect_type=False))
            parser.parse_punctuation("=")
            if parser.parse_integer(allow_boolean=False) != 0:
                parser.raise_error("loop.parallel loops start at 0")
            parser.parse_keyword("to")
            bounds.append(parse_bound(parser))
            if parser.parse_optional_punctuation(",") is None:
                break
        body = parse_loop_body(parser, ivs, [], [])
        op = cls(bounds, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


class _SerialLoop(IRDLOperation):
    """Common part of ``loop.for`` and ``loop.vfor``: integer lower bound and step, an upper
    bound that is an integer (``upper``) or a run-time value (``upper_value``), and carried values."""

    lower = prop_def(IntegerAttr[I64])
    upper = opt_prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    upper_value = opt_operand_def(IndexType)
    inits = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    N_IVS: ClassVar[int] = 1

    def __init__(self, lower: int, upper: int | SSAValue | Operation, step: int,
                 inits: Sequence[SSAValue | Operation] = (), body: Region | None = None) -> None:
        init_values = [SSAValue.get(v) for v in inits]
        types: list[Attribute] = [v.type for v in init_values]
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * self.N_IVS + types))
        props: dict[str, Attribute] = {"lower": IntegerAttr(lower, i64), "step": IntegerAttr(step, i64)}
        if isinstance(upper, int):
            props["upper"] = IntegerAttr(upper, i64)
        super().__init__(
            operands=[[] if isinstance(upper, int) else [SSAValue.get(upper)], init_values],
            result_types=[types], regions=[body], properties=props,
        )
        if not init_values:
            ensure_yield(self.body)

    @property
    def lb(self) -> int:
        return int(self.lower.value.data)

    @property
    def upper_bound(self) -> int | SSAValue:
        """The upper bound: an integer, or the run-time ``index`` value."""
        if self.upper_value is not None:
            return self.upper_value
        assert self.upper is not None
        return int(self.upper.value.data)

    @property
    def is_static(self) -> bool:
        return self.upper_value is None

    @property
    def ub(self) -> int:
        """The compile-time upper bound (an error on a run-time one: read ``upper_bound``)."""
        ub = self.upper_bound
        if not isinstance(ub, int):
            raise ValueError(f"{self.name} has a run-time upper bound")
        return ub

    @property
    def stride(self) -> int:
        return int(self.step.value.data)

    @property
    def carried(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[self.N_IVS:])

    def verify_(self) -> None:
        if (self.upper is None) == (self.upper_value is None):
            raise VerifyException(f"{self.name}: give the upper bound as an integer or as a value, once")
        if self.stride < 1 or (self.is_static and self.ub < self.lb) or self.lb < 0:
            raise VerifyException(f"{self.name}: bad bounds {self.lb} to {self.upper_bound} step {self.stride}")
        _verify_carried(self, self.body, self.N_IVS, list(self.inits), list(self.res))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        args = self.body.block.args
        printer.print_list(args[: self.N_IVS], printer.print_ssa_value)
        printer.print_string(f" = {self.lb} to ")
        print_bound(printer, self.upper_bound)
        printer.print_string(f" step {self.stride}")
        print_iter_args(printer, args[self.N_IVS:], list(self.inits))
        print_loop_body(printer, self.body, bool(self.inits))
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> _SerialLoop:
        ivs = [parser.parse_argument(expect_type=False)]
        for _ in range(cls.N_IVS - 1):
            parser.parse_punctuation(",")
            ivs.append(parser.parse_argument(expect_type=False))
        parser.parse_punctuation("=")
        lower = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        upper = parse_bound(parser)
        parser.parse_keyword("step")
        step = parser.parse_integer(allow_boolean=False)
        iter_args, inits, types = parse_iter_args(parser)
        body = parse_loop_body(parser, ivs, iter_args, types)
        op = cls(lower, upper, step, inits, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class ForOp(_SerialLoop):
    """``loop.for %i = 0 to 9 step 1 iter_args(%a = %x) -> (f32) {...}``: a serial loop."""

    name = "loop.for"

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp), RecursiveMemoryEffect())

    @property
    def iv(self) -> SSAValue:
        return self.body.block.args[0]


@irdl_op_definition
class VForOp(_SerialLoop):
    """``loop.vfor %j, %lanes = 0 to 1000 step 16 {...}``: the vector loop (see the module doc)."""

    name = "loop.vfor"
    N_IVS: ClassVar[int] = 2

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp), RecursiveMemoryEffect())

    @property
    def iv(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def lanes(self) -> SSAValue:
        return self.body.block.args[1]

    @property
    def full_iterations(self) -> int:
        """Iterations with every lane valid (static bounds only)."""
        return (self.ub - self.lb) // self.stride

    @property
    def tail(self) -> int:
        """Valid lanes of the last, partial iteration; 0 when there is none (static bounds only)."""
        return (self.ub - self.lb) % self.stride
