"""A ``trt`` function with dynamic (``?``) dims, specialized to the sizes of one call.

TensorRT resolves an engine's dynamic dims when the input shapes are set, by running each
layer's shape rules on them; the reference executor does the same here: the function is
cloned with the call's input shapes, every layer's result type is inferred by its own
verifier (``TrtLayerOp.expect_type`` under ``INFERRING``), and the clone is verified as a
static function, so a run-time size that breaks a layer's rule (a broadcast of 5 against 7,
a contraction over unequal dims) is an error naming the layer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.trt.base import INFERRING, TrtLayerOp, tensor_of
from ziggurat.dialects.trt.shapes import ShapeError
from ziggurat.ir.types import fits_shape
from ziggurat.ir.types import has_dynamic_dims as has_dynamic_type


class SpecializationError(ValueError):
    """The call's sizes break a layer's shape rule, or an input's static dims."""


def has_dynamic_dims(func: FuncOp) -> bool:
    """Whether an input or result of ``func`` has a ``?`` dim."""
    return any(has_dynamic_type(t) for t in (*func.function_type.inputs.data, *func.function_type.outputs.data))


def specialize(func: FuncOp, shapes: Sequence[Sequence[int]]) -> FuncOp:
    """A static copy of ``func`` for inputs of ``shapes``."""
    clone = func.clone()
    block = clone.body.block
    if len(shapes) != len(block.args):
        raise SpecializationError(f"@{func.sym_name.data} takes {len(block.args)} inputs, got {len(shapes)} shapes")
    for i, (arg, shape) in enumerate(zip(list(block.args), shapes, strict=True)):
        ty = arg.type
        assert isinstance(ty, TensorType)
        if not fits_shape(shape, ty.get_shape()):
            raise SpecializationError(f"input #{i} has shape {list(shape)}, the function takes {ty}")
        Rewriter.replace_value_with_new_type(arg, tensor_of(shape, ty.get_element_type()))
    token = INFERRING.set(True)
    try:
        for op in block.ops:
            if isinstance(op, TrtLayerOp):
                try:
                    op.verify_layer()
                except ShapeError as e:
                    raise SpecializationError(op.describe(str(e))) from None
                except VerifyException as e:
                    raise SpecializationError(str(e)) from None
    finally:
        INFERRING.reset(token)
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    outputs: list[Attribute] = [v.type for v in ret.arguments]
    clone.function_type = FunctionType.from_lists([a.type for a in block.args], outputs)
    try:
        clone.verify()
    except VerifyException as e:
        raise SpecializationError(str(e)) from None
    return clone
