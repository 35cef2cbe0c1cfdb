"""Loops with static bounds: ``loop.parallel``, ``loop.for``, ``loop.vfor`` and ``loop.yield``.

All bounds are compile-time integers (Ziggurat compiles static shapes), so a loop
prints as ``loop.for %i = 0 to 64 step 1`` without ``arith.constant`` clutter.

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
  their previous value (so a reduction never accumulates garbage lanes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
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
    parse_loop_body,
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


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """``loop.parallel %i0 = 0 to 8, %i1 = 0 to 64 {...}``: independent iterations, run on the thread team."""

    name = "loop.parallel"

    upper_bounds = prop_def(DenseArrayBase)
    body = region_def("single_block")

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp), RecursiveMemoryEffect())

    def __init__(self, upper_bounds: Sequence[int], body: Region | None = None) -> None:
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * len(upper_bounds)))
        super().__init__(properties={"upper_bounds": DenseArrayBase.from_list(i64, list(upper_bounds))},
                         regions=[body])
        ensure_yield(self.body)

    @property
    def bounds(self) -> list[int]:
        return int_values(self.upper_bounds)

    @property
    def ivs(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        if not self.bounds or any(b < 1 for b in self.bounds):
            raise VerifyException(f"loop.parallel: upper bounds must be positive, got {self.bounds}")
        _verify_carried(self, self.body, len(self.bounds), [], [])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        for i, (iv, ub) in enumerate(zip(self.ivs, self.bounds, strict=True)):
            if i:
                printer.print_string(", ")
            printer.print_ssa_value(iv)
            printer.print_string(f" = 0 to {ub}")
        print_loop_body(printer, self.body, False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        ivs: list[Parser.UnresolvedArgument] = []
        bounds: list[int] = []
        while True:
            ivs.append(parser.parse_argument(expect_type=False))
            parser.parse_punctuation("=")
            if parser.parse_integer(allow_boolean=False) != 0:
                parser.raise_error("loop.parallel loops start at 0")
            parser.parse_keyword("to")
            bounds.append(parser.parse_integer(allow_boolean=False))
            if parser.parse_optional_punctuation(",") is None:
                break
        body = parse_loop_body(parser, ivs, [], [])
        op = cls(bounds, body)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


class _SerialLoop(IRDLOperation):
    """Common part of ``loop.for`` and ``loop.vfor``: static bounds and carried values."""

    lower = prop_def(IntegerAttr[I64])
    upper = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    inits = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")

    N_IVS: ClassVar[int] = 1

    def __init__(self, lower: int, upper: int, step: int, inits: Sequence[SSAValue | Operation] = (),
                 body: Region | None = None) -> None:
        init_values = [SSAValue.get(v) for v in inits]
        types: list[Attribute] = [v.type for v in init_values]
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * self.N_IVS + types))
        super().__init__(
            operands=[init_values], result_types=[types], regions=[body],
            properties={"lower": IntegerAttr(lower, i64), "upper": IntegerAttr(upper, i64),
                        "step": IntegerAttr(step, i64)},
        )
        if not init_values:
            ensure_yield(self.body)

    @property
    def lb(self) -> int:
        return int(self.lower.value.data)

    @property
    def ub(self) -> int:
        return int(self.upper.value.data)

    @property
    def stride(self) -> int:
        return int(self.step.value.data)

    @property
    def carried(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[self.N_IVS:])

    def verify_(self) -> None:
        if self.stride < 1 or self.ub < self.lb:
            raise VerifyException(f"{self.name}: bad bounds {self.lb} to {self.ub} step {self.stride}")
        _verify_carried(self, self.body, self.N_IVS, list(self.inits), list(self.res))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        args = self.body.block.args
        printer.print_list(args[: self.N_IVS], printer.print_ssa_value)
        printer.print_string(f" = {self.lb} to {self.ub} step {self.stride}")
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
        upper = parser.parse_integer(allow_boolean=False)
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
        return (self.ub - self.lb) // self.stride

    @property
    def tail(self) -> int:
        return (self.ub - self.lb) % self.stride
