"""Tensor constants as attributes: small ones inline (``dense<...>``), weights as blobs."""

from __future__ import annotations

import numpy as np
import torch
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    TensorType,
)
from xdsl.ir import Attribute

from ziggurat.ir.resources import resource_attr, resource_tensor
from ziggurat.ir.types import dtype_of, shape_of, tensor_type_of

#: Constants with at most this many elements print inline, so IR tests can read them.
INLINE_LIMIT = 16

_BYTES_DTYPES = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.bool: torch.uint8}


def literal_attr(value: torch.Tensor, name_hint: str) -> DenseIntOrFPElementsAttr | DenseResourceAttr:
    """The attribute of a tensor constant: inline when small, a ``dense_resource`` blob else."""
    value = value.detach().to("cpu")
    if value.numel() <= INLINE_LIMIT and value.dtype not in (torch.bfloat16, torch.float16):
        ty = tensor_type_of(value)
        flat = value.reshape(-1)
        if value.dtype.is_floating_point:
            return DenseIntOrFPElementsAttr.from_list(ty, [float(v) for v in flat.tolist()])  # pyright: ignore
        return DenseIntOrFPElementsAttr.from_list(ty, [int(v) for v in flat.tolist()])  # pyright: ignore
    return resource_attr(value, name_hint)


def literal_tensor(attr: Attribute) -> torch.Tensor:
    """The tensor a literal attribute holds."""
    if isinstance(attr, DenseResourceAttr):
        return resource_tensor(attr)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        ty = attr.get_type()
        assert isinstance(ty, TensorType)
        dtype = dtype_of(ty)
        shape = shape_of(ty)
        values = attr.get_values()  # pyright: ignore[reportUnknownMemberType]
        result = torch.tensor(list(values), dtype=torch.float64 if dtype.is_floating_point else torch.int64)  # pyright: ignore
        n = int(np.prod(shape)) if shape else 1
        if result.numel() == 1 and n != 1:  # splat
            result = result.expand(n)
        return result.to(dtype).reshape(shape)
    raise TypeError(f"not a tensor literal attribute: {attr}")
