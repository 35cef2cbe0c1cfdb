"""The ``trt`` dialect in the reference interpreter (``ziggurat.ir.interpreter``).

Registers one implementation per ``trt`` op, each the layer's reference
semantics from ``trt_layers/``, so a module whose TensorRT segments are
``func.func``s of ``trt`` ops (called from the torch-level function) runs in
the same interpreter as the torch ops around them.
"""

from __future__ import annotations

from typing import Any, cast

from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from ziggurat.ir.interpreter.trt_layers import (
    HANDLERS,
    LayerExecutionError,
    LayerResultError,
    ResultTypes,
    execute_layer,
    result_types,
)
from ziggurat.dialects.trt import TrtLayerOp
from ziggurat.ir.errors import ZigguratError


def _run_layer(self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: tuple[Any, ...]) -> tuple[Any, ...]:
    op = cast(TrtLayerOp, op)  # the table registers trt layers only
    # each op's result types, kept by the interpreter: one that runs a function again and again
    # (a TensorRT segment's runner) does not read them from the IR at every call
    known: dict[Operation, ResultTypes] = interpreter.get_data(TrtFunctions, "result_types", dict)
    results = known.get(op)
    if results is None:
        results = known[op] = result_types(op)
    try:
        outputs = execute_layer(op, list(args), results)
    except LayerExecutionError as e:
        raise ZigguratError(str(e), op=f"{op.name} ({op.LAYER}) '{op.layer}'") from e
    except LayerResultError as e:
        raise ZigguratError(str(e), op=f"{op.name} '{op.layer}'") from e
    return tuple(outputs)


class TrtFunctions(InterpreterFunctions):
    """Reference implementations of every ``trt`` op."""


for _cls in HANDLERS:
    setattr(TrtFunctions, f"run_{_cls.__name__}", impl(_cls)(_run_layer))  # pyright: ignore
register_impls(TrtFunctions)

