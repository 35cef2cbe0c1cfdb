"""An op that runs through torch at call time and raises there (an out-of-range index of
``index_add``/``take``/``index_copy``, where eager raises too): the user gets an
:class:`InputError` naming the op, its schema and source line, never a bare torch error
from inside the executable."""

from __future__ import annotations

from xdsl.ir import Operation

from ziggurat.dialects.torch.ops_base import TorchOp
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.locations import op_location


def _name_and_schema(op: Operation) -> tuple[str, str | None]:
    if isinstance(op, TorchOp):
        try:
            return op.aten_key, op.op_schema.text
        except KeyError:
            pass
    return op.name, None


def torch_op_error(op: Operation, error: BaseException) -> ZigguratError:
    """``error`` raised by torch while running ``op`` with call-time values, as an
    ``InputError`` (a ``ZigguratError`` it carries is returned as it is)."""
    cause: BaseException | None = error
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ZigguratError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    name, schema = _name_and_schema(op)
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return InputError(f"torch raised on the call's values: {text}", op=name, schema=schema,
                      location=op_location(op))
