"""The reference interpreter: the oracle every pass and backend is checked against.

``run(module, inputs)`` executes ``@forward`` with torch and returns its outputs
(flat, one per returned value), with one implementation table per dialect: ``torch``,
``fused``, control flow, ``kernel`` (a kernel computes its body) and ``trt`` (TensorRT's documented layer behaviour, ``trt_layers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from ziggurat.ir.errors import ZigguratError

def _default_tables() -> list[InterpreterFunctions]:
    from ziggurat.ir.interpreter.control_flow_functions import ControlFlowFunctions
    from ziggurat.ir.interpreter.fused_functions import FusedFunctions
    from ziggurat.ir.interpreter.kernel_functions import KernelFunctions
    from ziggurat.ir.interpreter.torch_functions import AtenFunctions, TorchFunctions
    from ziggurat.ir.interpreter.trt_functions import TrtFunctions

    return [FuncFunctions(), TorchFunctions(), AtenFunctions(), FusedFunctions(), ControlFlowFunctions(),
            TrtFunctions(), KernelFunctions()]


def make_interpreter(module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()) -> Interpreter:
    interpreter = Interpreter(module, listeners=tuple(listeners))
    for table in _default_tables():
        interpreter.register_implementations(table)
    return interpreter


def make_trt_interpreter(module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()) -> Interpreter:
    """An interpreter for functions of ``trt`` ops alone: the ``func`` and ``trt`` tables only, so
    it is cheap enough to build for every call of a TensorRT segment."""
    from ziggurat.ir.interpreter.trt_functions import TrtFunctions

    interpreter = Interpreter(module, listeners=tuple(listeners))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(TrtFunctions())
    return interpreter


def run(module: ModuleOp, inputs: Sequence[Any], func_name: str = "forward",
        listeners: Sequence[Interpreter.Listener] = ()) -> list[Any]:
    """Execute ``func_name`` of ``module`` on ``inputs`` with the reference semantics."""
    interpreter = make_interpreter(module, listeners)
    try:
        return list(interpreter.call_op(func_name, tuple(inputs)))
    except (DiagnosticException, InterpretationError) as e:
        cause = e.__cause__ or e.__context__
        while cause is not None and not isinstance(cause, ZigguratError):
            cause = cause.__cause__ or cause.__context__
        if isinstance(cause, ZigguratError):
            raise cause from None
        raise ZigguratError(str(e).strip().splitlines()[-1], op="interpreter") from None
