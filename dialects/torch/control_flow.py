"""``torch.loop``: a TorchScript ``prim::Loop`` whose trip count or condition is not static.

    %x, %n = torch.loop %max_trip, %cond iter_args(%a = %x0, %k = %n0) captures(%w = %weight)
             -> (tensor<3xf32>, i64) {
    ^bb0(%i: i64, %a: tensor<3xf32>, %k: i64, %w: tensor<3xf32>):
      ...
      torch.loop_yield %go_on, %a2, %k2 : i1, tensor<3xf32>, i64
    }

Semantics (as ``prim::Loop``): ``i = 0; while i < max_trip and cond: (cond, carried...) =
body(i, carried..., captures...); i += 1``; the results are the last carried values.  The
body is isolated from above: every value it reads from outside is a ``captures`` operand,
so a backend can run the whole loop as one op (the CPU and TensorRT backends run it in
torch; the reference interpreter runs it).  Carried values keep one type across iterations.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class LoopOp(IRDLOperation):
    """A loop whose body runs while ``i < max_trip_count`` and the condition holds."""

    name = "torch.loop"

    max_trip_count = operand_def(i64)
    initial_condition = operand_def(i1)
    inits = var_operand_def()
    captured = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())

    def __init__(self, max_trip_count: SSAValue, initial_condition: SSAValue, inits: Sequence[SSAValue],
                 captured: Sequence[SSAValue], body: Region) -> None:
        super().__init__(operands=[max_trip_count, initial_condition, list(inits), list(captured)],
                         result_types=[[v.type for v in inits]], regions=[body])

    @staticmethod
    def body_arg_types(inits: Sequence[SSAValue], captured: Sequence[SSAValue]) -> list[Attribute]:
        return [i64, *(v.type for v in inits), *(v.type for v in captured)]

    @property
    def iteration(self) -> BlockArgument:
        return self.body.block.args[0]

    @property
    def carried(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args[1: 1 + len(self.inits)])

    @property
    def captures(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args[1 + len(self.inits):])

    def verify_(self) -> None:
        block = self.body.block
        expected = self.body_arg_types(list(self.inits), list(self.captured))
        got = [a.type for a in block.args]
        if got != expected:
            raise VerifyException(f"torch.loop: the body takes ({_types(got)}); the loop gives "
                                  f"(i64 iteration, carried, captures) = ({_types(expected)})")
        if [r.type for r in self.res] != [v.type for v in self.inits]:
            raise VerifyException("torch.loop: results must have the types of the carried values")
        last = block.last_op
        if not isinstance(last, LoopYieldOp):
            raise VerifyException("torch.loop: the body must end with torch.loop_yield")
        yielded = [v.type for v in last.values]
        if yielded != [v.type for v in self.inits]:
            raise VerifyException(f"torch.loop: torch.loop_yield gives ({_types(yielded)}), the loop "
                                  f"carries ({_types([v.type for v in self.inits])})")

    # -- syntax -------------------------------------------------------------------------
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.max_trip_count)
        printer.print_string(", ")
        printer.print_ssa_value(self.initial_condition)
        _print_bound(printer, "iter_args", self.carried, list(self.inits))
        _print_bound(printer, "captures", self.captures, list(self.captured))
        printer.print_string(" -> (")
        printer.print_list([r.type for r in self.res], printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=True, print_empty_block=True,
                             print_block_terminators=True)
        printer.print_op_attributes(self.attributes, reserved_attr_names=("operandSegmentSizes",))

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        trip = parser.resolve_operand(parser.parse_unresolved_operand(), i64)
        parser.parse_punctuation(",")
        cond = parser.resolve_operand(parser.parse_unresolved_operand(), i1)
        inits = _parse_bound(parser, "iter_args")
        captured = _parse_bound(parser, "captures")
        parser.parse_punctuation("->")
        results = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
        region = parser.parse_region()
        if [v.type for v in inits] != list(results):
            parser.raise_error("torch.loop: the result types must be the iter_args' types")
        op = cls(trip, cond, inits, captured, region)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class LoopYieldOp(IRDLOperation):
    """``torch.loop_yield %cond, %carried... : i1, types...``: whether to go on, and the next values."""

    name = "torch.loop_yield"

    condition = operand_def(i1)
    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(LoopOp))
    assembly_format = "$condition (`,` $values^ `:` type($values))? attr-dict"

    def __init__(self, condition: SSAValue, values: Sequence[SSAValue]) -> None:
        super().__init__(operands=[condition, list(values)])


def _types(types: Sequence[Attribute]) -> str:
    from ziggurat.ir.types import format_type

    return ", ".join(format_type(t) for t in types)


def _print_bound(printer: Printer, keyword: str, args: Sequence[BlockArgument], values: Sequence[SSAValue]) -> None:
    """`` keyword(%v : type, ...)`` (the body's block arguments print with the region)."""
    if not values:
        return
    printer.print_string(f" {keyword}(")
    for i, (_arg, value) in enumerate(zip(args, values, strict=True)):
        if i:
            printer.print_string(", ")
        printer.print_ssa_value(value)
        printer.print_string(" : ")
        printer.print_attribute(value.type)
    printer.print_string(")")


def _parse_bound(parser: Parser, keyword: str) -> list[SSAValue]:
    if parser.parse_optional_keyword(keyword) is None:
        return []
    pairs: list[tuple[UnresolvedOperand, Attribute]] = []

    def one() -> None:
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        pairs.append((operand, parser.parse_type()))

    parser.parse_comma_separated_list(Parser.Delimiter.PAREN, one)
    return [parser.resolve_operand(o, t) for o, t in pairs]


def new_loop_body(inits: Sequence[SSAValue], captured: Sequence[SSAValue]) -> Region:
    """An empty body block with the loop's arguments (iteration, carried, captures)."""
    return Region(Block(arg_types=LoopOp.body_arg_types(inits, captured)))
