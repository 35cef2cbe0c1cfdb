"""Shared printing and parsing helpers of the ``loop`` dialect's custom syntax."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, IndexType
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer


def print_iter_args(printer: Printer, block_args: Sequence[BlockArgument], inits: Sequence[SSAValue]) -> None:
    """`` iter_args(%acc = %init, ...) -> (type, ...)`` (nothing when there are none)."""
    if not inits:
        return
    printer.print_string(" iter_args(")
    for i, (arg, init) in enumerate(zip(block_args, inits, strict=True)):
        if i:
            printer.print_string(", ")
        printer.print_block_argument(arg, print_type=False)
        printer.print_string(" = ")
        printer.print_ssa_value(init)
    printer.print_string(") -> (")
    printer.print_list([a.type for a in block_args], printer.print_attribute)
    printer.print_string(")")


def parse_iter_args(parser: Parser) -> tuple[list[Parser.UnresolvedArgument], list[SSAValue], list[Attribute]]:
    """Parse the optional ``iter_args(...) -> (...)`` clause."""
    if parser.parse_optional_keyword("iter_args") is None:
        return [], [], []
    pairs: list[tuple[Parser.UnresolvedArgument, UnresolvedOperand]] = []

    def one() -> None:
        arg = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        pairs.append((arg, parser.parse_unresolved_operand()))

    parser.parse_comma_separated_list(Parser.Delimiter.PAREN, one)
    parser.parse_punctuation("->")
    types = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
    if len(types) != len(pairs):
        parser.raise_error(f"iter_args: {len(pairs)} values but {len(types)} types")
    inits: list[SSAValue] = [parser.resolve_operand(op, ty) for (_, op), ty in zip(pairs, types, strict=True)]
    return [a for a, _ in pairs], inits, list(types)


def parse_loop_body(parser: Parser, ivs: Sequence[Parser.UnresolvedArgument],
                    iter_args: Sequence[Parser.UnresolvedArgument], iter_types: Sequence[Attribute]) -> Region:
    """The body region: index induction variables, then the loop-carried values."""
    arguments = [iv.resolve(IndexType()) for iv in ivs]
    arguments += [a.resolve(t) for a, t in zip(iter_args, iter_types, strict=True)]
    return parser.parse_region(arguments)


def print_loop_body(printer: Printer, region: Region, has_results: bool) -> None:
    printer.print_string(" ")
    printer.print_region(region, print_entry_block_args=False, print_empty_block=False,
                         print_block_terminators=has_results)


def ensure_yield(region: Region) -> None:
    """Append an empty ``loop.yield`` to a body that has no terminator."""
    from ziggurat.dialects.loop.loops import YieldOp

    block: Block = region.block
    if not isinstance(block.last_op, YieldOp):
        block.add_op(YieldOp())


def print_bound(printer: Printer, bound: int | SSAValue) -> None:
    """A loop bound: ``64`` or ``%n``."""
    if isinstance(bound, int):
        printer.print_string(str(bound))
    else:
        printer.print_ssa_value(bound)


def parse_bound(parser: Parser) -> int | SSAValue:
    """``64`` or an ``index`` value ``%n``."""
    value = parser.parse_optional_integer(allow_boolean=False)
    if value is not None:
        return value
    return parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())


def print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


def parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


def int_values(attr: DenseArrayBase) -> list[int]:
    """The elements of an integer ``array<...>`` property.

    What ``get_values`` does: its overloads cover one element kind at a time, and the
    properties are declared with any element type.
    """
    return [int(v) for v in attr.elt_type.unpack(attr.data.data, len(attr))]
