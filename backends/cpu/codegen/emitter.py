"""Translating the ops of one ``loop.kernel`` body into one LLVM function.

:class:`FunctionEmitter` keeps the map from SSA values to LLVM values and the current
``IRBuilder``; each op kind has a handler registered with :func:`handles`
(``arith_ops.py``, ``memory_ops.py``, ``loop_ops.py``).  A region can be emitted more
than once (the full and the tail iteration of a ``loop.vfor``): handlers just rebind
the region's values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from llvmlite import ir
from xdsl.ir import Block, Operation, SSAValue

from ziggurat.backends.cpu.codegen.types import CodegenError
from ziggurat.backends.cpu.llvm_ir import declare

Handler = Callable[["FunctionEmitter", Operation], None]
_HANDLERS: dict[type[Operation], Handler] = {}


def handles(*op_types: type[Operation]) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for t in op_types:
            _HANDLERS[t] = fn
        return fn

    return register


class FunctionEmitter:
    """Emission state of one LLVM function (and the functions it outlines)."""

    def __init__(self, module: ir.Module, builder: ir.IRBuilder, status: ir.Value, threads: int,
                 name: str) -> None:
        self.module = module
        self.b = builder
        self.status = status
        self.threads = threads
        self.name = name
        self.values: dict[SSAValue, ir.Value] = {}
        #: the width of the ISA's vector registers (0: not known); masked accesses of wider
        #: vectors are emitted one register at a time (see ``memory_ops._chunks``)
        self.vector_bits = 0
        #: the target has F16C (``vcvtph2ps``/``vcvtps2ph``): float16 conversions use it
        #: (``codegen/f16.py`` otherwise; the same bits either way)
        self.f16c = False
        #: gathers read as a column of a transposed tile, to their values (``transpose_tiles``)
        self.tiles: dict[Operation, ir.Value] = {}

    def get(self, value: SSAValue) -> ir.Value:
        try:
            return self.values[value]
        except KeyError:
            raise CodegenError(f"{self.name}: value {value.name_hint or value} used before definition") from None

    def set(self, value: SSAValue, llvm_value: ir.Value) -> None:
        self.values[value] = llvm_value

    def emit_op(self, op: Operation) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise CodegenError(f"{self.name}: no code generation for {op.name}")
        handler(self, op)

    def emit_block(self, block: Block, stop_at_terminator: bool = True) -> list[ir.Value]:
        """Emit every op of ``block``; returns the values its ``loop.yield`` gives."""
        from ziggurat.dialects.loop import YieldOp

        for op in block.ops:
            if isinstance(op, YieldOp):
                return [self.get(v) for v in op.values]
            self.emit_op(op)
        return []

    @contextmanager
    def using(self, builder: ir.IRBuilder) -> Iterator[None]:
        old = self.b
        self.b = builder
        try:
            yield
        finally:
            self.b = old

    def declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        return declare(self.module, name, ret, args)


def load_handlers() -> None:
    from ziggurat.backends.cpu.codegen import arith_ops, lookup, loop_ops, memory_ops  # noqa: F401
