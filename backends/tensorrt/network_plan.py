"""A TensorRT network as a list of API calls, before TensorRT is touched.

The emitter turns a ``trt`` function into a :class:`NetworkPlan`: network
inputs, one :class:`LayerCall` per layer (``INetworkDefinition`` method,
arguments, attributes to set, extra inputs, layer name, output tensor names)
and the outputs to mark.  Arguments are symbolic (:class:`TensorRef`,
:class:`EnumRef`, :class:`DataTypeRef`, :class:`Weights`), so the plan can be
inspected and tested anywhere; :func:`ziggurat.backends.tensorrt.emitter.populate_network`
replays it against the real ``tensorrt`` module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import torch

#: torch dtype -> TensorRT DataType member.
TRT_DATA_TYPES: dict[torch.dtype, str] = {
    torch.float32: "FLOAT",
    torch.float16: "HALF",
    torch.bfloat16: "BF16",
    torch.int32: "INT32",
    torch.int64: "INT64",
    torch.int8: "INT8",
    torch.bool: "BOOL",
}


@dataclass(frozen=True)
class TensorRef:
    """An ``ITensor`` of the network, by its (unique) name."""

    name: str


@dataclass(frozen=True)
class EnumRef:
    """A TensorRT enum member, e.g. ``EnumRef("ActivationType", "RELU")``."""

    enum: str
    member: str

    @staticmethod
    def of(enum: str, value: str) -> EnumRef:
        """From a ``trt`` dialect enum value (``kRELU`` -> ``RELU``)."""
        return EnumRef(enum, value[1:] if value.startswith("k") else value)

    def resolve(self, trt: ModuleType) -> Any:
        cls = getattr(trt, self.enum, None)
        if cls is None or not hasattr(cls, self.member):
            raise AttributeError(f"this TensorRT ({getattr(trt, '__version__', '?')}) has no {self.enum}.{self.member}")
        return getattr(cls, self.member)


@dataclass(frozen=True)
class DataTypeRef:
    """A ``tensorrt.DataType`` member (``FLOAT``, ``HALF``, ``BF16``, ``INT32``, ...)."""

    member: str

    @staticmethod
    def of(dtype: torch.dtype) -> DataTypeRef:
        try:
            return DataTypeRef(TRT_DATA_TYPES[dtype])
        except KeyError:
            raise TypeError(f"TensorRT has no data type for {dtype}") from None

    def resolve(self, trt: ModuleType) -> Any:
        return getattr(trt.DataType, self.member)


@dataclass(eq=False)
class Weights:
    """Build-time weights as the contiguous numpy array ``trt.Weights`` points into.

    The plan owns the arrays: TensorRT keeps only a pointer until the engine is
    built, so they must outlive ``build_serialized_network``.  bf16 has no numpy
    type and is held as its raw 16-bit words.
    """

    array: np.ndarray | None
    data_type: DataTypeRef | None = None

    @staticmethod
    def from_tensor(tensor: torch.Tensor) -> Weights:
        t = tensor.detach().to("cpu").contiguous()
        if t.dtype == torch.bfloat16:
            return Weights(t.view(torch.int16).numpy().copy(), DataTypeRef("BF16"))
        return Weights(np.ascontiguousarray(t.numpy()).copy(), DataTypeRef.of(t.dtype))

    @staticmethod
    def empty() -> Weights:
        return Weights(None)

    @property
    def count(self) -> int:
        return 0 if self.array is None else int(self.array.size)

    def resolve(self, trt: ModuleType) -> Any:
        if self.array is None:
            return trt.Weights()
        if self.data_type is not None and self.data_type.member == "BF16":
            return trt.Weights(self.data_type.resolve(trt), self.array.ctypes.data, self.count)
        return trt.Weights(self.array)


Arg = Any  # TensorRef | list[TensorRef] | EnumRef | DataTypeRef | Weights | tuple[int, ...] | int | float | bool | str


@dataclass
class LayerCall:
    """``layer = network.<method>(*args)``, then its name, attributes, inputs and output names."""

    method: str
    args: tuple[Arg, ...]
    name: str
    outputs: tuple[str, ...]
    attributes: tuple[tuple[str, Arg], ...] = ()
    set_inputs: tuple[tuple[int, TensorRef], ...] = ()
    #: the ``trt`` op this call came from (``trt.convolution``), for messages
    source_op: str = ""

    def attribute(self, key: str) -> Arg:
        for k, v in self.attributes:
            if k == key:
                return v
        raise KeyError(f"{self.method} '{self.name}' sets no attribute {key!r}")


@dataclass
class NetworkInput:
    name: str
    dtype: DataTypeRef
    shape: tuple[int, ...]


@dataclass
class ProfileShapes:
    """``IOptimizationProfile.set_shape(input, min, opt, max)`` for one input with dynamic dims."""

    input: str
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]


@dataclass
class NetworkPlan:
    inputs: list[NetworkInput] = field(default_factory=list[NetworkInput])
    layers: list[LayerCall] = field(default_factory=list[LayerCall])
    outputs: list[str] = field(default_factory=list[str])
    #: the optimization profile's shapes (empty: a static network)
    profile: list[ProfileShapes] = field(default_factory=list[ProfileShapes])

    def layer(self, name: str) -> LayerCall:
        for call in self.layers:
            if call.name == name:
                return call
        raise KeyError(f"no layer named {name!r}; layers: {[c.name for c in self.layers]}")

    def weights(self) -> list[Weights]:
        """Every weights array the plan owns."""
        return [a for call in self.layers for a in call.args if isinstance(a, Weights)]
