"""The ``trt`` dialect in the reference interpreter (``ziggurat.ir.interpreter``).

Registers one implementation per ``trt`` op, each the layer's reference
semantics from ``trt_layers/``, so a module whose TensorRT segments are
``func.func``s of ``trt`` ops (called from the torch-level function) runs in
the same interpreter as the torch ops around them.
"""

from __future__ import annotations

from typing import Any

from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from ziggurat.ir.interpreter.trt_layers import HANDLERS, LayerExecutionError, execute_layer
from ziggurat.dialects.trt import TrtLayerOp
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.types import dtype_of, shape_of


def _run_layer(self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: tuple[Any, ...]) -> tuple[Any, ...]:
    assert isinstance(op, TrtLayerOp)
    try:
        outputs = execute_layer(op, list(args))
    except LayerExecutionError as e:
        raise ZigguratError(str(e), op=f"{op.name} ({op.LAYER}) '{op.layer}'") from e
    for result, tensor in zip(op.results, outputs, strict=True):
        if (tuple(tensor.shape), tensor.dtype) != (shape_of(result.type), dtype_of(result.type)):
            raise ZigguratError(
                f"internal error: computed {tensor.dtype}{list(tensor.shape)} for a result of type {result.type}",
                op=f"{op.name} '{op.layer}'",
            )
    return tuple(outputs)


class TrtFunctions(InterpreterFunctions):
    """Reference implementations of every ``trt`` op."""


for _cls in HANDLERS:
    setattr(TrtFunctions, f"run_{_cls.__name__}", impl(_cls)(_run_layer))  # pyright: ignore
register_impls(TrtFunctions)

