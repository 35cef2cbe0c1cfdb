"""The executable of both TensorRT backends: ``@forward`` op by op, segment calls to runners.

Ops left to torch run in the reference interpreter; each ``func.call`` of a TensorRT
segment goes to its runner (the CPU reference executor, or an engine).  The segments are
found from the module itself (``func.func``s with ``ziggurat.backend = "tensorrt"``), so a
saved module rebuilds its executable from its IR and the payload alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp

from ziggurat.backends.fallback_errors import torch_op_error
from ziggurat.backends.tensorrt.partition_report import segment_functions
from ziggurat.backends.tensorrt.reference_executor import TrtFunctionRunner
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.ir_levels import IRLevels
from ziggurat.ir.signature import addresses_storage

SegmentRunner = Callable[[Sequence[torch.Tensor]], list[torch.Tensor]]


class SegmentedExecutable:
    """Runs the forward function op by op; calls of TensorRT segments go to ``runners``."""

    def __init__(self, module: ModuleOp, runners: dict[str, SegmentRunner], payload: bytes,
                 device: str = "cpu") -> None:
        from ziggurat.ir.interpreter import make_interpreter

        self.module = module
        self.runners = runners
        self.device = device
        self.payload = payload
        self.ir = IRLevels()
        self.ir.snapshot("trt", module)
        forward = [op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "forward"]
        if not forward:
            raise ZigguratError("the module has no @forward function", op="tensorrt")
        self.forward = forward[0]
        self._interpreter = make_interpreter(module)

    def serialize(self) -> bytes:
        """The payload ``compiled.save`` writes (see ``payload.py``)."""
        return self.payload

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        body = self.forward.body.blocks.first
        assert body is not None
        env: dict[Any, Any] = dict(zip(body.args, inputs, strict=True))
        # the overlap-free copy of a torch-run result, given to every op but one that addresses
        # storage (as_strided): that one reads the view's memory, as eager's does
        copies: dict[Any, Any] = {}
        for op in body.ops:
            source = env if addresses_storage(op) else copies
            args = tuple(source.get(v, env[v]) for v in op.operands)
            if isinstance(op, ReturnOp):
                return list(args)
            results: Sequence[Any]
            if isinstance(op, CallOp) and op.callee.string_value() in self.runners:
                results = self.runners[op.callee.string_value()](list(args))
            else:
                try:
                    results = self._interpreter.run_op(op, args)
                except ZigguratError:
                    raise
                except Exception as e:  # noqa: BLE001  (torch raising on call-time values: name the op)
                    raise torch_op_error(op, e) from None
                for value, result in zip(op.results, results, strict=True):
                    copy = _without_overlap(result)
                    if copy is not result:
                        copies[value] = copy
            env.update(zip(op.results, results, strict=True))
        raise ZigguratError("@forward does not end with func.return", op="tensorrt")


def _without_overlap(value: Any) -> Any:
    """A torch op's result whose elements share memory (``unfold``, ``expand``) as a copy: the
    graph's values are functional, and a later torch op given such a view (``slice_scatter``)
    keeps its strides, so one write lands on every element sharing it (fuzz seed 13, program
    8308: a clone of an ``unfold`` removed as a no-op, then a slice assignment).  torch cannot
    always tell (a ``diagonal`` is "too hard"); any doubt copies."""
    if isinstance(value, torch.Tensor) and torch._debug_has_internal_overlap(value) != 0:  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue, reportPrivateImportUsage]
        return value.clone(memory_format=torch.contiguous_format)
    return value


def reference_runners(module: ModuleOp) -> dict[str, SegmentRunner]:
    """Every segment of ``module`` on the CPU reference executor."""
    return {seg.sym_name.data: TrtFunctionRunner(seg) for seg in segment_functions(module)}
