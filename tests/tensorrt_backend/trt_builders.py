"""Helpers for the TensorRT tests: build a ``trt`` function in Python and run it on the reference."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from xdsl.builder import ImplicitBuilder
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, SSAValue

from ziggurat.backends.tensorrt.reference_executor import run_trt_function
from ziggurat.dialects.trt import ConstantOp
from ziggurat.ir.literals import literal_attr
from ziggurat.ir.types import tensor_type_of

Body = Callable[..., SSAValue | Sequence[SSAValue]]


def build_function(arg_types: Sequence[Attribute], body: Body, name: str = "main") -> FuncOp:
    """A ``func.func`` whose body is ``body(*args)``'s ops, returning what it returns."""
    func = FuncOp(name, (list(arg_types), []))
    with ImplicitBuilder(func.body) as args:
        results = body(*args)
        if isinstance(results, SSAValue):
            results = [results]
        ReturnOp(*results)
    func.function_type = FunctionType.from_lists(list(arg_types), [r.type for r in results])
    ModuleOp([func]).verify()
    return func


def run_layers(inputs: Sequence[torch.Tensor], body: Body) -> list[torch.Tensor]:
    """Build a function over ``inputs``' types from ``body`` and run it on the reference executor."""
    func = build_function([tensor_type_of(t) for t in inputs], body)
    return run_trt_function(func, list(inputs))


def run_layer(inputs: Sequence[torch.Tensor], body: Body) -> torch.Tensor:
    (result,) = run_layers(inputs, body)
    return result


def constant(value: torch.Tensor, name: str = "weights") -> SSAValue:
    """A ``trt.constant`` holding ``value`` (inside an ImplicitBuilder)."""
    return ConstantOp(literal_attr(value, name), name=name).output
