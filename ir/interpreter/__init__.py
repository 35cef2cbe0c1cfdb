"""The reference interpreter: the oracle every pass and backend is checked against.

``run(module, inputs)`` executes ``@forward`` with torch and returns its outputs
(flat, one per returned value).  Dialects register their implementations in
``FUNCTION_TABLES`` (the ``fused`` and ``trt`` dialects add theirs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from ziggurat.ir.errors import ZigguratError

#: Factories of the interpreter function tables of every dialect.
FUNCTION_TABLES: list[Callable[[], InterpreterFunctions]] = []


def _default_tables() -> list[InterpreterFunctions]:
    from ziggurat.ir.interpreter.torch_functions import AtenFunctions, TorchFunctions

    from ziggurat.ir.interpreter.control_flow_functions import ControlFlowFunctions
    from ziggurat.ir.interpreter.fused_functions import FusedFunctions

    tables: list[InterpreterFunctions] = [
        FuncFunctions(), TorchFunctions(), AtenFunctions(), FusedFunctions(), ControlFlowFunctions(),
    ]
    try:  # the trt dialect's reference semantics (TensorRT's documented layer behaviour)
        from ziggurat.backends.tensorrt.interpreter_functions import TrtFunctions

        tables.append(TrtFunctions())
    except ImportError:
        pass
    for factory in FUNCTION_TABLES:
        table = factory()
        if not any(type(t) is type(table) for t in tables):
            tables.append(table)
    return tables


def make_interpreter(module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()) -> Interpreter:
    interpreter = Interpreter(module, listeners=tuple(listeners))
    for table in _default_tables():
        interpreter.register_implementations(table)
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
