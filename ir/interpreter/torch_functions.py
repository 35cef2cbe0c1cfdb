"""Reference semantics of the ``torch`` dialect: every op runs through torch itself.

One generic implementation serves all generated ``torch.aten.*`` ops and
``torch.operator``: bind the operands and properties by schema name and call
``torch.ops.<ns>.<name>.<overload>``.  The results are checked against the
op's declared types, so a pass that produces a wrongly typed op is caught here.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import SSAValue

from ziggurat.dialects.torch import ATEN_OPS, LiteralOp, OperatorOp, TorchOp
from ziggurat.dialects.torch.ops_base import flat_results
from ziggurat.dialects.torch.schema import ArgKind, ArgSpec, OpSchema, torch_overload
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.interpreter.half_convolution import CONVOLUTIONS, convolve
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import dtype_of


def _overload(schema: OpSchema) -> Any:
    overload = torch_overload(schema)
    if overload is None:
        raise ZigguratError("torch has no implementation of this op", op=schema.key, schema=schema.text)
    return overload


def _resolve(value: Any, env: dict[SSAValue, Any]) -> Any:
    if isinstance(value, SSAValue):
        return env[value]
    if isinstance(value, list):
        return [_resolve(v, env) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


#: aten's scalar ops as Python's operators, run on a symbolic size (a SymInt in the symbolic-shape
#: run): those keep it symbolic, where torch's TorchScript ops read its value (fixing the size)
_SIZE_ARITHMETIC: dict[str, Callable[..., Any]] = {
    "aten::add": operator.add, "aten::sub": operator.sub, "aten::mul": operator.mul,
    "aten::div": operator.truediv, "aten::floordiv": operator.floordiv, "aten::remainder": operator.mod,
    "aten::ge": operator.ge, "aten::le": operator.le, "aten::gt": operator.gt, "aten::lt": operator.lt,
    "aten::eq": operator.eq, "aten::ne": operator.ne, "aten::__and__": operator.and_,
    "aten::__or__": operator.or_, "aten::Float": torch.sym_float,
}


def _size_arithmetic(schema: OpSchema, positional: list[Any], keywords: dict[str, Any]) -> Callable[..., Any] | None:
    """Python's operator for an aten scalar op on a SymInt/SymFloat/SymBool, else None."""
    fn = _SIZE_ARITHMETIC.get(schema.qualified_name)
    symbolic = any(isinstance(v, torch.SymInt | torch.SymFloat | torch.SymBool) for v in positional)
    scalars = all(a.kind in (ArgKind.INT, ArgKind.FLOAT, ArgKind.BOOL, ArgKind.SCALAR) for a in schema.args)
    return fn if fn is not None and symbolic and scalars and not keywords else None


def call_torch(op: TorchOp, operand_values: tuple[Any, ...], check_types: bool = True) -> tuple[Any, ...]:
    """Run a torch op on concrete values; returns one value per op result.  ``check_types``
    False: results are returned as torch computes them, even where they differ from the IR's
    declared types (a meta run, whose shape functions disagree with some CPU kernels)."""
    env = dict(zip(op.operands, operand_values, strict=True))
    bound = op.arguments()
    schema = bound.schema

    def resolve(spec: ArgSpec, bound_value: Any) -> Any:
        value = _resolve(bound_value, env)
        if spec.kind == ArgKind.TENSOR and spec.mutable and isinstance(value, torch.Tensor):
            value = value.clone()  # value semantics for in-place ops
        return value

    positional, keywords = bound.call_arguments(resolve)
    try:
        with torch.no_grad():
            fn = _size_arithmetic(schema, list(positional), keywords) or _overload(schema)
            if schema.qualified_name in CONVOLUTIONS:
                result = convolve(fn, positional, keywords)
            else:
                result = fn(*positional, **keywords)
    except ZigguratError:
        raise
    except Exception as e:  # noqa: BLE001 - torch refusing the call's values (an assert, a size)
        lines = str(e).strip().splitlines()
        text = f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
        raise InputError(f"torch raised on the call's values: {text}", op=schema.key, schema=schema.text,
                         location=op_location(op)) from e
    flat = [] if result is None and not op.results else flat_results(result)  # an op returning ()
    if len(flat) != len(op.results):
        raise ZigguratError(f"produced {len(flat)} values for {len(op.results)} results",
                            op=schema.key, schema=schema.text, location=op_location(op))
    flat = [_empty_as_declared(res.type, value) for res, value in zip(op.results, flat, strict=True)]
    if schema.key in WIDENED_AS_DECLARED:
        flat = [_widened_as_declared(res.type, value) for res, value in zip(op.results, flat, strict=True)]
    if check_types:
        for res, value in zip(op.results, flat, strict=True):
            check_result(op, res.type, value)
    return tuple(flat)


