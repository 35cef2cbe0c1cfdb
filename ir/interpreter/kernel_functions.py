"""Reference semantics of the ``kernel`` ops: a kernel computes its body on its inputs, whatever
its kind and decisions (those say how the CPU backend will run it, not what it computes), so
the interpreter, ``bisect`` included, checks the kernel level against the levels around it."""

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

from ziggurat.dialects.kernel import KERNEL_OPS, KernelOp, YieldOp


def _run_kernel(_self: InterpreterFunctions, interpreter: Interpreter, op: KernelOp,
                args: tuple[Any, ...]) -> PythonValues:
    return interpreter.run_ssacfg_region(op.body, args, op.name)


class KernelFunctions(InterpreterFunctions):
    @impl_terminator(YieldOp)
    def run_yield(self, interpreter: Interpreter, op: YieldOp,
                  args: PythonValues) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


for _kernel_op in KERNEL_OPS:  # the same semantics for every kind
    setattr(KernelFunctions, "run_" + _kernel_op.name.replace(".", "_"), impl(_kernel_op)(_run_kernel))
register_impls(KernelFunctions)
