"""Run a ``trt`` function on CPU, following TensorRT's documented layer semantics.

This is ``backend="tensorrt-reference"``: it proves a lowering to ``trt`` right
without TensorRT, because each layer is computed from nvinfer1's documented
formulas (``reference/``), never by calling back the torch op it came from.

    outputs = run_trt_function(func_op, [x, y])
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import SSAValue

from ziggurat.ir.interpreter.trt_layers import HANDLERS, LayerExecutionError, execute_layer
from ziggurat.dialects.trt.base import TrtLayerOp
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.types import dtype_of, shape_of


class ReferenceExecutionError(ZigguratError):
    """A ``trt`` function the reference executor cannot run (bad op, bad data)."""


def find_function(module: ModuleOp, name: str | None = None) -> FuncOp:
    """The function called ``name`` (or the only/first one) of a module."""
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    if name is not None:
        funcs = [f for f in funcs if f.sym_name.data == name]
    if not funcs:
        raise ReferenceExecutionError(f"no func.func{f' @{name}' if name else ''} in the module")
    return funcs[0]


def _check_inputs(func_op: FuncOp, inputs: Sequence[torch.Tensor]) -> None:
    arg_types = func_op.function_type.inputs.data
    name = func_op.sym_name.data
    if len(inputs) != len(arg_types):
        raise InputError(f"@{name} takes {len(arg_types)} inputs, got {len(inputs)}", op=f"@{name}")
    for i, (value, ty) in enumerate(zip(inputs, arg_types, strict=True)):
        if not isinstance(value, torch.Tensor):
            raise InputError(f"input #{i} must be a torch.Tensor, got {type(value).__name__}", op=f"@{name}")
        if not isinstance(ty, TensorType):
            raise InputError(f"argument #{i} has non-tensor type {ty}", op=f"@{name}")
        if tuple(value.shape) != shape_of(ty) or value.dtype != dtype_of(ty):
            raise InputError(
                f"input #{i} is {str(value.dtype).removeprefix('torch.')}{list(value.shape)}, "
                f"the function was built for {ty}",
                op=f"@{name}",
            )


def run_trt_function(
    func_op: FuncOp, inputs: Sequence[torch.Tensor], values: dict[SSAValue, torch.Tensor] | None = None
) -> list[torch.Tensor]:
    """Execute ``func_op`` (``trt`` ops and ``func.return``) on CPU tensors; ``values``, when
    given, receives every argument and layer result (for checking layers one by one)."""
    _check_inputs(func_op, inputs)
    body = func_op.body.blocks.first
    if body is None:
        raise ReferenceExecutionError(f"@{func_op.sym_name.data} has no body")
    env: dict[SSAValue, torch.Tensor] = {} if values is None else values
    env.update({arg: t.detach().cpu() for arg, t in zip(body.args, inputs, strict=True)})
    for op in body.ops:
        if isinstance(op, ReturnOp):
            return [env[v] for v in op.arguments]
        handler = HANDLERS.get(type(op))
        if handler is None or not isinstance(op, TrtLayerOp):
            raise ReferenceExecutionError(
                f"the TensorRT reference executor runs only trt ops, got {op.name}", op=op.name
            )
        try:
            outputs = execute_layer(op, [env[v] for v in op.operands])
        except LayerExecutionError as e:
            raise ReferenceExecutionError(str(e), op=f"{op.name} ({op.LAYER}) '{op.layer}'") from e
        if len(outputs) != len(op.results):
            raise ReferenceExecutionError(
                f"internal error: produced {len(outputs)} tensors for {len(op.results)} results",
                op=f"{op.name} '{op.layer}'",
            )
        for result, tensor in zip(op.results, outputs, strict=True):
            expected = (shape_of(result.type), dtype_of(result.type))
            if (tuple(tensor.shape), tensor.dtype) != expected:
                raise ReferenceExecutionError(
                    f"internal error: computed {tensor.dtype}{list(tensor.shape)} for a result of type {result.type}",
                    op=f"{op.name} '{op.layer}'",
                )
            env[result] = tensor
    raise ReferenceExecutionError(f"@{func_op.sym_name.data} does not end with func.return")
