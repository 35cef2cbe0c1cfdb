"""Run a serialized TensorRT engine on CUDA tensors (``execute_async_v3``, tensor addresses by name).

    engine = TensorRTEngine(engine_bytes)
    outputs = engine(x.cuda(), y.cuda())
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ziggurat.backends.tensorrt.availability import import_tensorrt, require_cuda
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.types import fits_shape

_TORCH_DTYPES = {
    "FLOAT": torch.float32,
    "HALF": torch.float16,
    "BF16": torch.bfloat16,
    "INT32": torch.int32,
    "INT64": torch.int64,
    "INT8": torch.int8,
    "BOOL": torch.bool,
}


class EngineRuntimeError(ZigguratError):
    """An engine that cannot be loaded or run."""


@dataclass(frozen=True)
class IOTensor:
    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    is_input: bool


class TensorRTEngine:
    """A deserialized engine and one execution context."""

    def __init__(self, engine_bytes: bytes, *, log_severity: str = "WARNING") -> None:
        trt = import_tensorrt()
        require_cuda()
        self._trt = trt
        self._logger = trt.Logger(getattr(trt.Logger, log_severity))
        self._runtime = trt.Runtime(self._logger)
        self.engine: Any = self._runtime.deserialize_cuda_engine(engine_bytes)
        if self.engine is None:
            raise EngineRuntimeError("TensorRT could not deserialize the engine (built by another TensorRT version?)")
        self.context: Any = self.engine.create_execution_context()
        self.io = [self._io_tensor(self.engine.get_tensor_name(i)) for i in range(self.engine.num_io_tensors)]

    def _io_tensor(self, name: str) -> IOTensor:
        trt = self._trt
        dtype = self.engine.get_tensor_dtype(name)
        member = next((m for m in _TORCH_DTYPES if getattr(trt.DataType, m, None) == dtype), None)
        if member is None:
            raise EngineRuntimeError(f"engine tensor {name!r} has data type {dtype}, which torch cannot hold")
        return IOTensor(
            name=name,
            shape=tuple(self.engine.get_tensor_shape(name)),
            dtype=_TORCH_DTYPES[member],
            is_input=self.engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT,
        )

    @property
    def inputs(self) -> list[IOTensor]:
        return [t for t in self.io if t.is_input]

    @property
    def outputs(self) -> list[IOTensor]:
        return [t for t in self.io if not t.is_input]

    def __call__(self, *inputs: torch.Tensor) -> list[torch.Tensor]:
        return self.run(inputs)

    def run(self, inputs: Sequence[torch.Tensor], stream: torch.cuda.Stream | None = None) -> list[torch.Tensor]:
        specs = self.inputs
        if len(inputs) != len(specs):
            raise InputError(f"the engine takes {len(specs)} inputs, got {len(inputs)}", op="tensorrt engine")
        keep: list[torch.Tensor] = []
        for spec, value in zip(specs, inputs, strict=True):
            if not isinstance(value, torch.Tensor) or value.device.type != "cuda":
                raise InputError(f"input {spec.name!r} must be a CUDA tensor", op="tensorrt engine")
            if not fits_shape(value.shape, spec.shape) or value.dtype != spec.dtype:
                raise InputError(
                    f"input {spec.name!r} is {value.dtype}{list(value.shape)}, the engine takes "
                    f"{spec.dtype}{list(spec.shape)}",
                    op="tensorrt engine",
                )
            value = value.contiguous()
            keep.append(value)
            self.context.set_input_shape(spec.name, tuple(value.shape))  # -1 dims: the profile's range
            self.context.set_tensor_address(spec.name, value.data_ptr())
        device = keep[0].device if keep else torch.device("cuda")
        results: list[torch.Tensor] = []
        for spec in self.outputs:
            shape = tuple(self.context.get_tensor_shape(spec.name))  # resolved from the input shapes
            out = torch.empty(shape, dtype=spec.dtype, device=device)
            self.context.set_tensor_address(spec.name, out.data_ptr())
            results.append(out)
        stream = stream or torch.cuda.current_stream(device)
        if not self.context.execute_async_v3(stream.cuda_stream):
            raise EngineRuntimeError("execute_async_v3 failed (see the TensorRT log)")
        stream.synchronize()
        return results
