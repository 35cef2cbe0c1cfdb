"""Every value is defined before it is used (the dominance check xDSL's verifier lacks).

xDSL's parser accepts ``%1 = f(%0)`` above the line that defines ``%0`` and its verifier
does not object, so swapped lines reach passes and lowerings as an op reading a value that
is computed later.  In the single-block regions Ziggurat's IR is made of, a value is
available to an op when it is an argument of the op's block or of an enclosing block, or
the result of an op that comes earlier in the op's block or in an enclosing block.
Regions of several blocks (branches) are left to their own verifiers.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException


def _position(block: Block, cache: dict[Block, dict[Operation, int]]) -> dict[Operation, int]:
    order = cache.get(block)
    if order is None:
        order = cache[block] = {op: i for i, op in enumerate(block.ops)}
    return order


def _available(value: SSAValue, user: Operation, cache: dict[Block, dict[Operation, int]]) -> bool:
    if isinstance(value, BlockArgument):
        home = value.block
        op: Operation | None = user
        while op is not None:
            if op.parent_block() is home:
                return True
            op = op.parent_op()
        return False
    definer = value.owner
    home = definer.parent_block() if isinstance(definer, Operation) else None
    if home is None:
        return False
    region = home.parent
    if region is not None and len(region.blocks) > 1:
        return True  # a CFG region: its dominance is not checked here
    op = user
    while op is not None and op.parent_block() is not home:
        op = op.parent_op()
    if op is None:
        return False
    order = _position(home, cache)
    return order[definer] < order[op]  # pyright: ignore[reportArgumentType]


def check_defined_before_use(root: Operation) -> None:
    """Raise a VerifyException at the first op of ``root`` that uses a value not yet defined."""
    cache: dict[Block, dict[Operation, int]] = {}
    for op in root.walk():
        for i, operand in enumerate(op.operands):
            if not _available(operand, op, cache):
                what = f"%{operand.name_hint}" if operand.name_hint else f"of type {operand.type}"
                raise VerifyException(f"{op.name}: operand {i} ({what}) is used before it is defined, "
                                      "or outside the region that defines it")


__all__ = ["check_defined_before_use"]
