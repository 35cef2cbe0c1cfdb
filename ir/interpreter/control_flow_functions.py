"""Reference semantics of ``torch.loop`` (TorchScript's ``prim::Loop``)."""

from __future__ import annotations

from typing import Any

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from ziggurat.dialects.torch.control_flow import LoopOp, LoopYieldOp


def _truth(value: Any) -> bool:
    return bool(value.item()) if hasattr(value, "item") else bool(value)


@register_impls
class ControlFlowFunctions(InterpreterFunctions):
    @impl(LoopOp)
    def run_loop(self, interpreter: Interpreter, op: LoopOp, args: tuple[Any, ...]) -> PythonValues:
        n = len(op.inits)
        trip, go_on = int(args[0]), _truth(args[1])
        carried = tuple(args[2: 2 + n])
        captured = tuple(args[2 + n:])
        iteration = 0
        while go_on and iteration < trip:
            out = interpreter.run_ssacfg_region(op.body, (iteration, *carried, *captured), "torch.loop")
            go_on, carried = _truth(out[0]), tuple(out[1:])
            iteration += 1
        return carried

    @impl_terminator(LoopYieldOp)
    def run_yield(self, interpreter: Interpreter, op: LoopYieldOp,
                  args: PythonValues) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