#: Ops whose CPU kernel returns a 16-bit float where torch's fake (export) kernel, and so the IR,
#: says float32: training batch norm of bf16 running statistics updates them in bf16, its fake
#: kernel returns them in float32.
WIDENED_AS_DECLARED = frozenset({"aten::_native_batch_norm_legit_functional", "aten::_native_batch_norm_legit",
                                 "aten::native_batch_norm"})


def _widened_as_declared(expected: Any, value: Any) -> Any:
    """A bf16 or float16 result the IR declares float32, converted (exactly: every 16-bit value
    is a float32 one), so the ops after it read what the exported graph was traced with."""
    if (isinstance(expected, TensorType) and isinstance(value, torch.Tensor)
            and value.dtype in (torch.bfloat16, torch.float16) and dtype_of(expected) == torch.float32):  # pyright: ignore[reportUnknownArgumentType]
        return value.float()
    return value


def _empty_as_declared(expected: Any, value: Any) -> Any:
    """An empty tensor in the declared dtype: torch's kernels and its shape functions disagree
    on the dtype of some empty results (``_native_batch_norm_legit_no_training``'s saved
    statistics of a bf16 input: float32 from the kernel, bf16 from the meta function). No
    element is converted, so the value is the same."""
    if not (isinstance(expected, TensorType) and isinstance(value, torch.Tensor)
            and value.dtype != dtype_of(expected)):  # pyright: ignore[reportUnknownArgumentType]
        return value
    n = value.numel()  # a SymInt on a symbolic run: comparing it would add a guard on the sizes
    return value.to(dtype_of(expected)) if isinstance(n, int) and n == 0 else value  # pyright: ignore[reportUnknownArgumentType]


def check_result(op: Any, expected: Any, value: Any) -> None:
    """Raise if a computed tensor does not have the op's declared result type."""
    if not isinstance(expected, TensorType) or not isinstance(value, torch.Tensor):
        return
    # a ``?`` size (a data-dependent shape) matches any size; the rank must match
    declared = tuple(expected.get_shape())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    same_shape = len(declared) == value.dim() and all(  # pyright: ignore[reportUnknownArgumentType]
        d == DYNAMIC_INDEX or d == n for d, n in zip(declared, value.shape))  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if not same_shape or value.dtype != dtype_of(expected):  # pyright: ignore[reportUnknownArgumentType]
        raise ZigguratError(
            f"computed {tuple(value.shape)} {value.dtype} but the IR declares {expected}",
            op=op.name, location=op_location(op),
        )


@register_impls
class TorchFunctions(InterpreterFunctions):
    """Implementations of ``torch.literal``, ``torch.operator`` and ``arith.constant``."""

    @impl(LiteralOp)
    def run_literal(self, interpreter: Interpreter, op: LiteralOp, args: tuple[Any, ...]):
        return (op.tensor(),)

    @impl(OperatorOp)
    def run_operator(self, interpreter: Interpreter, op: OperatorOp, args: tuple[Any, ...]):
        return call_torch(op, args)

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: tuple[Any, ...]):
        value = op.value
        if isinstance(value, IntegerAttr):
            width = value.type.width.data  # pyright: ignore
            return (bool(value.value.data) if width == 1 else int(value.value.data),)  # pyright: ignore
        if isinstance(value, FloatAttr):
            return (float(value.value.data),)  # pyright: ignore
        raise ZigguratError(f"unsupported constant {value}", op="arith.constant")


def _run_aten(self: InterpreterFunctions, interpreter: Interpreter, op: TorchOp,
              args: tuple[Any, ...]) -> tuple[Any, ...]:
    return call_torch(op, args)


class AtenFunctions(InterpreterFunctions):
    """One generic implementation registered for every generated ``torch.aten.*`` op."""


for _cls in ATEN_OPS:
    setattr(AtenFunctions, f"run_{_cls.__name__}", impl(_cls)(_run_aten))
register_impls(AtenFunctions)
